"""examples/minimal, an outside project (its own manifest, namespace and package), built against
the installed generator with its CMake function (cmake/generated_extension.cmake), and loaded
in one process with structops: both sets of operators work, each library with its own runtime.

The build goes to build/examples/minimal (configured once, then incremental: ~2 min the first
time on 2 cores, seconds after)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "minimal"
BUILD = ROOT / "build" / "examples" / "minimal"
PACKAGE = BUILD / "example_ops_generated" / "python"
# It builds or starts processes of its own: under xdist its tests run one after another in one
# worker, with the other such files (tools/test.sh).
pytestmark = pytest.mark.xdist_group("own_processes")


def _readme_commands() -> list[str]:
    """The two commands of the example's README, as written, run with this test's interpreter
    (the README's is tools/setup.sh's .venv)."""
    readme = (EXAMPLE / "README.md").read_text()
    commands = re.search(r"```bash\n(.*?)```", readme, re.DOTALL)[1].strip().splitlines()
    assert len(commands) == 2, commands
    return [c.replace(".venv/bin/python", sys.executable) for c in commands]


def _readme_command(index: int) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}  # its cmake, ninja
    return subprocess.run(
        ["bash", "-c", _readme_commands()[index]],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )


@pytest.fixture(scope="module")
def built():
    """The README's first command: configure, build, and call an op of the example."""
    proc = _readme_command(0)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-3000:]
    assert "tensor([[1.5000, 1.5000, 1.5000, 1.5000]," in proc.stdout, proc.stdout[-2000:]
    return PACKAGE


