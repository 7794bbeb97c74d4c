"""Every check of every structured op of the package under test, per device and dtype.

    python -m pytest --pyargs structgen.conformance --manifest native_functions.yaml -k add_Tensor
    python -m pytest --pyargs structgen.conformance -k "reference and float16"  # one check, one dtype

IDs read op-check-device-dtype: test_conformance[add_Tensor-reference-cpu-float32]. A project's
own test module holds the suite by importing this function (pytest collects it there).
"""

import pytest

from structgen.conformance.checks import cases
from structgen.conformance.spec import load_specs
from structgen.conformance.tensors import seeded_calls


@pytest.mark.parametrize("check, spec, device, dtype", cases(load_specs()))
def test_conformance(check, spec, device, dtype):
    with seeded_calls(spec.seeded):
        check.run(spec, device, dtype)
