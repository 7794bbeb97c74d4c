"""The conformance suite must be able to fail: each planted bug is caught by the check meant for it.

The suite is generated from tests/mutation/native_functions.yaml exactly as the real one is from
the repository's manifest; the kernels (mutants.py) are torch.add with one defect each.
"""

import importlib.util
from pathlib import Path

import pytest

from codegen.gen import generate_tests
from codegen.manifest import load_manifest

from . import mutants

HERE = Path(__file__).parent
CHECKS_THAT_MUST_PASS = ("reference", "meta", "variants", "out_rules", "inplace_rules")

# mutant -> the checks that must fail on it
PLANTED = {
    "bad_broadcast": ("meta", "property"),  # wrong broadcast in the meta function
    "off_by_one": ("reference",),  # an off-by-one kernel
    "no_dtype_check": ("inplace_rules",),  # a missing dtype check (int self += float)
    "no_resize": ("variants", "out_rules"),  # an out= that ignores resize
}


@pytest.fixture(scope="module")
def suites(tmp_path_factory):
    mutants.register()
    out = tmp_path_factory.mktemp("mutation_suite")
    generate_tests(load_manifest(HERE / "native_functions.yaml"), out, namespace=mutants.NAMESPACE)
    modules = {}
    for path in out.glob("test_*.py"):
        spec = importlib.util.spec_from_file_location(f"mutation_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        modules[path.stem.removeprefix("test_").split("_Tensor")[0]] = module
    return modules


@pytest.mark.parametrize("check", CHECKS_THAT_MUST_PASS)
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_correct_op_passes(suites, check, dtype):
    getattr(suites["good"], f"test_{check}")("cpu", dtype)


@pytest.mark.parametrize("mutant, check", [(m, c) for m, checks in PLANTED.items() for c in checks])
def test_planted_bug_is_caught(suites, mutant, check):
    with pytest.raises((AssertionError, pytest.fail.Exception)):
        getattr(suites[mutant], f"test_{check}")("cpu", "int64" if mutant == "no_dtype_check" else "float32")
