"""A cache for pure functions of one model object, keyed by the object's identity.

The generator asks for the same derived structure several times per object (a schema's C++
signature: entry checks, a wrapper per dispatch key, autograd; an op's header: its declarations,
meta function, hooks, pointwise kernels). Hashing a deep frozen dataclass costs more than most of
these functions, so the key is ``id``; the argument is kept with the result so that its id cannot
be reused by another object while the entry lives.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import TypeVar

A = TypeVar("A")
R = TypeVar("R")

# Entries kept before the cache starts over: many manifests in one process (the tests).
LIMIT = 65536


def by_identity(fn: Callable[[A], R]) -> Callable[[A], R]:
    cache: dict[int, tuple[A, R]] = {}

    @wraps(fn)
    def cached(arg: A) -> R:
        hit = cache.get(id(arg))
        if hit is not None and hit[0] is arg:
            return hit[1]
        if len(cache) > LIMIT:
            cache.clear()
        result = fn(arg)
        cache[id(arg)] = (arg, result)
        return result

    return cached
