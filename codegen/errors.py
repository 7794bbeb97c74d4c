"""SpecError: the one way the generator reports a bad manifest."""

from __future__ import annotations

import re
from dataclasses import dataclass

# A quoted value longer than this is cut in messages: a manifest value may be megabytes long,
# and an error that repeats it is unreadable (and was, for YAML alias bombs, 312 MB). Long
# enough for the canonical spelling of any schema in PyTorch's manifest, which fixes quote.
QUOTE_LIMIT = 500
_LONG_QUOTE = re.compile(f"'[^']{{{QUOTE_LIMIT + 1},}}'|\"[^\"]{{{QUOTE_LIMIT + 1},}}\"")
# Whatever is not quoted (a repr of a huge list) is bounded as a whole.
TEXT_LIMIT = 2000


def shorten(text: str, limit: int = QUOTE_LIMIT) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis."""
    return text if len(text) <= limit else text[:limit] + "…"


def _bound(text: str) -> str:
    text = _LONG_QUOTE.sub(lambda m: m[0][0] + shorten(m[0][1:-1]) + m[0][0], text)
    return shorten(text, TEXT_LIMIT)


@dataclass
class SpecError(Exception):  # not frozen: raising through a context manager sets __traceback__
    """A manifest problem, printed as ``file:line: op: what is wrong — how to fix it``.

    ``op`` is the entry's schema string (or None for problems outside an entry). ``fix`` is
    mandatory on purpose: an error a user cannot act on is half an error. Quoted values are
    cut to QUOTE_LIMIT characters, so no manifest value makes a message unbounded.
    """

    path: str
    line: int
    op: str | None
    problem: str
    fix: str

    def __post_init__(self) -> None:
        self.problem = _bound(self.problem)
        self.fix = _bound(self.fix)
        if self.op is not None:
            self.op = shorten(self.op, TEXT_LIMIT)

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}: "
        if self.op:
            where += f"{self.op}: "
        return f"{where}{self.problem} — {self.fix}"


class Problem(Exception):
    """What is wrong with one key's text, and how to fix it, found before its line is known: the
    entry checker raises it again as a SpecError at the key's line (formulas, composite calls)."""

    def __init__(self, problem: str, fix: str):
        super().__init__(problem)
        self.problem, self.fix = problem, fix
