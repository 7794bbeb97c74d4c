"""Matrix products: structops vs torch eager, side by side in one run (a script, not a test).

    .venv/bin/python tools/bench_linalg.py                # every case, torch's thread count
    .venv/bin/python tools/bench_linalg.py --threads 1    # one thread

For mm it times both CPU kernels of csrc/ops/linalg/gemm.h on their own (`blocked`: our GEMM,
`aten`: ATen/BLAS through structops; each pinned in a subprocess, as the pins are read once)
and the default (`auto`: structops.autotune's pick per shape bucket, tuned in the warm-up call),
against torch.mm; then addmm and linear (also autotuned). It prints
the time per call (the fastest of interleaved rounds, tools/timing.py), GFLOP/s and the ratio
torch / structops (> 1: structops is faster).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from timing import per_call, side_by_side

MM_SHAPES = [
    (64, 64, 64),
    (256, 256, 256),
    (1024, 1024, 1024),
    (32, 1024, 1024),
    (2048, 64, 2048),
    (512, 512, 16),
]


def mm_times(dtype: str) -> dict:
    """Run in a subprocess: structops.mm's time per shape under this process's pin (or autotune)."""
    import structops

    out = {}
    for m, k, n in MM_SHAPES:
        a, b = torch.randn(m, k).to(getattr(torch, dtype)), torch.randn(k, n).to(getattr(torch, dtype))
        out[f"{m}x{k}x{n}"] = per_call(lambda a=a, b=b: structops.mm(a, b), min_time=0.2)
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--dtypes", default="float32,float64,bfloat16")
    p.add_argument("--child", default="")
    args = p.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.child:
        print(json.dumps(mm_times(args.child)))
        return
    import structops

    print(f"threads: {torch.get_num_threads()}")
    for dtype in args.dtypes.split(","):
        runs = {}
        for kernel in ("blocked", "aten", ""):
            # "auto": mm's variant picked by structops.autotune (a fresh cache dir per child).
            env = {
                **os.environ,
                "STRUCTOPS_AUTOTUNE_PIN": f"mm.out={kernel}" if kernel else "",
                "STRUCTOPS_AUTOTUNE_CACHE_DIR": tempfile.mkdtemp(prefix="structops-bench-linalg-"),
            }
            cmd = [sys.executable, __file__, "--child", dtype, "--threads", str(torch.get_num_threads())]
            runs[kernel or "auto"] = json.loads(
                subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
            )
        print(f"\nmm {dtype}: GFLOP/s (ratio torch/structops)")
        print(f"{'m x k x n':>16} {'torch':>8} {'blocked':>16} {'aten':>16} {'auto':>16}")
        for m, k, n in MM_SHAPES:
            key = f"{m}x{k}x{n}"
            a, b = torch.randn(m, k).to(getattr(torch, dtype)), torch.randn(k, n).to(getattr(torch, dtype))
            t = per_call(lambda a=a, b=b: torch.mm(a, b), min_time=0.2)
            flops = 2 * m * n * k
            cells = [
                f"{flops / runs[c][key] / 1e9:7.1f} ({t / runs[c][key]:4.2f})"
                for c in ("blocked", "aten", "auto")
            ]
            print(f"{key:>16} {flops / t / 1e9:8.1f} " + " ".join(f"{c:>16}" for c in cells))

    print("\naddmm / linear float32: us (ratio torch/structops)")
    cases = [
        (
            "addmm 256",
            lambda: (torch.randn(256, 256), torch.randn(256, 256), torch.randn(256, 256)),
            lambda s, a, b: structops.addmm(s, a, b, beta=0.5, alpha=2),
            lambda s, a, b: torch.addmm(s, a, b, beta=0.5, alpha=2),
        ),
        (
            "addmm 1024 bias row",
            lambda: (torch.randn(1024), torch.randn(1024, 1024), torch.randn(1024, 1024)),
            structops.addmm,
            torch.addmm,
        ),
        (
            "linear 64x1024->1024",
            lambda: (torch.randn(64, 1024), torch.randn(1024, 1024), torch.randn(1024)),
            structops.linear,
            torch.nn.functional.linear,
        ),
        (
            "linear 8x128x512->512",
            lambda: (torch.randn(8, 128, 512), torch.randn(512, 512), torch.randn(512)),
            structops.linear,
            torch.nn.functional.linear,
        ),
    ]
    for name, make, ours, theirs in cases:
        x = make()
        t_torch, t_ours = side_by_side([lambda f=theirs, x=x: f(*x), lambda f=ours, x=x: f(*x)], min_time=0.2)
        print(
            f"{name:>24} torch {t_torch * 1e6:9.1f}  structops {t_ours * 1e6:9.1f}  ({t_torch / t_ours:4.2f})"
        )


if __name__ == "__main__":
    main()