def _run(package: Path, code: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONPATH": f"{package}:{ROOT}", "PATH": "/usr/bin:/bin", "HOME": str(BUILD)},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-5000:]
    return proc.stdout


def test_both_packages_work_in_one_process(built):
    out = _run(
        built,
        """
import torch, structops, example_ops
torch.manual_seed(0)
x = torch.randn(3, 4, dtype=torch.float64, requires_grad=True)
w = torch.randn(4, 5, dtype=torch.float64, requires_grad=True)
y = example_ops.scaled_mm(x, w, 2.0)
torch.testing.assert_close(y, 2 * x @ w)
assert torch.autograd.gradcheck(lambda a, b: example_ops.scaled_mm(a, b, 0.5), (x, w))
t = torch.tensor([-10.0, -0.0, 0.5, 10.0])
torch.testing.assert_close(example_ops.softclip(t, limit=2.5), 2.5 * torch.tanh(t / 2.5))
u = t.clone(); example_ops.softclip_(u); torch.testing.assert_close(u, torch.tanh(t))
s = torch.randn(6, dtype=torch.float64, requires_grad=True)
assert torch.autograd.gradcheck(lambda v: example_ops.softclip(v, limit=2.0), (s,))
meta = example_ops.scaled_mm(torch.empty(3, 4, device="meta"), torch.empty(4, 6, device="meta"))
assert meta.shape == (3, 6) and meta.device.type == "meta"
try:
    example_ops.scaled_mm(torch.ones(3, 4), torch.ones(5, 6))
    raise AssertionError("no error")
except RuntimeError as e:
    assert "self.size(1)=4 must equal mat2.size(0)=5" in str(e), e
for op in (torch.ops.example_ops.scaled_mm.default, torch.ops.example_ops.softclip.default):
    args = (torch.randn(3, 4), torch.randn(4, 2)) if "scaled" in str(op) else (torch.randn(5),)
    torch.library.opcheck(op, args)
# fullgraph: each package's C entries are registered with Dynamo (structgen._dispatch), else a break
both = lambda a, b: example_ops.softclip(example_ops.scaled_mm(a, b)) + structops.add(a @ b, 1)
compiled = torch.compile(both, fullgraph=True)
a, b = torch.randn(3, 4), torch.randn(4, 2)
torch.testing.assert_close(compiled(a, b), torch.tanh(a @ b) + a @ b + 1, rtol=1e-5, atol=1e-5)
torch.testing.assert_close(structops.add(torch.ones(2), torch.ones(2), alpha=2), torch.full((2,), 3.0))
import pickle  # each package's functions belong to it, and pickle by its name, as torch.add does
for package, f in ((example_ops, example_ops.softclip), (structops, structops.add)):
    assert f.__module__ == package.__name__ and pickle.loads(pickle.dumps(f)) is f, (f, f.__module__)
print("ok", sorted(example_ops.__all__))
""",
    )
    assert out.split("\n")[-2] == "ok ['scaled_mm', 'softclip', 'softclip_']"


def test_the_generated_suite_passes_on_the_example(built):
    """The README's second command: the conformance suite of the installed generator (structgen's
    pytest plugin, --manifest) on the example's manifest, every check of both ops, the emulated
    CUDA path of softclip included."""
    proc = _readme_command(1)
    summary = proc.stdout.strip().splitlines()[-1]
    assert proc.returncode == 0, proc.stdout[-6000:]
    assert int(re.search(r"(\d+) passed", summary)[1]) >= 90, summary  # 92 of 115 on a CPU machine


def test_the_runtime_serves_each_package_by_its_namespace(built):
    """describe(), sharding, vmap and DTensor strategies for the example's ops next to
    structops' (packages.serve): each package's rules found through its namespace."""
    out = _run(
        built,
        """
import torch, structops, example_ops
from structgen import packages, sharding
print(sorted(p.namespace for p in packages.served()))
a, b = torch.randn(6, 4, dtype=torch.float64), torch.randn(4, 5, dtype=torch.float64)
d = structops.describe("example_ops::scaled_mm", a, b, 2.0)
print([(x.name, x.size, x.kind) for x in d.index_space])
got = sharding.run_sharded("example_ops::scaled_mm", a, b, 2.0, splits={"n": 2, "m": 3})
torch.testing.assert_close(got, 2.0 * a @ b)
x = torch.randn(3, 6, 4, dtype=torch.float64)
torch.testing.assert_close(torch.func.vmap(example_ops.scaled_mm, (0, None))(x, b), x @ b)
torch.testing.assert_close(torch.func.vmap(example_ops.softclip)(x), torch.tanh(x))
import torch.distributed.tensor
from torch.distributed.tensor import DTensor
funcs = DTensor._op_dispatcher.sharding_propagator.op_strategy_funcs
print(torch.ops.example_ops.scaled_mm.default in funcs, torch.ops.structops.mm.default in funcs)
try:
    structops.describe("nope::mm", a, b)
except ValueError as e:
    print(e)
""",
    )
    lines = out.splitlines()
    assert lines[0] == "['example_ops', 'structops']"
    assert lines[1] == "[('n', 6, 'parallel'), ('m', 5, 'parallel')]"
    assert lines[2] == "True True"
    assert (
        lines[3] == "'nope::mm': no package with namespace 'nope' is loaded; loaded: structops, example_ops"
    )


def test_each_library_binds_its_own_runtime(built):
    """The runtime is compiled into each extension and its symbols bound inside it (-Bsymbolic):
    the project names it takes from the generated code (autotune cache, environment prefix,
    package) are each library's own."""
    out = _run(
        built,
        """
import ctypes, structops, example_ops
from pathlib import Path
for path in (structops.ops_library, Path(example_ops.__file__).with_name("libexample_ops.so")):
    library = ctypes.CDLL(str(path))
    for symbol in ("18project_cache_name", "18project_env_prefix", "15project_package"):
        f = getattr(library, f"_ZN9structgen8autotune{symbol}Ev")
        f.restype = ctypes.c_char_p
        print(f().decode())
""",
    )
    assert out.split() == ["structops", "STRUCTOPS", "structops", "example_ops", "EXAMPLE_OPS", "example_ops"]
