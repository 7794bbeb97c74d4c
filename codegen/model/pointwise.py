"""A pointwise op's kernel as the model holds it: the formula lowered to one C++ expression, the
operands it reads, the host-decided conditions, and the dtypes it is instantiated for. Data only:
pointwise/lower.py builds a Lowered, pointwise/model.py the PointwiseKernel; dest/ prints them.
"""

from __future__ import annotations

from dataclasses import dataclass

from structgen.codegen.model.formula import Node


@dataclass(frozen=True)
class HostCondition:
    """``approximate == "tanh"``: a bool the host decides once per call (the launcher makes it the
    functor's compile-time `case_`)."""

    field: str
    arg: str
    value: str | None
    optional: bool  # the argument is str?


@dataclass(frozen=True)
class Lowered:
    expr: str
    tensors: tuple[tuple[str, str], ...]  # (argument, "T" | "bool") in schema order
    scalars: tuple[str, ...]  # Scalar arguments used: fields of type T
    optional_scalars: tuple[str, ...]  # Scalar? arguments used: has_<x> + <x>
    conditions: tuple[HostCondition, ...]
    # The value is one of the promoted tensor inputs, its negation or its absolute value, chosen by
    # bool tensors (where(c, a, -b)): only a sign bit changes, so the kernel computes it exactly in
    # the storage dtype, with no round trip through opmath (bfloat16 `where` ran at 0.70x torch
    # converting every element to float and back, float16 `neg` 0.45x).
    in_storage: bool = False
    # C++ checks of the arguments alone (accepted str values, clamp's bound): the generated meta
    # function runs them, so fake tensors raise them too. They report through its `op`.
    checks: tuple[str, ...] = ()


@dataclass(frozen=True)
class Operand:
    """A formula argument: kind is tensor (promoted), bool_tensor, scalar, scalar?, str, str?."""

    name: str
    kind: str
    cpp: str
    default: str | None = None


@dataclass(frozen=True)
class PointwiseKernel:
    formula: str
    line: int
    lowered: Lowered
    dtypes: tuple[str, ...]  # common dtypes the kernels are instantiated for
    # The dtype rule as torch's elementwise promotion reads it (what Inductor's lowering of the
    # formula computes in): the promoted arguments, the kind (two kinds when the str? argument
    # `given` picks one: the first where it is given), and the formula's tree.
    promoted: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ("DEFAULT",)
    given: str | None = None
    tree: Node | None = None

    @property
    def bool_result(self) -> bool:
        """ALWAYS_BOOL: written as bool whatever the common dtype (both kinds agree on it)."""
        return self.kinds[0] == "ALWAYS_BOOL"
