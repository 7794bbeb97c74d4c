"""Every check of every structured op in native_functions.yaml, per device and dtype.

    pytest tests/conformance -k add_Tensor               # one op's suite
    pytest tests/conformance -k "reference and float16"  # one check, one dtype, every op

IDs read op-check-device-dtype: test_conformance[add_Tensor-reference-cpu-float32].
"""

import pytest

from tests.conformance.checks import cases
from tests.conformance.spec import load_specs


@pytest.mark.parametrize("check, spec, device, dtype", cases(load_specs()))
def test_conformance(check, spec, device, dtype):
    check.run(spec, device, dtype)
