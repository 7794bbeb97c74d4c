"""What a formula's C++ evaluates: `and`/`or` as & and | (both sides, which gcc vectorises) except
where the right side divides integers, whose division by zero raises on the CPU (pw::floor_div)
and must not be evaluated where the left side already decides, as in Python."""

import pytest
from structgen.codegen.model.pointwise import Operand
from structgen.codegen.pointwise.lower import lower_formula
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


def test_complex_values_are_ordered_by_their_real_parts_only():
    """real(), imag() and abs() are numbers whose imaginary part is 0 (as literals are): an op that
    computes in a complex type orders them by pw::real_of, and refuses to order anything else."""
    formula = parse_formula("where(real(self) < abs(other) + 1, imag(self), -real(other))")
    code = lower_formula(formula, OPERANDS, ("floating", "complex")).expr
    assert "(pw::real_of(pw::real(self)) < pw::real_of(T(pw::abs(other) + T(1))))" in code, code
    real_only = lower_formula(formula, OPERANDS, ("floating",)).expr
    assert "(pw::real(self) < T(pw::abs(other) + T(1)))" in real_only, real_only  # as before: no helper
    with pytest.raises(Exception, match="'real\\(self\\) < other' orders complex values"):
        lower_formula(parse_formula("where(real(self) < other, self, other)"), OPERANDS, ("complex",))
