"""The conformance suite must be able to fail: each planted bug is caught by the check meant for it.

The specs come from tests/mutation/native_functions.yaml exactly as the real suite's come from the
repository's manifest; the kernels (mutants.py) are torch.add with one defect each.
"""

from pathlib import Path

import pytest
from structgen.conformance.checks import CHECKS
from structgen.conformance.spec import load_specs

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
def specs():
    mutants.register()
    return {
        spec.name.removesuffix("_Tensor"): spec
        for spec in load_specs(HERE / "native_functions.yaml", mutants.NAMESPACE)
    }


@pytest.mark.parametrize("check", CHECKS_THAT_MUST_PASS)
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_correct_op_passes(specs, check, dtype):
    CHECKS[check].run(specs["good"], "cpu", dtype)


@pytest.mark.parametrize("mutant, check", [(m, c) for m, checks in PLANTED.items() for c in checks])
def test_planted_bug_is_caught(specs, mutant, check):
    with pytest.raises((AssertionError, pytest.fail.Exception)):
        CHECKS[check].run(specs[mutant], "cpu", "int64" if mutant == "no_dtype_check" else "float32")


# A hand-written op with no tests.dtypes and no tests.samples: checked on every dtype its rule
# allows, on inputs drawn from its rule (structgen/conformance/drawn.py), ranks 0 to 5.
DRAWN = {
    "flip_dtype_gap": ("reference", (NotImplementedError,)),  # a kernel without integer dtypes
    "flip_rank4": ("property", (AssertionError,)),  # a bug only rank >= 4 inputs show
}


@pytest.mark.parametrize("check", ["reference", "meta", "variants", "property"])
def test_a_correct_new_op_passes_on_every_dtype(specs, check):
    spec = specs["flip_good"]
    assert len(spec.dtypes) >= 10, f"default dtypes: {spec.dtypes}"
    for dtype in spec.dtypes:
        CHECKS[check].run(spec, "cpu", dtype)


@pytest.mark.parametrize("mutant", DRAWN)
def test_a_new_op_gets_tests_that_catch(specs, mutant):
    check, errors = DRAWN[mutant]
    spec = specs[mutant]
    caught = []
    for dtype in spec.dtypes:
        try:
            CHECKS[check].run(spec, "cpu", dtype)
        except (*errors, pytest.fail.Exception):
            caught.append(dtype)
    assert caught, f"the planted bug in {mutant} passed '{check}' on {spec.dtypes}"
