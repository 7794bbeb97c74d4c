"""A pointwise formula printed as Python over torch: the reference a generated kernel is checked
against (the conformance suite evaluates it with the helpers of structgen/conformance/formula.py
in scope as ``pw``, which give each function and operator of the language its torch meaning).

Operators Python and torch share (arithmetic, comparisons) print as they are; the rest (and/or/
not on tensors, where, select, the functions) print as ``pw.<name>(...)``.
"""

from __future__ import annotations

from structgen.codegen.model.formula import Bin, Call, Lit, Node, Un, Var

_HELPER_OPS = {"and": "logical_and", "or": "logical_or", "//": "floor_div", "%": "remainder"}
_HELPER_UNARY = {"not": "logical_not", "~": "invert"}


def python(n: Node) -> str:
    if isinstance(n, Lit):
        return repr(n.value)
    if isinstance(n, Var):
        return n.name
    if isinstance(n, Un):
        if n.op in _HELPER_UNARY:
            return f"pw.{_HELPER_UNARY[n.op]}({python(n.operand)})"
        return f"({n.op}{python(n.operand)})"
    if isinstance(n, Bin):
        if n.op in _HELPER_OPS:
            return f"pw.{_HELPER_OPS[n.op]}({python(n.lhs)}, {python(n.rhs)})"
        return f"({python(n.lhs)} {n.op} {python(n.rhs)})"
    assert isinstance(n, Call)
    return f"pw.{n.fn}({', '.join(python(a) for a in n.args)})"
