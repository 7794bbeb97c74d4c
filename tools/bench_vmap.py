"""torch.func.vmap over structops ops: structops' batching rule (structops.vmap) vs a Python loop
over the batch vs torch.vmap of the aten op, side by side in one run (a script, not a test).

    .venv/bin/python tools/bench_vmap.py

Each line: the median time of one vmapped call over a batch of 64 and the ratios structops /
loop (< 1: the batched call pays off) and structops / torch.
"""

from __future__ import annotations

import statistics
import time

import torch
from torch.func import vmap

import structops

B = 64


def median_us(fn, *args, rounds: int = 30) -> float:
    for _ in range(5):
        fn(*args)
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e6


def cases():
    """name -> (structops op, aten op, args, in_dims)."""
    x, w = torch.randn(B, 256, 64), torch.randn(64, 32)
    return {
        "add [256,64]+[64], x batched": (structops.add, torch.add, (x, torch.randn(64)), (0, None)),
        "exp [256,64]": (structops.exp, torch.exp, (x,), (0,)),
        "sum [256,64] dim 0": (lambda t: structops.sum(t, [0]), lambda t: torch.sum(t, [0]), (x,), (0,)),
        "softmax [256,64] dim 0": (
            lambda t: structops.softmax(t, 0),
            lambda t: torch.softmax(t, 0),
            (x,),
            (0,),
        ),
        "mm [256,64]@[64,32], x batched": (structops.mm, torch.mm, (x, w), (0, None)),
        "mm, both batched (one bmm)": (structops.mm, torch.mm, (x, torch.randn(B, 64, 32)), (0, 0)),
        "addmm, matrices batched (baddbmm)": (
            structops.addmm,
            torch.addmm,
            (torch.randn(32), x, torch.randn(B, 64, 32)),
            (None, 0, 0),
        ),
        "linear, per-model weights, shared x": (
            structops.linear,
            torch.nn.functional.linear,
            (x[0], torch.randn(B, 32, 64), torch.randn(B, 32)),
            (None, 0, 0),
        ),
        "linear, per-model weights, [4,64,64] x": (
            structops.linear,
            torch.nn.functional.linear,
            (torch.randn(B, 4, 64, 64), torch.randn(B, 32, 64), torch.randn(B, 32)),
            (0, 0, 0),
        ),
        "layer_norm, per-model weight and bias": (
            lambda t, g, b: structops.native_layer_norm(t, [64], g, b)[0],
            lambda t, g, b: torch.nn.functional.layer_norm(t, [64], g, b),
            (x[0], torch.randn(B, 64), torch.randn(B, 64)),
            (None, 0, 0),
        ),
        "matmul [256,64] @ batched vector": (
            structops.matmul,
            torch.matmul,
            (x[0], torch.randn(B, 64)),
            (None, 0),
        ),
        "cumsum [256,64] dim 1, batch last": (
            lambda t: structops.cumsum(t, 1),
            lambda t: torch.cumsum(t, 1),
            (x.movedim(0, -1).contiguous(),),
            (-1,),
        ),
    }


def main() -> None:
    torch.set_num_threads(1)
    print(f"batch {B}, 1 thread; median us per vmapped call")
    print(f"{'case':38} {'structops':>10} {'loop':>9} {'torch':>9} {'/loop':>7} {'/torch':>7}")
    for name, (op, aten, args, in_dims) in cases().items():
        ours = median_us(vmap(op, in_dims=in_dims), *args)

        def loop(*a, op=op, in_dims=in_dims):
            return torch.stack(
                [op(*[t.select(d, b) if d is not None else t for t, d in zip(a, in_dims)]) for b in range(B)]
            )

        looped = median_us(loop, *args)
        theirs = median_us(vmap(aten, in_dims=in_dims), *args)
        print(f"{name:38} {ours:10.0f} {looped:9.0f} {theirs:9.0f} {ours / looped:7.2f} {ours / theirs:7.2f}")


if __name__ == "__main__":
    main()
