"""The boxed calling convention: how a generated kernel reads its arguments off the dispatcher's
stack and pushes its returns.

Every generated kernel is registered boxed, through a small adapter that calls the unboxed C++
function (codegen/api/cpp.py's signature). ``TORCH_FN`` would do the same with c10's unboxing
templates, instantiated per signature: they were two thirds of a wrapper file's compile time
(wrappers_cpu_3: 23.4 s with them, 7.5 s without). Python's calls (torch.ops) arrive boxed
anyway; a C++ caller with a typed handle (the autograd kernels' redispatch) gets its arguments
boxed by the dispatcher. The conversions that need more than an IValue accessor are plain
functions in the runtime's boxed.h (csrc/runtime/boxed.cpp), compiled once.
"""

from __future__ import annotations

from dataclasses import dataclass

from structgen.codegen.api import cpp
from structgen.codegen.api.names import RUNTIME
from structgen.codegen.memo import by_identity
from structgen.codegen.model.schema import BaseTy, BaseType, FunctionSchema, ListType, OptionalType, Type

RT = RUNTIME.namespace  # the runtime's boxed:: readers

# IValue accessors of the base types (so_args[i].<accessor>()).
_ACCESSOR = {
    BaseTy.Tensor: "toTensor",
    BaseTy.int: "toInt",
    BaseTy.SymInt: "toSymInt",
    BaseTy.SymBool: "toSymBool",
    BaseTy.float: "toDouble",
    BaseTy.bool: "toBool",
    BaseTy.str: "toStringView",
    BaseTy.Scalar: "toScalar",
    BaseTy.ScalarType: "toScalarType",
    BaseTy.Generator: "toGenerator",
    BaseTy.Layout: "toLayout",
    BaseTy.Device: "toDevice",
    BaseTy.MemoryFormat: "toMemoryFormat",
    BaseTy.Storage: "toStorage",
    BaseTy.Stream: "toStream",
}

# Lists: the expression gives a temporary that the parameter type views (it lives until the
# adapter's call returns: one full-expression).
_LIST = {
    BaseTy.Tensor: "{v}.toTensorVector()",
    BaseTy.int: "{v}.toDimVector()",
    BaseTy.SymInt: RT + "::boxed::sym_ints({v})",
    BaseTy.float: "{v}.toDoubleVector()",
    BaseTy.Scalar: RT + "::boxed::scalars({v})",
}

_OPTIONAL_LIST = {
    BaseTy.int: RT + "::boxed::optional_ints({v})",
    BaseTy.SymInt: RT + "::boxed::optional_sym_ints({v})",
    BaseTy.float: RT + "::boxed::optional_doubles({v})",
}


def read(t: Type, v: str) -> str:
    """The C++ expression that turns the IValue ``v`` into the unboxed parameter of type ``t``."""
    if isinstance(t, BaseType) and t.name in _ACCESSOR:
        return f"{v}.{_ACCESSOR[t.name]}()"
    if t == BaseType(BaseTy.DeviceIndex):
        return f"static_cast<at::DeviceIndex>({v}.toInt())"
    if isinstance(t, OptionalType):
        elem = t.elem
        if elem == BaseType(BaseTy.Tensor):
            return f"{RT}::boxed::optional_tensor({v})"
        list_of = elem.elem if isinstance(elem, ListType) else None
        if isinstance(list_of, BaseType) and list_of.name in _OPTIONAL_LIST:
            return _OPTIONAL_LIST[list_of.name].format(v=v)
        if isinstance(elem, BaseType):
            value = cpp.value_type(t)
            return f"({v}.isNone() ? {value}() : {value}({read(elem, v)}))"
    if isinstance(t, ListType):
        elem = t.elem
        if elem == OptionalType(BaseType(BaseTy.Tensor)):
            return f"{v}.toOptionalTensorList()"
        if elem == BaseType(BaseTy.bool) and t.size is not None:
            return f"{RT}::boxed::bools<{t.size}>({v})"
        if isinstance(elem, BaseType) and elem.name in _LIST:
            return _LIST[elem.name].format(v=v)
    raise cpp.UnsupportedType(f"type '{t}' has no boxed reading")


@dataclass(frozen=True)
class BoxedKernel:
    """One boxed adapter: the arguments read off the stack (so_args[i]), the unboxed function
    called with them, its returns held by value (so that a returned Tensor& is not left
    pointing into a dropped stack slot) and pushed after the arguments are dropped."""

    name: str
    function: str
    keys: bool  # the function takes the DispatchKeySet first (autograd kernels)
    arity: int
    args: tuple[str, ...]
    result: str | None  # the C++ type holding the returns; None for a void function
    pushes: tuple[str, ...]


@by_identity
def _unboxing(schema: FunctionSchema) -> tuple[tuple[str, ...], str | None, tuple[str, ...]]:
    """The stack reads, result type and pushes of ``schema``: the same for each dispatch key's
    adapter of it."""
    args = tuple(read(a.type, f"so_args[{i}]") for i, a in enumerate(schema.arguments.all))
    values = tuple(cpp.value_type(r.type) for r in schema.returns)
    if not values:
        return args, None, ()
    if len(values) == 1:
        return args, values[0], ("std::move(so_result)",)
    pushes = tuple(f"std::move(std::get<{k}>(so_result))" for k in range(len(values)))
    return args, "std::tuple<" + ", ".join(values) + ">", pushes


def boxed_kernel(schema: FunctionSchema, function: str, name: str, keys: bool = False) -> BoxedKernel:
    args, result, pushes = _unboxing(schema)
    return BoxedKernel(name, function, keys, len(args), args, result, pushes)
