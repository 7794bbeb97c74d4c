"""The pointwise formula language's trees, and walks over them (the names a formula reads,
substitution, its operation count). Data only: pointwise/syntax.py builds them; lowering, the
derivative rules and the printers read them. Every node prints back to source for error messages.
"""

from __future__ import annotations

from dataclasses import dataclass

COMPARISONS = ("==", "!=", "<", "<=", ">", ">=")


@dataclass(frozen=True)
class Lit:
    value: int | float | str | bool | None
    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Var:
    name: str

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Call:
    fn: str
    args: tuple[Node, ...]

    def __str__(self) -> str:
        return f"{self.fn}({', '.join(str(a) for a in self.args)})"


@dataclass(frozen=True)
class Bin:
    op: str
    lhs: Node
    rhs: Node

    def __str__(self) -> str:
        return f"{_paren(self.lhs)} {self.op} {_paren(self.rhs)}"


@dataclass(frozen=True)
class Un:
    op: str  # - ~ not
    operand: Node

    def __str__(self) -> str:
        return f"{self.op}{' ' if self.op == 'not' else ''}{_paren(self.operand)}"


Node = Lit | Var | Call | Bin | Un


def _paren(n: Node) -> str:
    return f"({n})" if isinstance(n, Bin) else str(n)


# -- walks over a formula ----------------------------------------------------------------------


def free_names(n: Node) -> set[str]:
    """The names a formula reads."""
    if isinstance(n, Var):
        return {n.name}
    if isinstance(n, Un):
        return free_names(n.operand)
    if isinstance(n, Bin):
        return free_names(n.lhs) | free_names(n.rhs)
    if isinstance(n, Call):
        return set().union(*(free_names(a) for a in n.args)) if n.args else set()
    return set()


def substitute(n: Node, name: str, value: Node) -> Node:
    """The formula with ``value`` in place of each read of ``name``."""
    if isinstance(n, Var):
        return value if n.name == name else n
    if isinstance(n, Un):
        return Un(n.op, substitute(n.operand, name, value))
    if isinstance(n, Bin):
        return Bin(n.op, substitute(n.lhs, name, value), substitute(n.rhs, name, value))
    if isinstance(n, Call):
        return Call(n.fn, tuple(substitute(a, name, value) for a in n.args))
    return n


def operation_count(n: Node) -> int:
    """How many operations a formula computes (conj counts none: a real value's is itself)."""
    if isinstance(n, Lit | Var):
        return 0
    if isinstance(n, Un):
        return 1 + operation_count(n.operand)
    if isinstance(n, Bin):
        return 1 + operation_count(n.lhs) + operation_count(n.rhs)
    assert isinstance(n, Call)
    return (0 if n.fn == "conj" else 1) + sum(operation_count(a) for a in n.args)
