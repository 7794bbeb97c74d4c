"""SpecError: the one way the generator reports a bad manifest."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class SpecError(Exception):  # not frozen: raising through a context manager sets __traceback__
    """A manifest problem, printed as ``file:line: op: what is wrong — how to fix it``.

    ``op`` is the entry's schema string (or None for problems outside an entry). ``fix`` is
    mandatory on purpose: an error a user cannot act on is half an error.
    """

    path: str
    line: int
    op: str | None
    problem: str
    fix: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}: "
        if self.op:
            where += f"{self.op}: "
        return f"{where}{self.problem} — {self.fix}"
