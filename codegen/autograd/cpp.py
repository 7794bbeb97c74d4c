"""Derivative formulas (codegen/autograd/formulas.py's typed IR) printed as C++ expressions over
ATen and the runtime's autograd:: helpers (its autograd.h).

The printed code runs in a backward Node's apply(): arguments are the Node's saved values under
their own names (tensors unpacked from their SavedVariables), ``like`` arguments are saved
TensorMetas (``<name>_meta``), ``grad``/``result`` are locals. Tensor expressions use ATen's
operators and functions, so they are differentiable again (double backward); scalar arithmetic
goes through helpers that keep a Scalar's kind (int, float, complex).
"""

from __future__ import annotations

import dataclasses

from structgen.codegen.api.names import RUNTIME
from structgen.codegen.model.autograd import Apply, Const, Expr, Op, Ref, Select, Where

_TENSOR_OPS = {"+": "+", "-": "-", "*": "*", "/": "/"}
_COMPARE = {"==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}
_SWAPPED = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_SCALAR_OPS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "//": "floor_div", "%": "remainder"}
H = f"{RUNTIME.namespace}::autograd::"


def code(e: Expr) -> str:
    return _code(e)


def forward_code(e: Expr) -> str:
    """A forward-mode formula: its tensor arguments are their primals (<name>_p locals)."""
    return _code(_primals(e))


def _primals(e: Expr) -> Expr:
    if isinstance(e, Ref):
        if e.role == "arg" and e.kind in ("tensor", "tensor?"):
            return dataclasses.replace(e, name=f"{e.name}_p")
        return e
    if isinstance(e, Where):
        return dataclasses.replace(
            e, cond=_primals(e.cond), then=_primals(e.then), otherwise=_primals(e.otherwise)
        )
    if isinstance(e, Select):
        return dataclasses.replace(e, cases=tuple((v, _primals(x)) for v, x in e.cases))
    if isinstance(e, Op | Apply):
        return dataclasses.replace(e, args=tuple(_primals(a) for a in e.args))
    return e


def _code(e: Expr) -> str:
    if isinstance(e, Ref):
        if e.kind == "mask":
            return "so_mask"
        return f"{e.name}_meta" if e.kind in ("like", "likes") else e.name
    if isinstance(e, Const):
        return _const(e)
    if isinstance(e, Op):
        return _op(e)
    if isinstance(e, Apply):
        args = (_apply_arg(a, p, e.fn.tensorize) for a, p in zip(e.args, e.fn.params))
        return f"{e.fn.cpp}({', '.join(args)})"
    if isinstance(e, Where):
        if e.cond.kind == "tensor":
            return f"at::where({_code(e.cond)}, {_arg(e.then)}, {_arg(e.otherwise)})"
        if e.kind == "tensor":
            return f"({_code(e.cond)} ? {_tensor(e.then)} : {_tensor(e.otherwise)})"
        return f"({_code(e.cond)} ? at::Scalar({_code(e.then)}) : at::Scalar({_code(e.otherwise)}))"
    assert isinstance(e, Select)
    wrap = _tensor if e.kind == "tensor" else (lambda x: f"at::Scalar({_code(x)})")
    out = wrap(e.cases[-1][1])
    for value, branch in reversed(e.cases[:-1]):
        test = f"!{e.arg.name}.has_value()" if value is None else f'{H}is({e.arg.name}, "{value}")'
        out = f"({test} ? {wrap(branch)} : {out})"
    return out


def _apply_arg(a: Expr, param: str, tensorize: bool) -> str:
    if tensorize:
        return _tensor(a)
    if param == "int[]" and a.kind == "scalar":  # one dim where ATen takes a list of them
        return f"c10::IntArrayRef({_code(a)})"
    if param == "int":  # an ATen int (an op's SymInt may stand there: an older torch's schema)
        return f"{H}as_int({_code(a)})"
    return _code(a)


def _const(e: Const) -> str:
    if e.kind == "bool":
        return "true" if e.value else "false"
    if e.kind == "scalar":
        if isinstance(e.value, int):
            return f"int64_t({e.value})"
        return f"{e.value!r}"
    if e.kind == "none":
        return "std::nullopt"
    return f'"{e.value}"'


def _arg(e: Expr) -> str:
    """An operand of an ATen function: tensors as they are, numbers as Scalars."""
    return _code(e) if e.kind == "tensor" else f"at::Scalar({_code(e)})"


def _tensor(e: Expr) -> str:
    """A value as a tensor (a scalar branch of a condition decided on the host: a 0-dim tensor
    in grad's dtype and device, which broadcasts where it is used)."""
    return _code(e) if e.kind == "tensor" else f"{H}as_tensor(at::Scalar({_code(e)}), grad_like)"


def _op(e: Op) -> str:
    if e.op == "neg":
        (a,) = e.args
        return f"(-{_code(a)})" if a.kind == "tensor" else f"{H}scalar_neg({_code(a)})"
    if e.op == "not":
        (a,) = e.args
        return f"at::logical_not({_code(a)})" if a.kind == "tensor" else f"(!{_code(a)})"
    a, b = e.args
    if e.op in ("and", "or"):
        if e.kind == "bool":
            return f"({_code(a)} {'&&' if e.op == 'and' else '||'} {_code(b)})"
        return f"at::logical_{e.op}({_tensor(a)}, {_tensor(b)})"  # ATen's take tensors only
    if e.op in ("==", "!=") and a.kind == "str":
        test = f"!{a.name}.has_value()" if b.kind == "none" else f"{H}is({a.name}, {_const(b)})"
        return test if e.op == "==" else f"(!{test})"
    if e.op in _COMPARE:
        if e.kind == "bool":
            return f"{H}scalar_{_COMPARE[e.op]}({_code(a)}, {_code(b)})"
        if a.kind != "tensor":  # ATen's comparisons take the tensor first
            return f"at::{_COMPARE[_SWAPPED[e.op]]}({_code(b)}, {_arg(a)})"
        return f"at::{_COMPARE[e.op]}({_code(a)}, {_arg(b)})"
    if e.kind == "scalar":
        return f"{H}scalar_{_SCALAR_OPS[e.op]}({_code(a)}, {_code(b)})"
    if e.op == "//":
        return f"at::floor_divide({_tensor_first(a, b)})"
    if e.op == "%":
        return f"at::remainder({_arg(a)}, {_arg(b)})"
    return f"({_arg(a)} {_TENSOR_OPS[e.op]} {_arg(b)})"


def _tensor_first(a: Expr, b: Expr) -> str:
    return f"{_tensor(a)}, {_arg(b)}"
