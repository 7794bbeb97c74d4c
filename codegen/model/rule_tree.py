"""The rule language's trees: the nodes a rule's patterns and expressions parse to.

Every node prints back to source (``str``), which error messages quote, and converts to plain
tuples (``data``) that the generated Python mirror embeds. Data only: the parser
(rules/syntax.py) builds them, the checker and printers read them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Num:
    value: int

    def __str__(self) -> str:
        return str(self.value)

    def data(self) -> tuple:
        return ("num", self.value)


@dataclass(frozen=True)
class Name:
    id: str

    def __str__(self) -> str:
        return self.id

    def data(self) -> tuple:
        return ("name", self.id)


@dataclass(frozen=True)
class Element:
    """``c[i]``: the per-element value of a name bound by a Tensor[] pattern."""

    id: str

    def __str__(self) -> str:
        return f"{self.id}[i]"

    def data(self) -> tuple:
        return ("element", self.id)


@dataclass(frozen=True)
class Call:
    fn: str
    args: tuple[Expr, ...]
    kwargs: tuple[tuple[str, Expr], ...] = ()

    def __str__(self) -> str:
        parts = [str(a) for a in self.args] + [f"{k}={v}" for k, v in self.kwargs]
        return f"{self.fn}({', '.join(parts)})"

    def data(self) -> tuple:
        return (
            "call",
            self.fn,
            tuple(a.data() for a in self.args),
            tuple((k, v.data()) for k, v in self.kwargs),
        )


@dataclass(frozen=True)
class BinOp:
    op: str  # + - * // % == != < <= > >= and or
    lhs: Expr
    rhs: Expr

    def __str__(self) -> str:
        return f"{_paren(self.lhs)} {self.op} {_paren(self.rhs)}"

    def data(self) -> tuple:
        return ("binop", self.op, self.lhs.data(), self.rhs.data())


@dataclass(frozen=True)
class UnaryOp:
    op: str  # - not
    operand: Expr

    def __str__(self) -> str:
        return f"{self.op}{' ' if self.op == 'not' else ''}{_paren(self.operand)}"

    def data(self) -> tuple:
        return ("unary", self.op, self.operand.data())


@dataclass(frozen=True)
class Star:
    """``*x`` inside a shape list: splice a list of dims."""

    value: Expr

    def __str__(self) -> str:
        return f"*{self.value}"

    def data(self) -> tuple:
        return ("star", self.value.data())


@dataclass(frozen=True)
class ShapeList:
    items: tuple[Expr | Star, ...]

    def __str__(self) -> str:
        return "[" + ", ".join(str(i) for i in self.items) + "]"

    def data(self) -> tuple:
        return ("list", tuple(i.data() for i in self.items))


@dataclass(frozen=True)
class Cond:
    """``then if test else otherwise``: one of two values, chosen per call (e.g. a dtype rule that
    depends on whether an optional argument was given)."""

    test: Expr
    then: Expr
    otherwise: Expr

    def __str__(self) -> str:
        return f"{_paren(self.then)} if {_paren(self.test)} else {self.otherwise}"

    def data(self) -> tuple:
        return ("if", self.test.data(), self.then.data(), self.otherwise.data())


Expr = Num | Name | Element | Call | BinOp | UnaryOp | ShapeList | Cond


def _paren(e: Expr) -> str:
    return f"({e})" if isinstance(e, (BinOp, Cond)) else str(e)


@dataclass(frozen=True)
class PDim:
    """A named dim; ``per_element`` for ``c[i]`` in a Tensor[] pattern."""

    name: str
    per_element: bool = False

    def __str__(self) -> str:
        return f"{self.name}[i]" if self.per_element else self.name

    def data(self) -> tuple:
        return ("dim", self.name, self.per_element)


@dataclass(frozen=True)
class PLiteral:
    size: int

    def __str__(self) -> str:
        return str(self.size)

    def data(self) -> tuple:
        return ("literal", self.size)


@dataclass(frozen=True)
class PAny:
    def __str__(self) -> str:
        return "_"

    def data(self) -> tuple:
        return ("any",)


@dataclass(frozen=True)
class PGroup:
    """``*name`` (any number of dims) or ``*name:pos`` (the dims before position ``pos``)."""

    name: str
    length: Expr | None = None

    def __str__(self) -> str:
        return f"*{self.name}" + (f":{self.length}" if self.length is not None else "")

    def data(self) -> tuple:
        return ("group", self.name, None if self.length is None else self.length.data())


PItem = PDim | PLiteral | PAny | PGroup


@dataclass(frozen=True)
class Pattern:
    items: tuple[PItem, ...]

    def __str__(self) -> str:
        return "[" + ", ".join(str(i) for i in self.items) + "]"

    def data(self) -> tuple:
        return ("pattern", tuple(i.data() for i in self.items))

    @property
    def group_index(self) -> int | None:
        return next((i for i, it in enumerate(self.items) if isinstance(it, PGroup)), None)
