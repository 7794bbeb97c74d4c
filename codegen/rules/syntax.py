"""The rule language's syntax: a tokenizer and a recursive-descent parser building the nodes of
model/rule_tree.py.

Two forms share one token set. A *pattern* describes an input's shape and binds names:
``[*batch, n, k]``, ``[*pre:dim, c[i], *post]``, ``[3, _, n]``. An *expression* computes a
value: ``[*broadcast(ba, bb), n, m]``, ``reduce(self, dim, keepdim)``, ``dtype or long``,
``promote(self, other) if given(rounding_mode) else promote(self, other, kind=INT_TO_FLOAT)``.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from functools import lru_cache

from structgen.codegen.limits import MAX_DEPTH, check_int64, tree_depth
from structgen.codegen.model.rule_tree import (
    BinOp,
    Call,
    Cond,
    Element,
    Expr,
    Name,
    Num,
    PAny,
    Pattern,
    PDim,
    PGroup,
    PItem,
    PLiteral,
    ShapeList,
    Star,
    UnaryOp,
)


class RuleSyntaxError(ValueError):
    """Bad rule text; the message names the column and what was expected."""


# ---------------------------------------------------------------------------------------------
# Tokens and parser

_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z_0-9]*)|(//|==|!=|<=|>=|[-+*%<>()\[\],:=]))")
_KEYWORDS = {"and", "or", "not", "if", "else"}


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
            raise RuleSyntaxError(f"unexpected character {text[pos]!r} at column {pos + 1}")
        num, name, op = m.groups()
        col = m.start(m.lastindex) + 1
        if num is not None:
            check_int64(num, col, RuleSyntaxError)
            tokens.append(("num", num, col))
        elif name is not None:
            tokens.append(("kw" if name in _KEYWORDS else "name", name, col))
        else:
            tokens.append(("op", op, col))
        pos = m.end()
    tokens.append(("end", "", len(text) + 1))
    return tokens


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens = _tokenize(text)
        self.i = 0
        self.depth = 0

    @contextmanager
    def nested(self):
        """One level of parentheses, brackets, a call or a unary operator: bounded (codegen/limits.py)."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise RuleSyntaxError(
                f"nested more than {MAX_DEPTH} levels deep at column {self.tokens[self.i][2]}"
            )
        try:
            yield
        finally:
            self.depth -= 1

    def peek(self, value: str | None = None, kind: str | None = None) -> bool:
        k, v, _ = self.tokens[self.i]
        return (value is None or v == value) and (kind is None or k == kind)

    def take(self) -> tuple[str, str, int]:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def expect(self, value: str, alternative: str | None = None) -> None:
        k, v, col = self.take()
        if v != value:
            shown = "the end" if k == "end" else repr(v)
            wanted = f"{value!r}" + (f" or {alternative}" if alternative else "")
            raise RuleSyntaxError(f"expected {wanted} at column {col}, found {shown}")

    def done(self) -> None:
        k, v, col = self.tokens[self.i]
        if k != "end":
            raise RuleSyntaxError(f"unexpected {v!r} at column {col}")

    # Patterns --------------------------------------------------------------------------------

    def pattern(self) -> Pattern:
        self.expect("[")
        items: list[PItem] = []
        while not self.peek("]"):
            items.append(self.pattern_item())
            if not self.peek("]"):
                self.expect(",", "']'")
        self.expect("]")
        return Pattern(tuple(items))

    def pattern_item(self) -> PItem:
        k, v, col = self.take()
        if v == "*":
            k, name, col = self.take()
            if k != "name":
                raise RuleSyntaxError(f"expected a group name after '*' at column {col}")
            length = None
            if self.peek(":"):
                self.take()
                length = self.arith()
            return PGroup(name, length)
        if k == "num":
            return PLiteral(int(v))
        if k == "name":
            if v == "_":
                return PAny()
            if self.peek("["):
                self.take()
                self.expect("i")
                self.expect("]")
                return PDim(v, per_element=True)
            return PDim(v)
        shown = "the end" if k == "end" else repr(v)
        raise RuleSyntaxError(f"expected a dim name, a size, '_' or '*group' at column {col}, found {shown}")

    # Expressions -----------------------------------------------------------------------------

    def expr(self) -> Expr:
        then = self.or_expr()
        if not self.peek("if", "kw"):
            return then
        self.take()
        test = self.or_expr()
        self.expect("else")
        return Cond(test, then, self.expr())

    def or_expr(self) -> Expr:
        lhs = self.and_expr()
        while self.peek("or"):
            self.take()
            lhs = BinOp("or", lhs, self.and_expr())
        return lhs

    def and_expr(self) -> Expr:
        lhs = self.not_expr()
        while self.peek("and"):
            self.take()
            lhs = BinOp("and", lhs, self.not_expr())
        return lhs

    def not_expr(self) -> Expr:
        if self.peek("not"):
            with self.nested():
                self.take()
                return UnaryOp("not", self.not_expr())
        lhs = self.arith()
        if any(self.peek(op, "op") for op in ("==", "!=", "<", "<=", ">", ">=")):
            op = self.take()[1]
            return BinOp(op, lhs, self.arith())
        return lhs

    def arith(self) -> Expr:
        lhs = self.term()
        while self.peek("+") or self.peek("-"):
            op = self.take()[1]
            lhs = BinOp(op, lhs, self.term())
        return lhs

    def term(self) -> Expr:
        lhs = self.unary()
        while any(self.peek(op, "op") for op in ("*", "//", "%")):
            op = self.take()[1]
            lhs = BinOp(op, lhs, self.unary())
        return lhs

    def unary(self) -> Expr:
        if self.peek("-"):
            with self.nested():
                self.take()
                return UnaryOp("-", self.unary())
        with self.nested():
            return self.atom()

    def atom(self) -> Expr:
        k, v, col = self.take()
        if k == "num":
            return Num(int(v))
        if k == "name":
            if self.peek("("):
                self.take()
                return self.call(v)
            if self.peek("["):
                self.take()
                self.expect("i")
                self.expect("]")
                return Element(v)
            return Name(v)
        if v == "(":
            e = self.expr()
            self.expect(")")
            return e
        if v == "[":
            items: list[Expr | Star] = []
            while not self.peek("]"):
                if self.peek("*"):
                    self.take()
                    items.append(Star(self.arith()))
                else:
                    items.append(self.expr())
                if not self.peek("]"):
                    self.expect(",", "']'")
            self.expect("]")
            return ShapeList(tuple(items))
        shown = "the end" if k == "end" else repr(v)
        raise RuleSyntaxError(f"expected a value at column {col}, found {shown}")

    def call(self, fn: str) -> Call:
        args: list[Expr] = []
        kwargs: list[tuple[str, Expr]] = []
        while not self.peek(")"):
            if self.peek(kind="name") and self.tokens[self.i + 1][1] == "=":
                key = self.take()[1]
                self.take()
                kwargs.append((key, self.expr()))
            else:
                if kwargs:
                    raise RuleSyntaxError(f"positional argument after a keyword in {fn}()")
                args.append(self.expr())
            if not self.peek(")"):
                self.expect(",", "')'")
        self.expect(")")
        return Call(fn, tuple(args), tuple(kwargs))


def _bounded(tree: Expr | Pattern) -> None:
    if tree_depth(tree) > MAX_DEPTH:
        raise RuleSyntaxError(
            f"nested more than {MAX_DEPTH} levels deep (each operator of a chain is a level)"
        )


# Parsed once per text: a manifest repeats its rules (this repo's: 403 rule texts, 146 distinct),
# and the trees are immutable. A text that fails raises each time (exceptions are not cached).
@lru_cache(maxsize=4096)
def parse_pattern(text: str) -> Pattern:
    p = _Parser(text)
    pattern = p.pattern()
    p.done()
    _bounded(pattern)
    return pattern


@lru_cache(maxsize=4096)
def parse_expr(text: str) -> Expr:
    p = _Parser(text)
    e = p.expr()
    p.done()
    _bounded(e)
    return e
