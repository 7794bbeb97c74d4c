"""The vmap check: torch.func.vmap over every op against a loop over the batch elements, and
which calls structgen.vmap may run as a loop (registered into checks.CHECKS on import)."""

from __future__ import annotations

import functools
import re

import pytest
import torch

from structgen import vmap as batching_rules
from structgen.codegen.dest.conformance_suite import SuiteSpec
from structgen.conformance.checks import _outputs, assert_matches, check
from structgen.conformance.samples import samples
from structgen.conformance.spec import functional, overload, qualified
from structgen.conformance.tensors import Sample, seed_call


def _spread(found: list, want: int = 6) -> list:
    return found[:: max(1, len(found) // want)][:want]


def _examples(sample: Sample, size: int, fn) -> list[Sample]:
    """``size`` batch elements: the sample with each tensor's values rolled by the element's
    index (the same values, so every element stays in the op's domain, in another order)."""

    def roll(b):
        return sample.map_tensors(lambda t: t.flatten().roll(b).reshape(t.shape) if t.numel() else t)

    rolled = [roll(b) for b in range(size)]
    try:
        for e in rolled:
            e.call(fn)
    except (RuntimeError, IndexError, ValueError):
        return [sample] * size  # a rolled element the op refuses (embedding_bag's sorted offsets)
    return rolled


@check(few_dtypes=True)
def check_vmap(spec: SuiteSpec, device: str, dtype: str) -> None:
    """torch.func.vmap over 3 batch elements, batched at dim 0 or the last dim, with every tensor,
    the first or the last alone, or every tensor but the first (per-example weights) batched,
    equals a loop over the elements (structgen.vmap's rule, one batched call where the index space
    allows it), on a spread of the samples; no sample's plan loops unless the manifest says so
    (tests.vmap_loops); a batch of no elements gives empty results."""
    if spec.dynamic_output_shape:
        pytest.skip("the output size depends on the data: vmap cannot stack elements of different sizes")
    if spec.seeded:
        _check_vmap_random(spec, device, dtype)
        return
    size = 3
    fn = functional(spec)
    looped = looped_others = False
    loops = spec.vmap_loops[0] if spec.vmap_loops else None  # which calls may loop (the manifest)
    found = samples(spec, device, dtype)
    run = {id(s) for s in _spread(found)}  # values on a spread of the samples, plans on every one
    for s in found:
        tensors = [(i, a) for i, a in enumerate(s.args) if isinstance(a, torch.Tensor)]
        if not tensors:
            continue
        examples = _examples(s, size, fn) if id(s) in run else []
        patterns = [[i for i, _ in tensors], [tensors[0][0]], [tensors[-1][0]], [i for i, _ in tensors[1:]]]
        for batched in {tuple(p) for p in patterns if p}:
            ctx = f"{spec.name} vmap over args {list(batched)} of {s!r}"
            plan = (  # an op without a rule (meta: custom) has no batching rule: torch's loop runs
                batching_rules.plan(
                    qualified(spec), {(spec.positional[i], None) for i in batched}, size, *s.args, **s.kwargs
                )
                if spec.described
                else batching_rules.Plan("loop", why="no meta rule")
            )
            # A 0-d element reduced whole may loop: no dim list says "every dim but the batch".
            if plan.kind == "loop" and spec.described and tensors[0][1].dim() > 0:
                listed = f"{ctx}: loops, {plan.why} (a call that cannot batch: say so in tests.vmap_loops)"
                if batched == (tensors[0][0],):
                    assert loops == "every", listed
                    looped = True
                else:
                    assert loops is not None, listed
                    looped_others = True
            for at_end in (False, True) if examples else ():
                _check_values(spec, s, examples, batched, at_end, plan.kind, fn)
    first = next(
        (s for s in found if id(s) in run and any(isinstance(a, torch.Tensor) for a in s.args)), None
    )
    if first is not None:
        _check_empty_batch(spec, first, fn)
    if loops == "every" and spec.described:
        assert looped, f"{spec.name}: tests.vmap_loops says every call may loop, but every sample ran batched"
    if loops == "others" and device == "cpu":
        assert looped_others, (
            f"{spec.name}: tests.vmap_loops says calls batching others loop, but they ran batched"
        )


def _check_vmap_random(spec: SuiteSpec, device: str, dtype: str) -> None:
    """A random op under vmap, batched at dim 0 (structgen.vmap's randomness modes): refused by
    name under randomness="error", as torch refuses its own; with "same" every element draws what
    one call from the same seed draws; with "different" the elements draw in turn from it."""
    fn = functional(spec)
    for s in _spread(samples(spec, device, dtype)):
        tensors = [i for i, a in enumerate(s.args) if isinstance(a, torch.Tensor)]
        if not tensors:
            continue
        examples = _examples(s, 3, fn)
        in_dims = tuple(0 if i in tensors else None for i in range(len(s.args)))
        stacked = [
            torch.stack([e.args[i] for e in examples]) if i in tensors else a for i, a in enumerate(s.args)
        ]
        call = functools.partial(fn, **s.kwargs)
        with pytest.raises(RuntimeError, match="randomness error mode"):
            torch.func.vmap(call, in_dims)(*stacked)
        for randomness in ("same", "different"):
            vmapped = torch.func.vmap(call, in_dims, randomness=randomness)
            got = _outputs(Sample(stacked, {}, s.desc).call(vmapped))
            seed_call()  # "different": the elements in turn from one seed; "same": each from it (Sample.call)
            looped = [
                _outputs(e.call(fn) if randomness == "same" else fn(*e.args, **e.kwargs)) for e in examples
            ]
            for k, out in enumerate(got):
                want = torch.stack([r[k] for r in looped])
                assert_matches(
                    out, want, spec, s, f"vmap(randomness={randomness!r}) output {k}", check_strides=False
                )


def _check_empty_batch(spec: SuiteSpec, s: Sample, fn) -> None:
    """vmap over a batch of no elements gives empty results of the elements' shapes and dtypes
    (as torch's vmap does), batched plan or loop alike."""
    in_dims = tuple(0 if isinstance(a, torch.Tensor) else None for a in s.args)
    args = [a.unsqueeze(0)[:0] if isinstance(a, torch.Tensor) else a for a in s.args]
    element = fn(*s.args, **s.kwargs)
    got = torch.func.vmap(functools.partial(fn, **s.kwargs), in_dims=in_dims)(*args)
    outs = (got,) if isinstance(got, torch.Tensor) else tuple(got)
    elements = (element,) if isinstance(element, torch.Tensor) else tuple(element)
    for g, e in zip(outs, elements, strict=True):
        assert (tuple(g.shape), g.dtype) == ((0, *e.shape), e.dtype), (
            f"{spec.name} vmap over a batch of none of {s!r}: {tuple(g.shape)}/{g.dtype}, "
            f"expected {(0, *e.shape)}/{e.dtype}"
        )


def _check_values(spec: SuiteSpec, s: Sample, examples, batched, at_end: bool, kind: str, fn) -> None:
    """The vmapped call, batched at dim 0 or the last dim, equals the loop over the elements."""
    in_dims = tuple((a.dim() if at_end else 0) if i in batched else None for i, a in enumerate(s.args))
    args = [
        torch.stack([e.args[i] for e in examples], dim=d) if d is not None else a
        for i, (a, d) in enumerate(zip(s.args, in_dims, strict=True))
    ]
    ctx = f"{spec.name} vmap over args {list(batched)} at {'the end' if at_end else 'dim 0'} of {s!r}"
    got = torch.func.vmap(functools.partial(fn, **s.kwargs), in_dims=in_dims)(*args)
    expected = [
        fn(*[e.args[i] if i in batched else a for i, a in enumerate(s.args)], **s.kwargs) for e in examples
    ]
    want = (
        torch.stack(expected)
        if isinstance(expected[0], torch.Tensor)
        else type(expected[0])(torch.stack(list(r)) for r in zip(*expected, strict=True))
    )
    assert_matches(got, want, spec, s, f"vmap ({kind}) vs loop, {ctx}", check_strides=False)
    if spec.inplace and 0 in batched:
        _check_inplace(spec, s, examples, batched, in_dims, args, ctx)


def _check_inplace(spec: SuiteSpec, s: Sample, examples, batched, in_dims, args, ctx: str) -> None:
    """The inplace overload under vmap writes what a loop of inplace calls writes, into the
    batched self, or refuses what the loop refuses (a dtype self cannot hold), as the loop does."""
    op = overload(spec, spec.inplace)
    written = []
    try:
        for e in examples:
            self_ = e.args[0].clone()
            op(self_, *[e.args[i] if i in batched else a for i, a in enumerate(s.args)][1:], **s.kwargs)
            written.append(self_)
    except RuntimeError as refusal:
        with pytest.raises(RuntimeError, match=re.escape(str(refusal).split(":")[0])):
            torch.func.vmap(functools.partial(op, **s.kwargs), in_dims=in_dims)(args[0].clone(), *args[1:])
        return
    self_ = args[0].clone()
    torch.func.vmap(functools.partial(op, **s.kwargs), in_dims=in_dims)(self_, *args[1:])
    want = torch.stack(written).movedim(0, in_dims[0])
    assert_matches(self_, want, spec, s, f"inplace vmap vs loop, {ctx}", check_strides=False)
