"""structops is typed: the package ships py.typed, and the generated stubs (structops/_ops.pyi)
give each op its schema's types (numbers as int | float | bool | complex, Tensor | None for
optionals, one typing.overload per overload). mypy accepts ordinary calls and names wrong ones."""

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import structops

GOOD = """
import torch
import structops

x = torch.ones(2, 3)
a: torch.Tensor = structops.add(x, x, alpha=2.0)
b: torch.Tensor = structops.div(x, x, rounding_mode="floor")
c: torch.Tensor = structops.pow(x, 2)
d: torch.Tensor = structops.pow(x, x)
out, mean, rstd = structops.native_layer_norm(x, [3], None, None, 1e-5)
s: torch.Tensor = structops.sum(x, [0], keepdim=True, dtype=torch.float64)
t: torch.Tensor = structops.clamp(x, -1, 2.5)
u: torch.Tensor = structops.cat([x, x], 1, out=torch.empty(2, 6))
v: list[torch.Tensor] = structops.split_with_sizes_copy(x, [1, 2], 1)
w: torch.Tensor = structops.sub(1.0, x)
y: torch.Tensor = structops.norm(x, "fro", [0, 1])
z: torch.Tensor = structops.cdist(x, x, compute_mode="use_mm_for_euclid_dist")
normed: torch.Tensor = structops.layer_norm(x, [3])
loss: torch.Tensor = structops.nn.functional.cross_entropy(x, torch.tensor([0, 2]), reduction="sum")
with structops.patch() as routed:
    share: float = routed.share
"""
BAD = {
    'structops.add(x, "two")': 'No overload variant of "add" matches argument types "Tensor", "str"',
    "structops.div(x, x, rounding_mode=3)": 'No overload variant of "div" matches',
    "n: int = structops.sum(x, [0])": 'expression has type "Tensor", variable has type "int"',
    "structops.native_layer_norm(x, [3], eps=1)": "",  # an int is a float: accepted
    "structops.eq(2, x)": 'No overload variant of "eq" matches argument types "int", "Tensor"',
    "structops.add(2, 3)": 'No overload variant of "add" matches argument types "int", "int"',
    "stats: tuple[torch.Tensor, ...] = structops.layer_norm(x, [3])": (
        'expression has type "Tensor", variable has type "tuple[Tensor, ...]"'
    ),
    "structops.nn.functional.relu(x, inplace=1.5)": 'incompatible type "float"',
}


def _mypy(tmp_path: Path, code: str) -> subprocess.CompletedProcess:
    """mypy on ``code`` against the package as a wheel lays it out (its Python files, py.typed
    and the generated stub), found through MYPYPATH: the editable install's import hook is
    invisible to mypy."""
    if importlib.util.find_spec("mypy") is None:  # a preinstalled Python (STRUCTOPS_PYTHON), no network
        pytest.skip("mypy is not installed in this Python; tools/setup.sh installs it")
    package = tmp_path / "structops"
    shutil.copytree(Path(structops.__file__).parent, package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(Path(importlib.util.find_spec("structops._ops").origin).with_suffix(".pyi"), package)
    (tmp_path / "example.py").write_text(code)
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", "--no-error-summary", "example.py"],
        cwd=tmp_path,
        env={"MYPYPATH": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_package_is_typed():
    assert (Path(structops.__file__).parent / "py.typed").exists()


def test_mypy_accepts_ordinary_calls_and_names_wrong_ones(tmp_path):
    annotated = re.compile(r"\w+: ")  # its own assignment
    bad = "\n".join(line if annotated.match(line) else f"e{i} = {line}" for i, line in enumerate(BAD))
    result = _mypy(tmp_path, GOOD + bad + "\n")
    lines = GOOD.count("\n")
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    for i, (call, expected) in enumerate(BAD.items()):
        at = f"example.py:{lines + 1 + i}:"
        found = [e for e in errors if e.startswith(at)]
        if expected:
            assert any(expected in e for e in found), (
                f"{call}: mypy said {found or 'nothing'}\n{result.stdout}"
            )
        else:
            assert not found, f"{call}: {found}"
    assert all(int(e.split(":")[1]) > lines for e in errors), "mypy refused a good call:\n" + result.stdout


def test_mypy_finds_the_ops_in_the_readme_install(tmp_path):
    """The README's install (an editable one) as it is, no MYPYPATH: mypy follows its .pth path to
    the package's sources, where the build puts the generated stub."""
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed in this Python; tools/setup.sh installs it")
    (tmp_path / "example.py").write_text("import torch\nimport structops\nreveal_type(structops.add)\n")
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--follow-imports=silent", "--no-error-summary", "example.py"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert "has no attribute" not in proc.stdout and "Overload(" in proc.stdout, proc.stdout
