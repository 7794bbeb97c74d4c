"""Attention: torch's scaled_dot_product_attention against structops.nn.functional's (the
scaled_dot_product_attention op: its tiled or math kernel, as the autotuner picks;
STRUCTOPS_AUTOTUNE_PIN=scaled_dot_product_attention.out=tiled pins one), forward, side by side
in one run (a script, not a test).

    .venv/bin/python tools/bench_sdpa.py [--quick]

Batch 1, 8 heads of 64, float32, causal, sequence lengths 128 to 4096 (--quick: to 1024). Per
length: each side's time (fastest of interleaved rounds, tools/timing.py), the ratio torch /
structops (> 1: structops is faster), and each side's peak memory above the inputs, measured in
a fresh process (Linux's VmHWM, reset before the call), since torch's CPU allocator keeps no
statistics.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

import structops.nn.functional as SF
from timing import side_by_side

HEADS, DIM = 8, 64
_PEAK = """
import sys, torch
import structops.nn.functional as SF
length, which = int(sys.argv[1]), sys.argv[2]
q, k, v = (torch.randn(1, {heads}, length, {dim}) for _ in range(3))
f = torch.nn.functional.scaled_dot_product_attention if which == "torch" else SF.scaled_dot_product_attention
small = torch.randn(1, {heads}, 16, {dim})
f(small, small, small, is_causal=True)  # a first call, small: libraries load, caches fill


def status(field):
    line = next(l for l in open("/proc/self/status") if l.startswith(field))
    return int(line.split()[1])  # kB


open("/proc/self/clear_refs", "w").write("5")  # the peak (VmHWM) starts again from here
before = status("VmRSS:")
with torch.no_grad():
    f(q, k, v, is_causal=True)
print(status("VmHWM:") - before)
"""


def peak_mib(length: int, which: str) -> float:
    """How far one call at ``length`` raises a fresh process's resident memory at its peak, in
    MiB (its inputs made and a small call run first)."""
    code = _PEAK.format(heads=HEADS, dim=DIM)
    out = subprocess.run(
        [sys.executable, "-c", code, str(length), which], capture_output=True, text=True, check=True
    )
    return int(out.stdout.strip().splitlines()[-1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="lengths to 1024, fewer rounds")
    args = parser.parse_args()
    lengths = (128, 256, 512, 1024) if args.quick else (128, 256, 512, 1024, 2048, 4096)
    print(f"batch 1, {HEADS} heads x {DIM}, float32, causal, {torch.get_num_threads()} threads")
    header = f"{'length':>6} {'torch ms':>9} {'structops ms':>13} {'ratio':>6}"
    print(header + f" {'torch MiB':>10} {'structops MiB':>14}")
    for length in lengths:
        q, k, v = (torch.randn(1, HEADS, length, DIM) for _ in range(3))
        with torch.no_grad():
            theirs, ours = side_by_side(
                [
                    lambda qkv=(q, k, v): torch.nn.functional.scaled_dot_product_attention(
                        *qkv, is_causal=True
                    ),
                    lambda qkv=(q, k, v): SF.scaled_dot_product_attention(*qkv, is_causal=True),
                ],
                rounds=3 if args.quick or length >= 2048 else 5,
            )
        print(
            f"{length:6d} {theirs * 1e3:9.2f} {ours * 1e3:13.2f} {theirs / ours:6.2f}"
            f" {peak_mib(length, 'torch'):10.1f} {peak_mib(length, 'structops'):14.1f}"
        )


if __name__ == "__main__":
    main()
