"""`structgen new-project`: the project it creates builds and passes its own test and the
generated conformance suite with the two commands its README gives, as created, anywhere: it
needs the installed structgen (its console script, CMake package and pytest plugin), not this
checkout (about 2 minutes on 2 cores: the runtime compiles into each project's extension)."""

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# It builds or starts processes of its own: under xdist its tests run one after another in one
# worker, with the other such files (tools/test.sh).
pytestmark = pytest.mark.xdist_group("own_processes")


def _in(cwd: Path, env: dict, *command: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=1200, check=False
    )


def test_a_new_project_builds_and_passes_its_test_with_its_readme_commands(tmp_path):
    project = tmp_path / "myops"
    made = subprocess.run(
        [str(Path(sys.executable).with_name("structgen")), "new-project", str(project), "--name", "myops"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    assert str(ROOT) not in "".join(p.read_text() for p in project.rglob("*") if p.is_file())
    readme = (project / "README.md").read_text()
    commands = re.search(r"```bash\n(.*?)```", readme, re.DOTALL)[1].strip().splitlines()
    assert len(commands) == 2, commands
    # `python`, `cmake` and `ninja` are the test environment's (tools/setup.sh installs them).
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
    for command in commands:
        proc = _in(project, env, "bash", "-c", command)
        assert proc.returncode == 0, f"{command}\n{proc.stdout[-4000:]}\n{proc.stderr[-3000:]}"
    # Its own test and the generator's conformance suite on its op, every case passing.
    summary = proc.stdout.strip().splitlines()[-1]
    assert "failed" not in summary and "error" not in summary, proc.stdout[-4000:]
    assert int(re.search(r"(\d+) passed", summary)[1]) > 20, summary

    # Its pyproject: a wheel of the package, library included, that imports and runs from where
    # it is installed.
    wheel = _in(
        project,
        env,
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--no-build-isolation",
        "--no-deps",
        "-w",
        "dist",
        ".",
    )
    assert wheel.returncode == 0, wheel.stdout[-3000:] + wheel.stderr[-3000:]
    (built,) = (project / "dist").glob("myops-0.1.0-*.whl")
    with zipfile.ZipFile(built) as z:
        assert {"myops/__init__.py", "myops/_ops.py", "myops/_rules.py", "myops/libmyops.so"} <= set(
            z.namelist()
        )
        z.extractall(tmp_path / "site")
    code = "import torch, myops; print(myops.myops_softclip(torch.tensor([0.5])).item())"
    ran = _in(tmp_path, {**env, "PYTHONPATH": str(tmp_path / "site")}, sys.executable, "-c", code)
    assert ran.returncode == 0 and abs(float(ran.stdout) - 0.46211715) < 1e-6, ran.stderr


def test_new_project_refuses_a_bad_name_or_a_folder_with_files(tmp_path):
    for name in ("My-Ops", "class", "structgen", "torch"):  # structgen: the runtime's package
        proc = subprocess.run(
            [sys.executable, "-m", "structgen.codegen", "new-project", str(tmp_path / "p"), "--name", name],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 2 and "cannot name a project" in proc.stderr, proc.stderr
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    proc = subprocess.run(
        [sys.executable, "-m", "structgen.codegen", "new-project", str(tmp_path / "full"), "--name", "ok"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2 and "holds files already" in proc.stderr
    assert not (tmp_path / "p").exists()


def test_the_plugin_leaves_other_test_runs_alone(tmp_path):
    """structgen's pytest plugin is loaded wherever structgen is installed: a test run that does
    not collect the suite neither reads a native_functions.yaml at its rootdir that is not
    structgen's nor imports torch."""
    (tmp_path / "native_functions.yaml").write_text("- func: not a structgen manifest\n  broken: [\n")
    (tmp_path / "test_other.py").write_text(
        "import sys\n\n\ndef test_other():\n    assert 'torch' not in sys.modules\n"
    )
    proc = _in(
        tmp_path,
        {**os.environ},
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "test_other.py",
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
