"""Samples drawn from an op's own rule, for ops whose manifest gives no `tests.samples` and that
are neither pointwise nor reductions (those have generators of their own).

Each tensor input's shape follows its pattern (`[*batch, n, k]`: one size per named dim, shared
across inputs; groups of 0 to 5 dims in all; `_` and literal dims), sizes come from {0, 1, 2, 3,
4}, and layouts vary (contiguous, transposed, every other element). An input without a pattern
gets a random shape of rank 0 to 5, or the first input's shape. Arguments without a default or a
`tests.args` value get one by their kind (a dim within the first tensor's rank, a list of such
dims, a bool, a number). The same builder is driven by a seeded random.Random (the deterministic
samples every check runs) or by hypothesis (the property check).
"""

from __future__ import annotations

import random
from typing import Any, Protocol

import torch

from structgen.codegen.dest.conformance_suite import SuiteSpec
from structgen.codegen.model.rule_tree import PAny, PDim, PGroup, PLiteral
from structgen.codegen.rules.syntax import parse_pattern
from structgen.conformance.spec import compiled, functional
from structgen.conformance.tensors import Sample, call_args, dtype_of, laid_out, values

SIZES = (2, 3, 1, 0, 4)  # 0 and 1 included: empty and broadcastable dims
LAYOUTS = ("contiguous", "transposed", "strided")
MAX_RANK = 5


class Pick(Protocol):
    """Where the builder's choices come from."""

    def choice(self, options: tuple) -> Any: ...
    def integer(self, lo: int, hi: int) -> int: ...  # inclusive


class RandomPick:
    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)

    def choice(self, options: tuple) -> Any:
        return self.random.choice(options)

    def integer(self, lo: int, hi: int) -> int:
        return self.random.randint(lo, hi)


class HypothesisPick:
    def __init__(self, draw) -> None:
        from hypothesis import strategies as st

        self.draw, self.st = draw, st

    def choice(self, options: tuple) -> Any:
        return self.draw(self.st.sampled_from(options))

    def integer(self, lo: int, hi: int) -> int:
        return self.draw(self.st.integers(lo, hi))


def drawn_sample(pick: Pick, spec: SuiteSpec, dtype: torch.dtype, device: str, seed: int) -> Sample:
    kinds = dict(spec.arg_kinds)
    patterns = {arg: parse_pattern(text) for arg, _, text in spec.patterns}
    own_dtypes = dict(spec.arg_dtypes)
    gen = torch.Generator().manual_seed(seed)
    sizes: dict[str, int] = {}  # named dims
    groups: dict[str, list[int]] = {}  # named groups
    named: dict[str, Any] = {}
    budget = [pick.integer(0, MAX_RANK)]  # dims the groups may still take

    def group(name: str) -> list[int]:
        if name not in groups:
            n = pick.integer(0, budget[0])
            budget[0] -= n
            groups[name] = [pick.choice(SIZES) for _ in range(n)]
        return groups[name]

    def shape_of(arg: str, first_shape: list[int] | None) -> list[int]:
        if arg not in patterns:
            if first_shape is not None and pick.choice((True, False)):
                return list(first_shape)
            return [pick.choice(SIZES) for _ in range(pick.integer(0, MAX_RANK))]
        shape: list[int] = []
        for it in patterns[arg].items:
            if isinstance(it, PAny):
                shape.append(pick.choice(SIZES))
            elif isinstance(it, PLiteral):
                shape.append(it.size)
            elif isinstance(it, PDim) and it.per_element:
                shape.append(pick.choice(SIZES))
            elif isinstance(it, PDim):
                shape.append(sizes.setdefault(it.name, pick.choice(SIZES)))
            elif isinstance(it, PGroup) and kinds.get(it.name) == "ints":  # *normalized_shape
                shape.extend(
                    named.setdefault(it.name, [pick.choice(SIZES) for _ in range(pick.integer(0, 2))])
                )
            else:
                shape.extend(group(it.name))
        return shape

    def tensor(arg: str, shape: list[int]) -> torch.Tensor:
        own = own_dtypes.get(arg)
        t_dtype = dtype if own is None or str(dtype).removeprefix("torch.") in own else dtype_of(own[-1])
        domain = "unit" if own is not None and t_dtype != dtype else spec.domain  # indices: small
        x = values(tuple(shape), t_dtype, device, "positive" if domain == "unit" else domain, gen)
        if domain == "unit":
            x = x.abs() % 2  # 0 or 1: an index valid for any dim of size 2 or more
        return laid_out(x, pick.choice(LAYOUTS)) if len(shape) >= 2 else x

    first: list[int] | None = None
    for arg, kind in spec.arg_kinds:
        if kind == "tensor":
            shape = shape_of(arg, first)
            first = shape if first is None else first
            named[arg] = tensor(arg, shape)
        elif kind == "tensors":
            named[arg] = [tensor(arg, shape_of(arg, first)) for _ in range(pick.integer(1, 3))]
        elif kind == "tensor?" and pick.choice((False, True)):
            named[arg] = tensor(arg, shape_of(arg, first))
    sources = compiled(spec)
    rank = max(len(first or ()), 1)
    for arg, kind in spec.arg_kinds:
        if arg in named or kind in ("tensor", "tensors"):
            continue
        if arg in sources.arg_values:
            named[arg] = pick.choice(tuple(sources.arg_values[arg]))
        elif arg in sources.defaults:
            named[arg] = sources.defaults[arg]
        elif kind in ("int", "int?"):
            named[arg] = pick.integer(-rank, rank - 1)
        elif kind in ("ints", "ints?"):
            named[arg] = sorted({pick.integer(0, rank - 1) for _ in range(pick.integer(1, rank))})
        elif kind == "bool":
            named[arg] = pick.choice((False, True))
        elif kind in ("scalar", "scalar?"):
            named[arg] = pick.choice((2, 0.5))
        elif kind.endswith("?") or kind == "tensor?":
            named[arg] = None
    return call_args(spec, named, "drawn from the rule")


def accepted(spec: SuiteSpec, sample: Sample) -> bool:
    """Whether the reference or the op (on meta tensors) takes the sample: a sample both refuse
    says nothing, one only the reference takes shows a gap the checks report."""
    reference = compiled(spec).reference
    calls = [lambda: sample.on_meta().call(functional(spec))]
    if reference is not None:
        calls.append(lambda: sample.call(reference))
    for call in calls:
        try:
            call()
            return True
        except (RuntimeError, IndexError, ValueError, TypeError):
            continue
    return False


def rule_samples(spec: SuiteSpec, device: str, dtype: torch.dtype, seed: int, want: int = 6) -> list[Sample]:
    """Up to ``want`` accepted samples among the first 200 drawn with a seeded generator."""
    pick = RandomPick(seed)
    found: list[Sample] = []
    for i in range(200):
        s = drawn_sample(pick, spec, dtype, device, seed + i)
        if accepted(spec, s):
            found.append(s)
            if len(found) == want:
                break
    return found
