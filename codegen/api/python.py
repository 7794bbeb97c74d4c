"""Python conventions: default values and type hints for the generated <package>.* functions."""

from __future__ import annotations

import re

from structgen.codegen.model.schema import Argument, BaseTy, BaseType, ListType, OptionalType, Return, Type

# Schema defaults that are names in PyTorch's manifest, and their Python spelling.
_NAMED_DEFAULTS = {
    "True": "True",
    "False": "False",
    "None": "None",
    "contiguous_format": "torch.contiguous_format",
    "long": "torch.long",
    "float": "torch.float",
    "Mean": "1",
    "Sum": "2",  # at::Reduction
    "inf": "math.inf",
    "-inf": "-math.inf",
}
_NUMBER = re.compile(r"^-?\d+(\.\d*)?([eE]-?\d+)?$")


def default(text: str) -> str | None:
    """The Python literal for a schema default, or None when there is no faithful one."""
    if text in _NAMED_DEFAULTS:
        return _NAMED_DEFAULTS[text]
    if _NUMBER.match(text) or (text[:1] in "\"'" and text[-1:] == text[:1]):
        return text
    if text.startswith("[") and text.endswith("]"):
        items = [x.strip() for x in text[1:-1].split(",") if x.strip()]
        converted = [default(x) for x in items]
        if all(c is not None for c in converted):
            return "(" + "".join(f"{c}, " for c in converted).rstrip(" ") + ")"
    return None


_HINT = {
    BaseTy.Tensor: "Tensor",
    BaseTy.int: "int",
    BaseTy.SymInt: "int | torch.SymInt",
    BaseTy.float: "float",
    BaseTy.bool: "bool",
    BaseTy.str: "str",
    BaseTy.Scalar: "int | float | bool | complex",  # torch's Scalar: any Python number
    BaseTy.ScalarType: "torch.dtype",
    BaseTy.Layout: "torch.layout",
    BaseTy.Device: "torch.device | str",
    BaseTy.MemoryFormat: "torch.memory_format",
    BaseTy.Generator: "torch.Generator",
}


def hint(t: Type) -> str:
    if isinstance(t, BaseType):
        return _HINT.get(t.name, "Any")
    if isinstance(t, OptionalType):
        return f"{hint(t.elem)} | None"
    if isinstance(t, ListType):
        elem = hint(t.elem)
        return f"Sequence[{elem}]" if t.size is None else f"Sequence[{elem}] | {elem}"
    return "Any"


def return_hint(returns: tuple[Return, ...]) -> str:
    def one(r: Return) -> str:
        return "list[Tensor]" if isinstance(r.type, ListType) else hint(r.type)

    if not returns:
        return "None"
    if len(returns) == 1:
        return one(returns[0])
    return "tuple[" + ", ".join(one(r) for r in returns) + "]"


def parameter(a: Argument, with_hint: bool, spelled: bool = False) -> str:
    """``name: hint = default`` (or ``name=default``); a ``spelled`` argument's hint adds str."""
    text = a.name
    if with_hint:
        text += f": {hint(a.type)}" + (" | str" if spelled else "")
    if a.default is not None:
        value = default(a.default)
        text += f" = {value if value is not None else '...'}" if with_hint else f"={value}"
    return text


# The operators whose first Tensor torch's Python layer also takes as a number (torch.add(2, x)):
# its argument parser's allow-list, of the names a package mirrors. structgen._dispatch.pick
# passes such a number as the 0-dim tensor a wrapped number would be; the stubs allow it.
NUMBER_SELF = frozenset({"add", "sub", "mul", "div"})


def parser_kind(t: Type) -> tuple[str, bool]:
    """(kind, optional) of a parameter as structgen._dispatch.pick checks a value against it:
    torch's Python argument parser's classes of values (a bool is no int, a number no Tensor)."""
    optional = isinstance(t, OptionalType)
    inner = t.elem if optional else t
    if isinstance(inner, ListType):
        if inner.elem in (BaseType(BaseTy.int), BaseType(BaseTy.SymInt)):
            return ("ints1" if inner.size is not None else "ints"), optional
        return ("tensors" if inner.elem == BaseType(BaseTy.Tensor) else "any"), optional
    kinds = {
        BaseTy.Tensor: "Tensor",
        BaseTy.Scalar: "number",
        BaseTy.bool: "bool",
        BaseTy.int: "int",
        BaseTy.SymInt: "int",
        BaseTy.float: "float",
        BaseTy.ScalarType: "dtype",
        BaseTy.str: "str",
    }
    return kinds.get(inner.name, "any") if isinstance(inner, BaseType) else "any", optional
