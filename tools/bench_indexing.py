"""Indexing and data-movement ops (cat, stack, split): structops vs torch eager, side by side in
one run (a script, not a test).

    .venv/bin/python tools/bench_indexing.py            # every op at three sizes
    .venv/bin/python tools/bench_indexing.py --quick    # the two smaller sizes

For each op and a small, medium and large case it times the out= call (no allocation, so the
kernels are compared, not the allocator) and the functional call, and prints the median times
and the ratio torch / structops (> 1: structops is faster). float32 throughout. torch has no
out= for embedding_bag: its out= column is the functional plus a copy, so read the functional one.
"""

from __future__ import annotations

import argparse
import statistics

import torch
import torch.nn.functional as F
from timing import side_by_side

import structops


def _gen():
    return torch.Generator().manual_seed(0)


def call(f, *args):
    """f(*args), or f(*args, out=out) given out, as direct calls (the way users write them).
    Forwarding out through f(*args, **kwargs) would cost a vectorcall function such as structops'
    entries a dict unpack in CPython (+0.2 us, tools/profile_call.py) that torch's tuple-and-dict
    bindings pay on every direct call instead."""
    if len(args) == 2:
        a, b = args
        return lambda out=None: f(a, b) if out is None else f(a, b, out=out)
    if len(args) == 3:
        a, b, c = args
        return lambda out=None: f(a, b, c) if out is None else f(a, b, c, out=out)
    a, b, c, d, e = args
    return lambda out=None: f(a, b, c, d, e) if out is None else f(a, b, c, d, e, out=out)


def cases(size: str):
    """(name, structops call, torch call, needs_out) per op for one size: small, medium, large."""
    g = _gen()
    rows, width = {"small": (1_000, 64), "medium": (50_000, 128), "large": (500_000, 256)}[size]
    n_idx = {"small": 256, "medium": 20_000, "large": 200_000}[size]
    w = torch.randn(rows, width, generator=g)
    idx = torch.randint(0, rows, (n_idx,), generator=g)
    # index_select along dim 0 (row copies) and along the last dim (element gathers)
    last = torch.randint(0, width, (width // 2,), generator=g)
    yield (
        "index_select dim0",
        call(structops.index_select, w, 0, idx),
        call(torch.index_select, w, 0, idx),
    )
    yield (
        "index_select dim1",
        call(structops.index_select, w, 1, last),
        call(torch.index_select, w, 1, last),
    )
    # gather along the last dim (top-k style) and along dim 0
    gi = torch.randint(0, width, (rows, 8), generator=g)
    yield (
        "gather dim1",
        call(structops.gather, w, 1, gi),
        call(torch.gather, w, 1, gi),
    )
    g0 = torch.randint(0, rows, (n_idx // 4 + 1, width), generator=g)
    yield (
        "gather dim0",
        call(structops.gather, w, 0, g0),
        call(torch.gather, w, 0, g0),
    )
    flat = torch.randint(-w.numel(), w.numel(), (n_idx * 4,), generator=g)
    yield ("take", call(structops.take, w, flat), call(torch.take, w, flat))
    mask = torch.rand(rows, width, generator=g) > 0.5
    yield (
        "masked_select",
        call(structops.masked_select, w, mask),
        call(torch.masked_select, w, mask),
    )
    row_mask = torch.rand(rows, 1, generator=g) > 0.5
    yield (
        "masked_select bcast",
        call(structops.masked_select, w, row_mask),
        call(torch.masked_select, w, row_mask),
    )
    offsets = torch.arange(0, n_idx, 8)
    for mode, name in ((0, "sum"), (1, "mean"), (2, "max")):
        yield (
            f"embedding_bag {name}",
            call(structops.embedding_bag, w, idx, offsets, False, mode),
            lambda name=name, out=None: (
                F.embedding_bag(idx, w, offsets, mode=name)
                if out is None
                else out.copy_(F.embedding_bag(idx, w, offsets, mode=name))
            ),
        )
    sizes = [rows // 4, rows // 2, rows - rows // 4 - rows // 2]
    yield (
        "split_with_sizes_copy",
        call(structops.split_with_sizes_copy, w, sizes, 0),
        call(torch.split_with_sizes_copy, w, sizes, 0),
    )
    yield (
        "split_with_sizes_copy dim1",
        call(structops.split_with_sizes_copy, w, [width // 2] * 2, 1),
        call(torch.split_with_sizes_copy, w, [width // 2] * 2, 1),
    )
    narrow = w[:, :16].contiguous()
    yield (
        "split_with_sizes_copy cols",  # one column per piece
        call(structops.split_with_sizes_copy, narrow, [1] * 16, 1),
        call(torch.split_with_sizes_copy, narrow, [1] * 16, 1),
    )
    halves = [h.contiguous() for h in w.chunk(2, 1)]
    for dim in (0, 1):
        yield (
            f"cat dim{dim}",
            call(structops.cat, halves, dim),
            call(torch.cat, halves, dim),
        )
    for dim in (0, -1):  # stack along the last dim interleaves single elements
        yield (
            f"stack dim{dim}",
            call(structops.stack, halves, dim),
            call(torch.stack, halves, dim),
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads (default: torch's)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    sizes = ("small", "medium") if args.quick else ("small", "medium", "large")
    print(f"device=cpu threads={torch.get_num_threads()} torch={torch.__version__}")
    print(
        f"{'op':<30} {'size':<7} {'torch us':>10} {'ours us':>10} {'ratio':>6} {'out= torch':>11}"
        f" {'out= ours':>10} {'ratio':>6}"
    )
    ratios = []
    for size in sizes:
        for name, ours, theirs in cases(size):
            expected = theirs()
            got = ours()
            many = isinstance(expected, tuple | list)
            for e, a in zip(expected if many else [expected], got if many else [got], strict=True):
                torch.testing.assert_close(a, e, rtol=1e-5, atol=1e-5)
            out = [torch.empty_like(e) for e in expected] if many else torch.empty_like(expected)
            with_out = [lambda fn=fn, out=out: fn(out=out) for fn in (theirs, ours)]
            t_f, o_f, t_o, o_o = side_by_side([theirs, ours, *with_out])
            ratios += [t_f / o_f, t_o / o_o]
            print(
                f"{name:<30} {size:<7} {t_f * 1e6:>10.1f} {o_f * 1e6:>10.1f} {t_f / o_f:>6.2f} "
                f"{t_o * 1e6:>11.1f} {o_o * 1e6:>10.1f} {t_o / o_o:>6.2f}"
            )
    print(f"median ratio {statistics.median(ratios):.2f}, min {min(ratios):.2f}")


if __name__ == "__main__":
    main()
