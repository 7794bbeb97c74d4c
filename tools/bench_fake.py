"""Fake-tensor cost: structops ops vs the aten ops they mirror, under FakeTensorMode, side by side in
one run (a script, not a test).

    .venv/bin/python tools/bench_fake.py             # static shapes
    .venv/bin/python tools/bench_fake.py --dynamic   # symbolic shapes (a ShapeEnv), as in
                                                     # torch.compile(dynamic=True)

Tracing (torch.compile, torch.export, opcheck) runs every op on fake tensors, so this per-call
cost is what a model made of structops ops pays at compile time. Rounds alternate aten and
structops; each prints the minimum over rounds of the median call time, and the ratio
structops / aten (< 1.2 is the goal).
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import ShapeEnv

import structops

F = torch.nn.functional


def cases(x, y, w, b, i):
    """name -> (structops call, aten call), each a thunk over fake tensors."""
    return {
        "add": (lambda: structops.add(x, y, alpha=2), lambda: torch.add(x, y, alpha=2)),
        "mul": (lambda: structops.mul(x, y), lambda: torch.mul(x, y)),
        "exp": (lambda: structops.exp(x), lambda: torch.exp(x)),
        "where": (lambda: structops.where(x > 0, x, y), lambda: torch.where(x > 0, x, y)),
        "sum": (lambda: structops.sum(x, [1]), lambda: torch.sum(x, [1])),
        "amax": (lambda: structops.amax(x, [0], True), lambda: torch.amax(x, [0], True)),
        "softmax": (lambda: structops.softmax(x, -1), lambda: torch.softmax(x, -1)),
        "layer_norm": (
            lambda: structops.native_layer_norm(x, [64], w, b)[0],
            lambda: F.layer_norm(x, [64], w, b),
        ),
        "mm": (lambda: structops.mm(x, x.t()), lambda: torch.mm(x, x.t())),
        "linear": (
            lambda: structops.linear(x, w.expand(8, 64), b[:8]),
            lambda: F.linear(x, w.expand(8, 64), b[:8]),
        ),
        "cat": (lambda: structops.cat([x, y], 0), lambda: torch.cat([x, y], 0)),
        "index_select": (lambda: structops.index_select(x, 0, i), lambda: torch.index_select(x, 0, i)),
    }


def inputs() -> tuple[torch.Tensor, ...]:
    """x, y [32, 64]; weight, bias [64]; an index: the arguments of cases()."""
    return torch.randn(32, 64), torch.randn(32, 64), torch.randn(64), torch.randn(64), torch.tensor([3, 1, 4])


def median_us(fn, calls: int) -> float:
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dynamic", action="store_true", help="symbolic sizes through a ShapeEnv")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()

    mode = FakeTensorMode(shape_env=ShapeEnv() if args.dynamic else None)
    real = inputs()
    if args.dynamic:
        from torch._dynamo.source import ConstantSource
        from torch.fx.experimental.symbolic_shapes import DimDynamic, StatelessSymbolicContext

        def fake(t, k):
            ctx = StatelessSymbolicContext(dynamic_sizes=[DimDynamic.DYNAMIC] * t.dim())
            return mode.from_tensor(t, symbolic_context=ctx, source=ConstantSource(f"t{k}"))

    else:

        def fake(t, k):
            return mode.from_tensor(t)

    tensors = [fake(t, k) for k, t in enumerate(real)]
    table = cases(*tensors)
    print(
        f"torch {torch.__version__}, {'symbolic' if args.dynamic else 'static'} shapes, "
        f"{args.rounds} rounds x {args.calls} calls; us per call (min over rounds of the median)"
    )
    print(f"{'op':14s} {'aten':>8s} {'structops':>10s} {'structops/aten':>15s}")
    ratios = []
    with mode:
        for name, (ours, theirs) in table.items():
            best = {"aten": float("inf"), "structops": float("inf")}
            for _ in range(args.rounds):
                best["aten"] = min(best["aten"], median_us(theirs, args.calls))
                best["structops"] = min(best["structops"], median_us(ours, args.calls))
            ratio = best["structops"] / best["aten"]
            ratios.append(ratio)
            print(f"{name:14s} {best['aten']:8.1f} {best['structops']:10.1f} {ratio:15.2f}")
    print(f"median structops/aten: {statistics.median(ratios):.2f}; worst {max(ratios):.2f}")
    if not args.dynamic:
        meta_kernels(args.rounds, args.calls)


def meta_kernels(rounds: int, calls: int) -> None:
    """The meta functions alone (meta tensors, no FakeTensorMode): the part of a fake call that is
    structops' own. The rest is FakeTensorMode's Python dispatch, whose result cache serves aten
    ops only (fake_tensor.py _validate_cache_key: 'non-builtin')."""
    meta = [torch.empty(t.shape, dtype=t.dtype, device="meta") for t in inputs()]
    print("\nmeta tensors, no FakeTensorMode: us per call")
    print(f"{'op':14s} {'aten':>8s} {'structops':>10s} {'structops/aten':>15s}")
    for name, (ours, theirs) in cases(*meta).items():
        a = min(median_us(theirs, calls) for _ in range(rounds))
        s = min(median_us(ours, calls) for _ in range(rounds))
        print(f"{name:14s} {a:8.1f} {s:10.1f} {s / a:15.2f}")


if __name__ == "__main__":
    main()
