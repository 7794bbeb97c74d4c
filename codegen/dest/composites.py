"""Context for composites.cpp: each `composite:` overload as a C++ function that calls its target
through the dispatcher, registered as CompositeImplicitAutograd (codegen/composite.py)."""

from __future__ import annotations

from dataclasses import dataclass

from structgen.codegen.api import boxed, cpp
from structgen.codegen.api.names import cpp_name
from structgen.codegen.composite import missing_message
from structgen.codegen.model.composite import (
    Composite,
    Cond,
    Const,
    IntList,
    Name,
    Promoted,
    Transposed,
    Value,
)
from structgen.codegen.model.native import Manifest, NativeFunction
from structgen.codegen.model.schema import BaseTy, BaseType, OptionalType, Type


@dataclass(frozen=True)
class CompositeCase:
    condition: str  # C++: the case's given arguments are given; "" when it needs none
    target_op: str  # "sum": the template qualifies it with the project's namespace
    target_overload: str  # "dim_IntList"
    target_signature: str  # at::Tensor(const at::Tensor&, ...)
    handle: str
    args: str


@dataclass(frozen=True)
class CompositeCall:
    name: str  # the overload: "sum", "all.dim"
    function: str  # sum_composite
    returns: str
    params: str
    cases: tuple[CompositeCase, ...]
    missing: str | None  # what a call no case applies to raises
    kernel: boxed.BoxedKernel  # what is registered: the boxed adapter of ``function``


def _const(v: Const, t: Type) -> str:
    inner = t.elem if isinstance(t, OptionalType) else t
    if v.value is None:
        return "std::nullopt"
    if isinstance(v.value, bool):
        return "true" if v.value else "false"
    if inner == BaseType(BaseTy.Scalar):
        return f"at::Scalar(int64_t({v.value}))"
    return f"int64_t({v.value})"


def _code(v: Value, t: Type, given: tuple[str, ...]) -> str:
    if isinstance(v, Name):  # a given optional passes as its value
        return f"*{cpp_name(v.name)}" if v.name in given else cpp_name(v.name)
    if isinstance(v, Const):
        return _const(v, t)
    if isinstance(v, IntList):  # the initializer list lives until the call returns
        items = ", ".join(cpp_name(i.name) if isinstance(i, Name) else f"int64_t({i.value})" for i in v.items)
        return f"at::IntArrayRef{{{items}}}"
    if isinstance(v, Promoted):  # a CPU scalar operand, as torch's wrapped numbers are
        number, other = cpp_name(v.number), cpp_name(v.other)
        return f"at::scalar_tensor({number}, at::TensorOptions().dtype(at::result_type({number}, {other})))"
    if isinstance(v, Transposed):  # a given optional: its value's view
        return f"{cpp_name(v.name)}{'->' if v.name in given else '.'}mT()"
    assert isinstance(v, Cond)
    return f"({cpp_name(v.test)} ? {_const(v.then, t)} : {_const(v.otherwise, t)})"


def _given(name: str, t: Type) -> str:
    """C++: the optional argument ``name`` is given (a Tensor? also defined, as ATen reads it)."""
    if isinstance(t, OptionalType) and t.elem == BaseType(BaseTy.Tensor):
        return f"({cpp_name(name)}.has_value() && {cpp_name(name)}->defined())"
    return f"{cpp_name(name)}.has_value()"


def _case(case: Composite, fn: NativeFunction, target: NativeFunction) -> CompositeCase:
    types = {a.name: a.type for a in fn.func.arguments.all}
    t_returns, t_params = cpp.kernel_signature(target.func)
    return CompositeCase(
        condition=" && ".join(_given(g, types[g]) for g in case.given),
        target_op=str(target.func.name.name),
        target_overload=target.func.name.overload_name,
        target_signature=f"{t_returns}({', '.join(b.ctype for b in t_params)})",
        handle=f"{target.func.name.unambiguous}_op",
        args=", ".join(_code(v, a.type, case.given) for a, v in case.bound),
    )


def composite_calls(manifest: Manifest) -> list[CompositeCall]:
    by_name = {str(f.func.name): f for f in manifest.functions}
    calls = []
    for fn in manifest.functions:
        if fn.composite is None:
            continue
        returns, params = cpp.kernel_signature(fn.func)
        function = f"{fn.func.name.unambiguous}_composite"
        calls.append(
            CompositeCall(
                name=str(fn.func.name),
                function=function,
                returns=returns,
                params=", ".join(b.decl() for b in params),
                cases=tuple(_case(c, fn, by_name[str(c.target)]) for c in fn.composite),
                missing=missing_message(str(fn.func.name.name), fn.composite),
                kernel=boxed.boxed_kernel(fn.func, function, f"boxed_{function}"),
            )
        )
    return calls
