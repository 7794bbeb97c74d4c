"""The functions a derivative formula may call: one row each, with the kinds of its arguments,
its result and its C++ spelling (codegen/autograd/cpp.py prints calls from this table; the
checker in codegen/autograd/formulas.py checks calls against it; docs/autograd.md lists it).

Kinds: ``tensor`` (a tensor value), ``value`` (a tensor or a scalar), ``scalar``, ``bool``,
``like`` (the name of a tensor argument whose shape, dtype and device are meant: backward saves
those, not the tensor), ``tensors`` (a Tensor[] argument), ``ints`` (an int[] argument, or int?:
the dims of a reduction), ``int``, ``any`` (any argument, passed as it is). Elementwise functions
(exp, where, ...) are ATen's; the others are structops' backward helpers, hand-written once in
csrc/include/structops/autograd.h.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Function:
    name: str
    params: tuple[str, ...]
    result: str  # tensor | tensors | scalar | bool
    cpp: str  # the C++ function the printed call names
    doc: str
    tensorize: bool = False  # a number argument is passed as a 0-dim tensor (ATen's elementwise)


def _elementwise(name: str, cpp: str | None = None) -> Function:
    return Function(name, ("value",), "tensor", cpp or f"at::{name}", f"torch.{name}", tensorize=True)


_H = "structops::autograd::"

FUNCTIONS: dict[str, Function] = {
    f.name: f
    for f in (
        *(
            _elementwise(n)
            for n in (
                "exp",
                "exp2",
                "expm1",
                "log",
                "log2",
                "log1p",
                "sqrt",
                "rsqrt",
                "sin",
                "cos",
                "tan",
                "tanh",
                "sigmoid",
                "erf",
                "erfc",
                "abs",
                "sign",
                "floor",
                "ceil",
                "round",
                "trunc",
                "isnan",
                "isinf",
            )
        ),
        Function("zeros_like", ("tensor",), "tensor", "at::zeros_like", "torch.zeros_like"),
        Function("conj", ("value",), "value", _H + "conj", "the complex conjugate (a real value as it is)"),
        Function("pow", ("value", "value"), "tensor", "at::pow", "torch.pow"),
        Function("pow_scalar", ("tensor", "scalar"), "tensor", "at::pow", "torch.pow with a Scalar exponent"),
        Function("max", ("value", "value"), "tensor", _H + "maximum", "torch.maximum (a scalar side clamps)"),
        Function("min", ("value", "value"), "tensor", _H + "minimum", "torch.minimum (a scalar side clamps)"),
        Function("trunc_div", ("value", "value"), "tensor", _H + "trunc_div", "division rounded toward 0"),
        Function(
            "in_bounds",
            ("tensor", "any", "any"),
            "tensor",
            _H + "in_bounds",
            "lo <= x <= hi, a None bound being no bound (clamp's gradient mask)",
        ),
        Function(
            "sum_to",
            ("tensor", "like"),
            "tensor",
            _H + "sum_to",
            "a gradient in the form of the input `like`: summed over the dims broadcasting added or "
            "expanded, in like's dtype",
        ),
    )
}
# where(c, a, b), select(mode, v1, e1, ...) and the operators are the checker's own.
SPECIAL = ("where", "select")
