"""PyTorch's function-schema language as frozen dataclasses.

``FunctionSchema.parse(s)`` accepts every ``func:`` of PyTorch's own native_functions.yaml and
``str(FunctionSchema.parse(s)) == s`` holds for all of them (tests/codegen/test_torch_manifest.py).
If a structure were hard to print back, the representation would be wrong, so parse() checks
the round trip itself and reports the canonical spelling when a user's schema differs.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property


class SchemaSyntaxError(ValueError):
    """A schema string that is not valid; the message names the column and what was expected."""


class BaseTy(enum.Enum):
    Tensor = "Tensor"
    int = "int"
    SymInt = "SymInt"
    SymBool = "SymBool"
    float = "float"
    bool = "bool"
    str = "str"
    Scalar = "Scalar"
    ScalarType = "ScalarType"
    Generator = "Generator"
    Layout = "Layout"
    Device = "Device"
    DeviceIndex = "DeviceIndex"
    MemoryFormat = "MemoryFormat"
    QScheme = "QScheme"
    Storage = "Storage"
    Stream = "Stream"
    Dimname = "Dimname"
    DimVector = "DimVector"
    ConstQuantizerPtr = "ConstQuantizerPtr"
    GraphModule = "GraphModule"


# ---------------------------------------------------------------------------------------------
# Types


@dataclass(frozen=True)
class BaseType:
    name: BaseTy

    def __str__(self) -> str:
        return self.name.value


@dataclass(frozen=True)
class OptionalType:
    elem: Type

    def __str__(self) -> str:
        return f"{self.elem}?"


@dataclass(frozen=True)
class ListType:
    elem: Type
    size: int | None  # int[2] has size 2; int[] has None

    def __str__(self) -> str:
        return f"{self.elem}[{'' if self.size is None else self.size}]"


Type = BaseType | OptionalType | ListType


def base_of(t: Type) -> BaseTy:
    """The innermost base type: Tensor for Tensor?[], int for int[1]?."""
    while not isinstance(t, BaseType):
        t = t.elem
    return t.name


def is_tensor_like(t: Type) -> bool:
    return base_of(t) is BaseTy.Tensor


def strip_optional(t: Type) -> Type:
    return t.elem if isinstance(t, OptionalType) else t


# ---------------------------------------------------------------------------------------------
# Annotations, arguments, returns


@dataclass(frozen=True)
class Annotation:
    """An alias annotation: ``a``, ``a!``, ``a -> *``, ``a! -> a|b``."""

    alias_set: tuple[str, ...]
    is_write: bool
    alias_set_after: tuple[str, ...]

    @staticmethod
    def parse(text: str) -> Annotation:
        before, arrow, after = text.partition(" -> ")
        is_write = before.endswith("!")
        names = before[:-1] if is_write else before
        alias_set = tuple(names.split("|"))
        alias_set_after = tuple(after.split("|")) if arrow else ()
        for n in alias_set + alias_set_after:
            if not (n == "*" or n.isidentifier()):
                raise SchemaSyntaxError(f"bad alias annotation '({text})'")
        return Annotation(alias_set, is_write, alias_set_after)

    def __str__(self) -> str:
        s = "|".join(self.alias_set) + ("!" if self.is_write else "")
        if self.alias_set_after:
            s += " -> " + "|".join(self.alias_set_after)
        return s


def _type_with_annotation(t: Type, annotation: Annotation | None) -> str:
    text = str(t)
    if annotation is None:
        return text
    # Annotations attach to the Tensor base: Tensor(a!), Tensor(a)[], Tensor(a!)?
    return f"Tensor({annotation}){text[len('Tensor') :]}"


@dataclass(frozen=True)
class Argument:
    name: str
    type: Type
    default: str | None  # kept verbatim ("1", "[]", "None", "contiguous_format", '"mean"')
    annotation: Annotation | None

    @property
    def is_write(self) -> bool:
        return self.annotation is not None and self.annotation.is_write

    @staticmethod
    def parse(text: str) -> Argument:
        """One ``Type name[=default]``, as used by ``precomputed:`` entries."""
        parser = _SchemaParser(text)
        arg = parser.argument()
        if parser.pos != len(text):
            raise parser.fail("end of argument")
        return arg

    def __str__(self) -> str:
        s = f"{_type_with_annotation(self.type, self.annotation)} {self.name}"
        return s if self.default is None else f"{s}={self.default}"


def same_arguments(a: Iterable[Argument], b: Iterable[Argument]) -> bool:
    """Equal names, types and defaults; alias annotations may differ (inplace self)."""
    key = [(x.name, x.type, x.default) for x in a]
    return key == [(x.name, x.type, x.default) for x in b]


@dataclass(frozen=True)
class Return:
    name: str | None
    type: Type
    annotation: Annotation | None

    @property
    def is_write(self) -> bool:
        return self.annotation is not None and self.annotation.is_write

    def __str__(self) -> str:
        s = _type_with_annotation(self.type, self.annotation)
        return s if self.name is None else f"{s} {self.name}"


@dataclass(frozen=True)
class Arguments:
    positional: tuple[Argument, ...]
    kwarg_only: tuple[Argument, ...]

    # Cached (the generator asks a schema for these tens of thousands of times); the fields are
    # frozen, so the cache cannot go stale.
    @cached_property
    def all(self) -> tuple[Argument, ...]:
        return self.positional + self.kwarg_only

    @cached_property
    def out(self) -> tuple[Argument, ...]:
        """The out= arguments: keyword-only, written-to tensors (PyTorch's definition)."""
        return tuple(a for a in self.kwarg_only if a.is_write and is_tensor_like(a.type))

    @cached_property
    def non_out(self) -> tuple[Argument, ...]:
        outs = set(self.out)
        return tuple(a for a in self.all if a not in outs)

    @property
    def self_arg(self) -> Argument | None:
        return next((a for a in self.positional if a.name == "self"), None)

    def __str__(self) -> str:
        parts = [str(a) for a in self.positional]
        if self.kwarg_only:
            parts.append("*")
            parts.extend(str(a) for a in self.kwarg_only)
        return ", ".join(parts)


# ---------------------------------------------------------------------------------------------
# Operator names and schemas

# Python's augmented-assignment dunders: __iadd__ is the inplace form of __add__.
AUGMENTED_ASSIGNMENT_NAMES = (
    "add",
    "sub",
    "mul",
    "div",
    "mod",
    "pow",
    "lshift",
    "rshift",
    "and",
    "xor",
    "or",
    "matmul",
)


@dataclass(frozen=True)
class BaseOperatorName:
    """``add``, ``add_`` (inplace), ``__iand__`` (dunder inplace), ``__and__``, and
    ``normal_functional`` (the functional variant of a mutable op, base ``normal``)."""

    base: str
    inplace: bool
    dunder: bool
    functional_overload: bool = False

    @staticmethod
    def parse(text: str) -> BaseOperatorName:
        if text.startswith("__") and text.endswith("__"):
            inner = text[2:-2]
            if inner.startswith("i") and inner[1:] in AUGMENTED_ASSIGNMENT_NAMES:
                return BaseOperatorName(inner[1:], inplace=True, dunder=True)
            return BaseOperatorName(inner, inplace=False, dunder=True)
        if text.endswith("_") and not text.endswith("__"):
            return BaseOperatorName(text[:-1], inplace=True, dunder=False)
        if text.endswith("_functional"):
            return BaseOperatorName(text[: -len("_functional")], False, False, functional_overload=True)
        return BaseOperatorName(text, inplace=False, dunder=False)

    def __str__(self) -> str:
        if self.dunder:
            return f"__{'i' if self.inplace else ''}{self.base}__"
        if self.functional_overload:
            return f"{self.base}_functional"
        return self.base + ("_" if self.inplace else "")


@dataclass(frozen=True)
class OperatorName:
    name: BaseOperatorName
    overload_name: str  # "" when absent

    @staticmethod
    def parse(text: str) -> OperatorName:
        base, _, overload = text.partition(".")
        for part in (base, overload) if overload else (base,):
            if not part.isidentifier():
                raise SchemaSyntaxError(f"'{text}' is not an operator name (name or name.overload)")
        return OperatorName(BaseOperatorName.parse(base), overload)

    @property
    def unambiguous(self) -> str:
        """A C++-identifier-safe name: add_out, sum_dim_IntList, neg."""
        return f"{self.name}_{self.overload_name}" if self.overload_name else str(self.name)

    def __str__(self) -> str:
        return f"{self.name}.{self.overload_name}" if self.overload_name else str(self.name)


class SchemaKind(enum.Enum):
    functional = "functional"
    inplace = "inplace"
    out = "out"
    mutable = "mutable"


@dataclass(frozen=True)
class FunctionSchema:
    name: OperatorName
    arguments: Arguments
    returns: tuple[Return, ...]

    @staticmethod
    def parse(text: str) -> FunctionSchema:
        schema = _SchemaParser(text).schema()
        printed = str(schema)
        if printed != text:
            raise SchemaSyntaxError(f"schema is not in canonical form; write it as '{printed}'")
        return schema

    def kind(self) -> SchemaKind:
        if self.arguments.out:
            return SchemaKind.out
        if self.name.name.inplace:
            return SchemaKind.inplace
        if any(a.is_write for a in self.arguments.all):
            return SchemaKind.mutable
        return SchemaKind.functional

    def __str__(self) -> str:
        return self._text

    @cached_property
    def _text(self) -> str:
        if len(self.returns) == 1:
            rets = str(self.returns[0])
        else:
            rets = "(" + ", ".join(str(r) for r in self.returns) + ")"
        return f"{self.name}({self.arguments}) -> {rets}"


# ---------------------------------------------------------------------------------------------
# The parser: a cursor over the string, so errors can name the column.


class _SchemaParser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    # -- helpers
    def fail(self, expected: str) -> SchemaSyntaxError:
        got = self.text[self.pos : self.pos + 12] or "end of schema"
        return SchemaSyntaxError(f"column {self.pos + 1}: expected {expected}, found '{got}'")

    def peek(self, s: str) -> bool:
        return self.text.startswith(s, self.pos)

    def expect(self, s: str) -> None:
        if not self.peek(s):
            raise self.fail(f"'{s}'")
        self.pos += len(s)

    def skip_spaces(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] == " ":
            self.pos += 1

    def ident(self, what: str) -> str:
        start = self.pos
        while self.pos < len(self.text) and (self.text[self.pos].isalnum() or self.text[self.pos] == "_"):
            self.pos += 1
        word = self.text[start : self.pos]
        if not word or word[0].isdigit():
            self.pos = start
            raise self.fail(what)
        return word

    # -- grammar
    def schema(self) -> FunctionSchema:
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos] not in "( ":
            self.pos += 1
        name = OperatorName.parse(self.text[start : self.pos])
        self.expect("(")
        arguments = self.arguments()
        self.expect(")")
        self.skip_spaces()
        self.expect("->")
        self.skip_spaces()
        returns = self.returns()
        if self.pos != len(self.text):
            raise self.fail("end of schema")
        return FunctionSchema(name, arguments, returns)

    def arguments(self) -> Arguments:
        positional: list[Argument] = []
        kwarg_only: list[Argument] = []
        seen_star = False
        names: set[str] = set()
        self.skip_spaces()
        while not self.peek(")"):
            if self.peek("*") and not seen_star:
                self.pos += 1
                seen_star = True
            else:
                arg = self.argument()
                if arg.name in names:
                    raise SchemaSyntaxError(f"argument '{arg.name}' appears twice")
                names.add(arg.name)
                (kwarg_only if seen_star else positional).append(arg)
            self.skip_spaces()
            if self.peek(","):
                self.pos += 1
                self.skip_spaces()
            elif not self.peek(")"):
                raise self.fail("',' or ')'")
        if seen_star and not kwarg_only:
            raise SchemaSyntaxError("'*' must be followed by at least one keyword-only argument")
        return Arguments(tuple(positional), tuple(kwarg_only))

    def type_and_annotation(self) -> tuple[Type, Annotation | None]:
        word = self.ident("a type name")
        try:
            t: Type = BaseType(BaseTy(word))
        except ValueError:
            self.pos -= len(word)
            raise self.fail("a known type (Tensor, int, SymInt, float, bool, str, Scalar, ...)") from None
        annotation = None
        if self.peek("("):
            if t != BaseType(BaseTy.Tensor):
                raise self.fail(f"no alias annotation on '{word}' (only Tensor takes one)")
            end = self.text.find(")", self.pos)
            if end < 0:
                raise self.fail("')' closing the alias annotation")
            annotation = Annotation.parse(self.text[self.pos + 1 : end])
            self.pos = end + 1
        while True:
            if self.peek("?"):
                self.pos += 1
                t = OptionalType(t)
            elif self.peek("["):
                end = self.text.find("]", self.pos)
                size_text = self.text[self.pos + 1 : end] if end > 0 else "x"
                if size_text and not size_text.isdigit():
                    raise self.fail("'[]' or '[N]' with a number N")
                t = ListType(t, int(size_text) if size_text else None)
                self.pos = end + 1
            else:
                return t, annotation

    def argument(self) -> Argument:
        t, annotation = self.type_and_annotation()
        self.expect(" ")
        self.skip_spaces()  # tolerated here; the round-trip check then names the canonical form
        name = self.ident("an argument name")
        default = None
        if self.peek("="):
            self.pos += 1
            default = self.default_value()
        return Argument(name, t, default, annotation)

    def default_value(self) -> str:
        start = self.pos
        depth = 0
        quote = None
        while self.pos < len(self.text):
            c = self.text[self.pos]
            if quote:
                if c == "\\":
                    self.pos += 1  # an escaped character inside a string default
                elif c == quote:
                    quote = None
            elif c in "\"'":
                quote = c
            elif c == "[":
                depth += 1
            elif c == "]":
                depth -= 1
            elif c in ",)" and depth == 0:
                break
            self.pos += 1
        value = self.text[start : self.pos]
        if not value or quote or depth:
            self.pos = start
            raise self.fail("a default value")
        return value

    def returns(self) -> tuple[Return, ...]:
        if not self.peek("("):
            return (self.single_return(),)
        self.pos += 1
        rets: list[Return] = []
        self.skip_spaces()
        while not self.peek(")"):
            rets.append(self.single_return())
            self.skip_spaces()
            if self.peek(","):
                self.pos += 1
                self.skip_spaces()
            elif not self.peek(")"):
                raise self.fail("',' or ')'")
        self.pos += 1
        return tuple(rets)

    def single_return(self) -> Return:
        t, annotation = self.type_and_annotation()
        name = None
        if self.peek(" ") and not self.peek(" ->"):
            self.pos += 1
            name = self.ident("a return name")
        return Return(name, t, annotation)
