"""The C++ calling convention of the dispatcher's unboxed kernels: the parameters of every
generated kernel function, and the typed handles (``typed<...>()``) that call a project's ops.

A typed handle's signature must be the one torch derives from the schema (the dispatcher
checks it); these mappings follow ATen's own (const Tensor& for inputs, Tensor& for written
tensors, OptionalIntArrayRef for int[]?, ...).
"""

from __future__ import annotations

from dataclasses import dataclass

from structgen.codegen.api.names import cpp_name
from structgen.codegen.memo import by_identity
from structgen.codegen.model.schema import (
    Argument,
    BaseTy,
    BaseType,
    FunctionSchema,
    ListType,
    OptionalType,
    Return,
    Type,
)

_BASE = {
    BaseTy.Tensor: "at::Tensor",
    BaseTy.int: "int64_t",
    BaseTy.SymInt: "c10::SymInt",
    BaseTy.SymBool: "c10::SymBool",
    BaseTy.float: "double",
    BaseTy.bool: "bool",
    BaseTy.str: "c10::string_view",
    BaseTy.Scalar: "at::Scalar",
    BaseTy.ScalarType: "at::ScalarType",
    BaseTy.Generator: "at::Generator",
    BaseTy.Layout: "at::Layout",
    BaseTy.Device: "at::Device",
    BaseTy.DeviceIndex: "at::DeviceIndex",
    BaseTy.MemoryFormat: "at::MemoryFormat",
    BaseTy.Dimname: "at::Dimname",
    BaseTy.Stream: "at::Stream",
    BaseTy.Storage: "at::Storage",
}

# Passed by const reference rather than by value.
_BY_REF = {BaseTy.Tensor, BaseTy.Scalar, BaseTy.Generator, BaseTy.Storage}


class UnsupportedType(ValueError):
    """A schema type the C++ generator has no mapping for (raised as SpecError by callers)."""


@dataclass(frozen=True)
class Binding:
    """One C++ parameter: its declared type and its name."""

    ctype: str
    name: str

    def decl(self) -> str:
        return f"{self.ctype} {self.name}"


def value_type(t: Type) -> str:
    """The type of a value (a return, a precomputed field, an optional's element)."""
    if isinstance(t, BaseType):
        if t.name not in _BASE:
            raise UnsupportedType(f"type '{t}' has no C++ mapping in the generator")
        return _BASE[t.name]
    if isinstance(t, OptionalType):
        return f"std::optional<{value_type(t.elem)}>"
    if isinstance(t, ListType):
        if t.elem == BaseType(BaseTy.Tensor):
            return "std::vector<at::Tensor>"
        return f"std::vector<{value_type(t.elem)}>"
    raise UnsupportedType(str(t))


def argument_type(t: Type, written: bool) -> str:
    """The parameter type of an argument of schema type ``t``."""
    if isinstance(t, BaseType):
        cpp = value_type(t)
        if t.name is BaseTy.Tensor and written:
            return f"{cpp}&"
        return f"const {cpp}&" if t.name in _BY_REF else cpp
    if isinstance(t, OptionalType):
        elem = t.elem
        if isinstance(elem, ListType):
            if elem.elem == BaseType(BaseTy.int):
                return "at::OptionalIntArrayRef"
            if elem.elem == BaseType(BaseTy.SymInt):
                return "at::OptionalSymIntArrayRef"
            if elem.elem == BaseType(BaseTy.float):
                return "at::OptionalArrayRef<double>"
            raise UnsupportedType(f"type '{t}' has no C++ mapping in the generator")
        if isinstance(elem, BaseType) and elem.name in _BY_REF:
            return f"const std::optional<{value_type(elem)}>&"
        return f"std::optional<{value_type(elem)}>"
    if isinstance(t, ListType):
        elem = t.elem
        if elem == BaseType(BaseTy.Tensor):
            return "at::TensorList"
        if elem == OptionalType(BaseType(BaseTy.Tensor)):
            return "const c10::List<std::optional<at::Tensor>>&"
        if elem == BaseType(BaseTy.int):
            return "at::IntArrayRef"
        if elem == BaseType(BaseTy.SymInt):
            return "c10::SymIntArrayRef"
        if elem == BaseType(BaseTy.float):
            return "at::ArrayRef<double>"
        if elem == BaseType(BaseTy.bool) and t.size is not None:
            return f"std::array<bool,{t.size}>"
        if elem == BaseType(BaseTy.Scalar):
            return "at::ArrayRef<at::Scalar>"
        if elem == BaseType(BaseTy.Dimname):
            return "at::DimnameList"
    raise UnsupportedType(f"type '{t}' has no C++ mapping in the generator")


def argument(a: Argument) -> Binding:
    return Binding(argument_type(a.type, a.is_write), cpp_name(a.name))


def arguments(args: tuple[Argument, ...]) -> tuple[Binding, ...]:
    return tuple(argument(a) for a in args)


def return_type(returns: tuple[Return, ...]) -> str:
    def one(r: Return) -> str:
        if r.is_write:
            return "at::Tensor&"
        return value_type(r.type)

    if not returns:
        return "void"
    if len(returns) == 1:
        return one(returns[0])
    return "std::tuple<" + ",".join(one(r) for r in returns) + ">"


# Asked for five times per schema (entry checks, a wrapper per dispatch key, autograd): 15% of a
# 3,000-entry run before it was cached.
@by_identity
def kernel_signature(schema: FunctionSchema) -> tuple[str, tuple[Binding, ...]]:
    """(return type, parameters) of the unboxed kernel for ``schema``, in schema order."""
    return return_type(schema.returns), arguments(schema.arguments.all)
