"""Limits the generator enforces on what a manifest may write, each stated once.

MAX_DEPTH bounds how deeply rule and formula expressions nest: their parsers, printers and
checkers recurse once per level, so 400 nested parentheses (or a chain of 1000 '+', a tree 1000
levels deep) would overflow Python's stack: a traceback instead of a message. No real rule or
formula comes near it. INT64_MAX bounds integer literals: the generated C++ holds them in int64_t.
The runtime's own limits are defined in C++; their values here are checked against it.
"""

from __future__ import annotations

import dataclasses

MAX_DEPTH = 64
INT64_MAX = 2**63 - 1
# The runtime's limits, as the generated code must respect them; tests/codegen/test_limits.py
# checks each against its C++ definition.
MAX_POINTWISE_TENSORS = 3  # structgen/cpu/rows.h kMaxOperands - 1 (the output)
GRAIN_SIZE = 32768  # structgen/cpu/rows.h kGrainSize: torch's at::internal::GRAIN_SIZE


def check_int64(digits: str, col: int, error: type[ValueError]) -> None:
    """An integer literal the generated C++ can hold; a larger one would be truncated."""
    if int(digits) > INT64_MAX:
        raise error(f"integer {digits} at column {col} is beyond the int64 range (at most {INT64_MAX})")


def tree_depth(node: object) -> int:
    """The depth of an AST of dataclasses (children in fields, or in tuples in fields), counted
    without recursion: the tree is checked because it may be too deep to recurse over."""
    deepest = 0
    stack = [(node, 1)]
    while stack:
        n, depth = stack.pop()
        deepest = max(deepest, depth)
        values = [getattr(n, f.name) for f in dataclasses.fields(n)]
        while values:
            v = values.pop()
            if isinstance(v, tuple):
                values.extend(v)
            elif dataclasses.is_dataclass(v):
                stack.append((v, depth + 1))
    return deepest
