"""The pointwise formula language's syntax: tokenizer and recursive-descent parser
building model/formula.py's nodes.

A formula is one Python-like expression over the op's arguments, e.g.
``self + alpha * other``, ``where(self > 0, self, alpha * expm1(self))``,
``clamp(self, min, max)``. Precedence, loosest first: ``or``, ``and``, ``not``, comparisons,
``|``, ``^``, ``&``, ``+ -``, ``* / // %``, unary ``- ~``.
"""

from __future__ import annotations

import functools
import re
from contextlib import contextmanager

from structgen.codegen.limits import MAX_DEPTH, check_int64, tree_depth
from structgen.codegen.model.formula import COMPARISONS, Bin, Call, Lit, Node, Un, Var


class FormulaSyntaxError(ValueError):
    """Bad formula text; the message names the column and what was expected."""


_TOKEN = re.compile(
    r"(?P<num>(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?)"
    r"|(?P<str>\"[^\"]*\"|'[^']*')"
    r"|(?P<name>[A-Za-z_][A-Za-z_0-9]*)"
    r"|(?P<op>//|==|!=|<=|>=|[-+*/%<>()&|^~,])"
)
_KEYWORDS = {"and", "or", "not", "True", "False", "None"}
# Binary operator levels, loosest first (and/or/not and comparisons are handled separately).
_LEVELS = (("|",), ("^",), ("&",), ("+", "-"), ("*", "/", "//", "%"))


def _tokenize(text: str) -> list[tuple[str, str, int]]:
    tokens = []
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            break
        m = _TOKEN.match(text, pos)
        if not m:
            raise FormulaSyntaxError(f"unexpected character {text[pos]!r} at column {pos + 1}")
        kind = m.lastgroup
        value = m.group(kind)
        if kind == "name" and value in _KEYWORDS:
            kind = "kw"
        if kind == "num" and value.isdigit():
            check_int64(value, pos + 1, FormulaSyntaxError)
        tokens.append((kind, value, pos + 1))
        pos = m.end()
    tokens.append(("end", "", len(text) + 1))
    return tokens


class _Parser:
    def __init__(self, text: str):
        self.tokens = _tokenize(text)
        self.i = 0
        self.depth = 0

    @contextmanager
    def nested(self):
        """One level of parentheses, a call or a unary operator: bounded (codegen/limits.py)."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise FormulaSyntaxError(
                f"nested more than {MAX_DEPTH} levels deep at column {self.tokens[self.i][2]}"
            )
        try:
            yield
        finally:
            self.depth -= 1

    def peek(self, *values: str) -> bool:
        return self.tokens[self.i][1] in values and self.tokens[self.i][0] in ("op", "kw")

    def take(self) -> tuple[str, str, int]:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def expect(self, value: str) -> None:
        kind, v, col = self.take()
        if v != value or kind not in ("op", "kw"):
            raise FormulaSyntaxError(
                f"expected {value!r} at column {col}, found {'the end' if kind == 'end' else repr(v)}"
            )

    def expr(self) -> Node:
        lhs = self.and_()
        while self.peek("or"):
            self.take()
            lhs = Bin("or", lhs, self.and_())
        return lhs

    def and_(self) -> Node:
        lhs = self.not_()
        while self.peek("and"):
            self.take()
            lhs = Bin("and", lhs, self.not_())
        return lhs

    def not_(self) -> Node:
        if self.peek("not"):
            with self.nested():
                self.take()
                return Un("not", self.not_())
        lhs = self.level(0)
        if self.peek(*COMPARISONS):
            op = self.take()[1]
            rhs = self.level(0)
            if self.peek(*COMPARISONS):
                raise FormulaSyntaxError(
                    f"chained comparison at column {self.tokens[self.i][2]}: write 'a < b and b < c'"
                )
            return Bin(op, lhs, rhs)
        return lhs

    def level(self, n: int) -> Node:
        if n == len(_LEVELS):
            return self.unary()
        lhs = self.level(n + 1)
        while self.peek(*_LEVELS[n]):
            op = self.take()[1]
            lhs = Bin(op, lhs, self.level(n + 1))
        return lhs

    def unary(self) -> Node:
        if self.peek("-", "~"):
            with self.nested():
                op = self.take()[1]
                return Un(op, self.unary())
        with self.nested():
            return self.atom()

    def atom(self) -> Node:
        kind, v, col = self.take()
        if kind == "num":
            is_int = re.fullmatch(r"\d+", v) is not None
            return Lit(int(v) if is_int else float(v), v)
        if kind == "str":
            return Lit(v[1:-1], v)
        if kind == "kw" and v in ("True", "False", "None"):
            return Lit({"True": True, "False": False, "None": None}[v], v)
        if kind == "name":
            if self.peek("("):
                self.take()
                args: list[Node] = []
                while not self.peek(")"):
                    args.append(self.expr())
                    if not self.peek(")"):
                        self.expect(",")
                self.expect(")")
                return Call(v, tuple(args))
            return Var(v)
        if kind == "op" and v == "(":
            e = self.expr()
            self.expect(")")
            return e
        raise FormulaSyntaxError(
            f"expected a value at column {col}, found {'the end' if kind == 'end' else repr(v)}"
        )


@functools.lru_cache(maxsize=4096)
def parse_formula(text: str) -> Node:
    """The tree of a formula (cached: derived gradients repeat their texts across ops; the nodes
    are frozen)."""
    p = _Parser(text)
    node = p.expr()
    kind, v, col = p.tokens[p.i]
    if kind != "end":
        raise FormulaSyntaxError(f"unexpected {v!r} at column {col}")
    if tree_depth(node) > MAX_DEPTH:
        raise FormulaSyntaxError(
            f"nested more than {MAX_DEPTH} levels deep (each operator of a chain is a level)"
        )
    return node
