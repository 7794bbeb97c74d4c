"""The hostile check must be able to fail: kernels that pass the reference check on benign samples
and give wrong numbers on the values models produce are caught, and their correct twins pass."""

from pathlib import Path

import pytest
from structgen.conformance.checks import CHECKS
from structgen.conformance.spec import load_specs

from . import mutants

HERE = Path(__file__).parent

# mutant -> (its correct twin, the dtypes that show the planted bug, a sample the failure names).
# In float64 log_softmax_unshifted's error stays within what rounding the inputs (1e8 + x) already
# moves the result by, which the check allows; mul_rounded's bfloat16 rounding of the number stays
# within the check's 2 ulps (one rounding of the number, one of the product): float16's range
# shows it.
PLANTED = {
    "log_softmax_unshifted": ("log_softmax_good", ("float32",), r"\[offset [+-]1e\+08; "),
    "mul_rounded": ("mul_good", ("float16",), r"\[other a 0-dim float64 100000.0; "),
}


@pytest.fixture(scope="module")
def specs():
    mutants.register()
    return {spec.name: spec for spec in load_specs(HERE / "native_functions.yaml", mutants.NAMESPACE)}


@pytest.mark.parametrize("mutant", PLANTED)
def test_benign_samples_pass_the_planted_bug(specs, mutant):
    _, dtypes, _ = PLANTED[mutant]
    for dtype in dtypes:
        CHECKS["reference"].run(specs[mutant], "cpu", dtype)


@pytest.mark.parametrize("mutant", PLANTED)
def test_hostile_values_catch_it(specs, mutant):
    _, dtypes, shown = PLANTED[mutant]
    for dtype in dtypes:
        with pytest.raises(AssertionError, match=shown):
            CHECKS["hostile"].run(specs[mutant], "cpu", dtype)


@pytest.mark.parametrize("twin", sorted({twin for twin, _, _ in PLANTED.values()}))
def test_the_correct_twin_passes(specs, twin):
    for dtype in specs[twin].dtypes:
        CHECKS["hostile"].run(specs[twin], "cpu", dtype)
