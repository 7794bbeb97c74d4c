"""Time a pointwise op's out= call with the output placed at chosen offsets (modulo 4 KiB) from
its first input, side by side with torch's.

The functional float32 cases of bench_pointwise at 1e6 elements moved between runs (0.73-1.08x
torch for the same add): a fresh output lands wherever the heap puts it, and when it sits a few
vectors past an input modulo 4 KiB a load of the input has the low 12 bits of a store just
issued and waits on it (docs/pointwise.md: why such rows are not stored backwards). This script
fixes the placement so that the effect is measured, not met. ``--rows 64`` keeps the operands in
the caches, where it shows most.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

import structops

sys.path.insert(0, str(Path(__file__).parent))
from timing import side_by_side

PAGE = 4096


def placed(n: int, base: int, offset: int) -> torch.Tensor:
    """A float32 tensor of n elements whose address is ``offset`` bytes past ``base`` modulo 4 KiB."""
    buffer = torch.empty(n + PAGE // 4)
    start = (base + offset - buffer.data_ptr()) % PAGE // 4
    return buffer[start : start + n]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--offsets", type=int, nargs="+", default=[0, 32, 64, 96, 128, 192, 256, 384, 4064])
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--rows", type=int, default=1000, help="rows of 1000 float32 elements")
    args = parser.parse_args()
    rows, cols = args.rows, 1000
    a = placed(rows * cols, 0, 0).view(rows, cols).copy_(torch.rand(rows, cols) + 0.5)
    others = {
        "broadcast": torch.rand(cols) + 0.5,
        "contiguous": placed(rows * cols, a.data_ptr(), 1024).view(rows, cols).copy_(torch.rand(rows, cols)),
    }
    print(f"add [{rows}, {cols}] float32 out=, threads={torch.get_num_threads()} torch={torch.__version__}")
    print(f"{'other':<11} {'(out - a) % 4096':>16} {'torch us':>9} {'ours us':>9} {'ratio':>6}")
    for name, other in others.items():
        for offset in args.offsets:
            out = placed(rows * cols, a.data_ptr(), offset).view(rows, cols)
            calls = [
                lambda b=other, o=out: torch.add(a, b, alpha=2, out=o),
                lambda b=other, o=out: structops.add(a, b, alpha=2, out=o),
            ]
            theirs, ours = side_by_side(calls, rounds=args.rounds)
            print(f"{name:<11} {offset:>16} {theirs * 1e6:>9.1f} {ours * 1e6:>9.1f} {theirs / ours:>6.2f}")


if __name__ == "__main__":
    main()
