"""The house rules the suite enforces: ruff (lint, 110 columns) and its formatter over every
Python file, clang-format (.clang-format: 110 columns) over every hand-written C++ and CUDA file,
and a line budget per source file, so that no module quietly becomes the place everything goes.
A file over its budget is split, or its budget raised here with the reason."""

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("*.py", "*.cpp", "*.h", "*.cu", "*.cuh", "*.j2")
BUDGET = 700  # lines
# Files allowed more, with why.
LARGER = {
    "tests/fuzz/test_call_fuzz.py": (
        950,
        "the call fuzzer's generators and its table of classified differences",
    ),
    "python/structgen/conformance/checks.py": (
        905,
        "every conformance check, one function each (random ops: their own-bits CUDA comparisons)",
    ),
    "python/structgen/conformance/hostile.py": (720, "hostile samples, their judge, a run per variant"),
    "python/structgen/vmap_plan.py": (800, "every batching plan (11 kinds) with its describe() proof"),
    "tests/codegen/test_rule_errors.py": (720, "every meta: rule error message, one case each, by key"),
}


def _ruff(*args: str) -> subprocess.CompletedProcess:
    if importlib.util.find_spec("ruff") is None:  # a preinstalled Python (STRUCTOPS_PYTHON), no network
        pytest.skip("ruff is not installed in this Python; tools/setup.sh installs it")
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


def test_ruff_check():
    result = _ruff("check", "--output-format", "concise", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format():
    result = _ruff("format", "--check", ".")
    assert result.returncode == 0, "run `ruff format .`:\n" + result.stdout + result.stderr


def test_clang_format():
    """Generated C++ (the goldens) is the templates' layout, not formatted."""
    clang_format = shutil.which("clang-format", path=str(Path(sys.executable).parent))
    if clang_format is None:  # a preinstalled Python (STRUCTOPS_PYTHON), no network
        pytest.skip("clang-format is not installed beside this Python; tools/setup.sh installs it")
    cpp = [f for f in _tracked_sources() if not f.endswith((".py", ".j2"))]
    result = subprocess.run(
        [clang_format, "--dry-run", "--Werror", *cpp], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, "run `.venv/bin/clang-format -i FILE`:\n" + result.stderr[-4000:]


def _tracked_sources() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", *SOURCES], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if listed.returncode != 0:
        pytest.skip("not a git checkout: the line budget covers tracked files")
    return [f for f in listed.stdout.split() if not f.startswith("tests/codegen/golden/")]


def test_line_budget():
    over = []
    for name in _tracked_sources():
        path = ROOT / name
        if not path.exists():
            continue  # deleted in the working tree
        lines = path.read_text(errors="replace").count("\n")
        budget = LARGER.get(name, (BUDGET, ""))[0]
        if lines > budget:
            over.append(f"{name}: {lines} lines (budget {budget})")
    assert not over, (
        "split these files, or raise their budget in tests/test_lint.py with the reason:\n" + "\n".join(over)
    )


def test_larger_budgets_are_still_needed():
    for name in LARGER:
        path = ROOT / name
        assert path.exists(), f"{name} has a budget in tests/test_lint.py but no longer exists"
        lines = path.read_text().count("\n")
        assert lines > BUDGET, (
            f"{name} has {lines} lines: drop its entry from LARGER (the default budget fits)"
        )
