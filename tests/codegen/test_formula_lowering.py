"""What a formula's C++ evaluates: `and`/`or` as & and | (both sides, which gcc vectorises) except
where the right side divides integers, whose division by zero raises on the CPU (pw::floor_div)
and must not be evaluated where the left side already decides, as in Python."""

import pytest
from structgen.codegen.pointwise.lower import Operand, lower_formula
from structgen.codegen.pointwise.syntax import parse_formula

OPERANDS = (Operand("self", "tensor", "self"), Operand("other", "tensor", "other"))


@pytest.mark.parametrize(
    "formula, operator",
    [
        ("self and other", " & "),
        ("self or other", " | "),
        ("self > 0 and other < 2", " & "),
        ("other != 0 and self // other > 1", " && "),
        ("other == 0 or self % other == 1", " || "),
        ("other == 0 or trunc_div(self, other) == 1", " || "),
    ],
)
def test_and_or_short_circuit_only_before_a_division(formula, operator):
    code = lower_formula(parse_formula(formula), OPERANDS, ("integral",)).expr
    assert operator in code, code
    assert ("&&" in code or "||" in code) == (operator.strip() in ("&&", "||")), code
