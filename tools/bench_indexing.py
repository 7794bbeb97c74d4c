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

import structops
import torch
import torch.nn.functional as F
from timing import side_by_side


def _gen():
    return torch.Generator().manual_seed(0)


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
        lambda **o: structops.index_select(w, 0, idx, **o),
        lambda **o: torch.index_select(w, 0, idx, **o),
    )
    yield (
        "index_select dim1",
        lambda **o: structops.index_select(w, 1, last, **o),
        lambda **o: torch.index_select(w, 1, last, **o),
    )
    # gather along the last dim (top-k style) and along dim 0
    gi = torch.randint(0, width, (rows, 8), generator=g)
    yield (
        "gather dim1",
        lambda **o: structops.gather(w, 1, gi, **o),
        lambda **o: torch.gather(w, 1, gi, **o),
    )
    g0 = torch.randint(0, rows, (n_idx // 4 + 1, width), generator=g)
    yield (
        "gather dim0",
        lambda **o: structops.gather(w, 0, g0, **o),
        lambda **o: torch.gather(w, 0, g0, **o),
    )
    flat = torch.randint(-w.numel(), w.numel(), (n_idx * 4,), generator=g)
    yield ("take", lambda **o: structops.take(w, flat, **o), lambda **o: torch.take(w, flat, **o))
    mask = torch.rand(rows, width, generator=g) > 0.5
    yield (
        "masked_select",
        lambda **o: structops.masked_select(w, mask, **o),
        lambda **o: torch.masked_select(w, mask, **o),
    )
    row_mask = torch.rand(rows, 1, generator=g) > 0.5
    yield (
        "masked_select bcast",
        lambda **o: structops.masked_select(w, row_mask, **o),
        lambda **o: torch.masked_select(w, row_mask, **o),
    )
    offsets = torch.arange(0, n_idx, 8)
    for mode, name in ((0, "sum"), (1, "mean"), (2, "max")):
        yield (
            f"embedding_bag {name}",
            lambda mode=mode, **o: structops.embedding_bag(w, idx, offsets, False, mode, **o),
            lambda name=name, **o: (
                F.embedding_bag(idx, w, offsets, mode=name)
                if not o
                else o["out"].copy_(F.embedding_bag(idx, w, offsets, mode=name))
            ),
        )
    sizes = [rows // 4, rows // 2, rows - rows // 4 - rows // 2]
    yield (
        "split_with_sizes_copy",
        lambda **o: structops.split_with_sizes_copy(w, sizes, 0, **o),
        lambda **o: torch.split_with_sizes_copy(w, sizes, 0, **o),
    )
    yield (
        "split_with_sizes_copy dim1",
        lambda **o: structops.split_with_sizes_copy(w, [width // 2] * 2, 1, **o),
        lambda **o: torch.split_with_sizes_copy(w, [width // 2] * 2, 1, **o),
    )
    narrow = w[:, :16].contiguous()
    yield (
        "split_with_sizes_copy cols",  # one column per piece
        lambda **o: structops.split_with_sizes_copy(narrow, [1] * 16, 1, **o),
        lambda **o: torch.split_with_sizes_copy(narrow, [1] * 16, 1, **o),
    )
    halves = [h.contiguous() for h in w.chunk(2, 1)]
    for dim in (0, 1):
        yield (
            f"cat dim{dim}",
            lambda dim=dim, **o: structops.cat(halves, dim, **o),
            lambda dim=dim, **o: torch.cat(halves, dim, **o),
        )
    for dim in (0, -1):  # stack along the last dim interleaves single elements
        yield (
            f"stack dim{dim}",
            lambda dim=dim, **o: structops.stack(halves, dim, **o),
            lambda dim=dim, **o: torch.stack(halves, dim, **o),
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
            with_out = [lambda call=call, out=out: call(out=out) for call in (theirs, ours)]
            t_f, o_f, t_o, o_o = side_by_side([theirs, ours, *with_out])
            ratios += [t_f / o_f, t_o / o_o]
            print(
                f"{name:<30} {size:<7} {t_f * 1e6:>10.1f} {o_f * 1e6:>10.1f} {t_f / o_f:>6.2f} "
                f"{t_o * 1e6:>11.1f} {o_o * 1e6:>10.1f} {t_o / o_o:>6.2f}"
            )
    print(f"median ratio {statistics.median(ratios):.2f}, min {min(ratios):.2f}")


if __name__ == "__main__":
    main()
