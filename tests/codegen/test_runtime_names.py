"""The generator and the runtime every generated package is built on name no project (issue 57):
an outside project gets nothing of the repository's own. The repository's project (its name read
from native_functions.yaml's header) may appear in its manifest, its ops, its package, its tests
and docs, never in these files."""

import re
import subprocess
from pathlib import Path

from structgen.codegen.load import read_manifest_entries
from structgen.codegen.project import parse_project

ROOT = Path(__file__).resolve().parents[2]

# What every project builds on, the structgen distribution (pyproject.toml's wheel.packages): the
# generator (its templates too), the CMake function, the C++ runtime (headers, sources, the Python
# module of C entries, the CPU emulator of CUDA that each project's <target>_cuda_emu compiles),
# the Python runtime, and the distribution's own build files.
GENERATOR_AND_RUNTIME = ("codegen", "cmake", "csrc", "python/structgen", "pyproject.toml", "CMakeLists.txt")


def _files() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", *GENERATOR_AND_RUNTIME],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [f for f in listed if (ROOT / f).is_file()]


def test_the_generator_and_runtime_name_no_project():
    header = read_manifest_entries(ROOT / "structops" / "native_functions.yaml")[0]
    project = parse_project("native_functions.yaml", header).name
    word = re.compile(re.escape(project), re.IGNORECASE)
    files = _files()
    assert len(files) > 100, files  # the list above names the folders that exist
    hits = [
        f"{f}:{n}: {line.strip()}"
        for f in files
        for n, line in enumerate((ROOT / f).read_text(errors="replace").splitlines(), 1)
        if word.search(line)
    ]
    assert hits == [], f"'{project}' in the generator or runtime:\n" + "\n".join(hits)
