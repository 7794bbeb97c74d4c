"""Pooling and losses: structops vs torch eager, side by side in one run (a script, not a test).

    .venv/bin/python tools/bench_pool_loss.py [--threads N]

Prints the time per call (the fastest of interleaved rounds, tools/timing.py) and the ratio
torch / structops (> 1: structops is faster).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

import structops

sys.path.insert(0, str(Path(__file__).parent))
from timing import side_by_side

A = torch.ops.aten


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--threads", type=int, default=0)
    args = p.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"threads: {torch.get_num_threads()}")
    x = torch.randn(8, 64, 56, 56)
    small = torch.randn(1, 16, 32, 32)
    x3 = torch.randn(2, 16, 32, 32, 32)
    p_, t_, w_ = (torch.rand(1 << 20) * 0.98 + 0.01 for _ in range(3))
    logits, big = torch.randn(64, 512), torch.randn(4096, 1000)
    classes, big_classes = torch.randint(0, 512, (64,)), torch.randint(0, 1000, (4096,))
    cases = [
        (
            "max_pool2d k3 s2 p1 [8,64,56,56]",
            A.max_pool2d_with_indices,
            structops.max_pool2d_with_indices,
            (x, [3, 3], [2, 2], [1, 1]),
        ),
        (
            "max_pool2d k2 [8,64,56,56]",
            A.max_pool2d_with_indices,
            structops.max_pool2d_with_indices,
            (x, [2, 2]),
        ),
        (
            "max_pool2d k2 [1,16,32,32]",
            A.max_pool2d_with_indices,
            structops.max_pool2d_with_indices,
            (small, [2, 2]),
        ),
        ("avg_pool2d k3 s2 p1 [8,64,56,56]", A.avg_pool2d, structops.avg_pool2d, (x, [3, 3], [2, 2], [1, 1])),
        ("avg_pool2d k2 [8,64,56,56]", A.avg_pool2d, structops.avg_pool2d, (x, [2, 2])),
        (
            "max_pool3d k2 [2,16,32,32,32]",
            A.max_pool3d_with_indices,
            structops.max_pool3d_with_indices,
            (x3, [2, 2, 2]),
        ),
        ("mse_loss mean 1M", A.mse_loss, structops.mse_loss, (p_, t_, 1)),
        ("mse_loss none 1M", A.mse_loss, structops.mse_loss, (p_, t_, 0)),
        ("bce mean 1M", A.binary_cross_entropy, structops.binary_cross_entropy, (p_, t_, None, 1)),
        ("bce weighted none 1M", A.binary_cross_entropy, structops.binary_cross_entropy, (p_, t_, w_, 0)),
        (
            "cross_entropy mean [64,512]",
            A.cross_entropy_loss,
            structops.cross_entropy_loss,
            (logits, classes),
        ),
        (
            "cross_entropy mean [4096,1000]",
            A.cross_entropy_loss,
            structops.cross_entropy_loss,
            (big, big_classes),
        ),
    ]
    print(f"{'case':>34} {'torch us':>10} {'structops us':>13} {'ratio':>6}")
    for name, theirs, ours, a in cases:
        tt, ts = side_by_side([lambda f=theirs, a=a: f(*a), lambda f=ours, a=a: f(*a)], min_time=0.2)
        print(f"{name:>34} {tt * 1e6:10.1f} {ts * 1e6:13.1f} {tt / ts:6.2f}")


if __name__ == "__main__":
    main()
