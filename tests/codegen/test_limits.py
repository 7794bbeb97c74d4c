"""The runtime's limits are defined once in C++; the generator's copies (codegen/limits.py) must
agree, or generated code would accept what the runtime refuses."""

import re
from pathlib import Path

import pytest
from structgen.codegen import limits

INCLUDE = Path(__file__).resolve().parents[2] / "csrc" / "include" / "structgen"


def _constant(header: str, name: str) -> int:
    text = (INCLUDE / header).read_text()
    found = re.search(rf"constexpr\s+\w+\s+{name}\s*=\s*(\d+)\s*;", text)
    assert found, f"{name} is not defined in structgen/{header}"
    return int(found.group(1))


@pytest.mark.parametrize(
    "python, header, constant, offset",
    [
        ("MAX_POINTWISE_TENSORS", "cpu/rows.h", "kMaxOperands", -1),  # the output is an operand
        ("GRAIN_SIZE", "cpu/rows.h", "kGrainSize", 0),
    ],
)
def test_limits_agree_with_the_runtime(python, header, constant, offset):
    assert getattr(limits, python) == _constant(header, constant) + offset
