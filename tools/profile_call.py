"""Where the host time of one small call goes: structops vs torch, side by side (a script, not a test).

    .venv/bin/python tools/profile_call.py                  # on the CPU
    python3 tools/profile_call.py --device cuda             # on a GPU (tools/gpu_check.sh runs it)

For each call on a 1,000-element tensor it prints the wall time per call of both libraries
(side by side, tools/timing.py), then torch.profiler's table of the operators each call runs
beneath it (allocations, copies, fills): a small call is all host work, and an extra operator
there is the first suspect.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

import structops

sys.path.insert(0, str(Path(__file__).parent))
from timing import side_by_side


def cases(device: str) -> dict:
    x = torch.rand(1000, device=device)
    y = torch.rand(1000, device=device)
    row = torch.rand(10, device=device)
    out = torch.empty(1000, device=device)
    xy, kw = (x, y), {"out": out}
    x6 = x.view(2, 2, 2, 5, 5, 5)
    return {
        "add": (lambda: structops.add(x, y), lambda: torch.add(x, y)),
        "add out=": (lambda: structops.add(x, y, out=out), lambda: torch.add(x, y, out=out)),
        # f(*args, **kwargs) forwarding: CPython unpacks the dict for structops' vectorcall entry,
        # while torch's tuple-and-dict binding takes it as is (and builds one on direct calls)
        "add(*a, **kw)": (lambda: structops.add(*xy, **kw), lambda: torch.add(*xy, **kw)),
        "add 6 dims": (lambda: structops.add(x6, x6), lambda: torch.add(x6, x6)),
        "add_": (lambda: structops.add_(out, y), lambda: out.add_(y)),
        "mul number": (lambda: structops.mul(x, 0.5), lambda: torch.mul(x, 0.5)),
        "add broadcast": (
            lambda: structops.add(x.view(100, 10), row),
            lambda: torch.add(x.view(100, 10), row),
        ),
        "exp": (lambda: structops.exp(x), lambda: torch.exp(x)),
        "sum": (lambda: structops.sum(x, [0]), lambda: torch.sum(x, [0])),
        "packet add": (lambda: torch.ops.structops.add(x, y), lambda: torch.ops.aten.add(x, y)),
    }


def table(fn, device: str, calls: int = 200) -> str:
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device == "cuda" else [])
    for _ in range(20):
        fn()
    with profile(activities=activities) as p:
        for _ in range(calls):
            fn()
    if device == "cuda":
        torch.cuda.synchronize()
    return p.key_averages().table(sort_by="self_cpu_time_total", row_limit=8)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--tables", action="store_true", help="also print the profiler's tables")
    args = parser.parse_args()
    device = args.device
    print(f"device={device} torch={torch.__version__}")
    print(f"{'call':<14} {'torch us':>9} {'ours us':>9} {'ours - torch':>13}")
    found = cases(device)
    for name, (ours, theirs) in found.items():
        t_theirs, t_ours = side_by_side([theirs, ours], device)
        diff = (t_ours - t_theirs) * 1e6
        print(f"{name:<14} {t_theirs * 1e6:>9.2f} {t_ours * 1e6:>9.2f} {diff:>+13.2f}", flush=True)
    if args.tables:
        for name, (ours, theirs) in found.items():
            print(f"\n== {name}: structops\n{table(ours, device)}\n== {name}: torch\n{table(theirs, device)}")


if __name__ == "__main__":
    main()
