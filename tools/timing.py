"""Timing for the benchmarks in tools/: calls compared side by side in interleaved rounds.

Timing torch's call to the end and then structops' lets the load of a shared machine fall on one
of them only (on the 2-core VM, one library's median swung 10-70 % between runs and lists of
"cases below 0.8x" came and went). Here every round times each call once, in an order that
rotates, and each call's time is its fastest round: load only ever adds time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import torch


def _sync(device: str) -> Callable[[], None]:
    return torch.cuda.synchronize if device == "cuda" else (lambda: None)


def side_by_side(
    calls: Sequence[Callable[[], object]], device: str = "cpu", rounds: int = 7, min_time: float = 0.05
) -> list[float]:
    """Seconds per call of each of ``calls``, timed in ``rounds`` interleaved rounds of batches
    that together last about ``min_time`` per call."""
    sync = _sync(device)
    inner = []
    for call in calls:
        call()  # warm-up: first-call costs (dispatch caches, autotuning, allocations)
        sync()
        t0 = time.perf_counter()
        call()
        sync()
        once = max(time.perf_counter() - t0, 1e-7)
        inner.append(max(1, int(min_time / rounds / once)))
    best = [float("inf")] * len(calls)
    for r in range(rounds):
        for k in range(len(calls)):
            i = (k + r) % len(calls)
            sync()
            t0 = time.perf_counter()
            for _ in range(inner[i]):
                calls[i]()
            sync()
            best[i] = min(best[i], (time.perf_counter() - t0) / inner[i])
    return best


def per_call(call: Callable[[], object], device: str = "cpu", min_time: float = 0.05) -> float:
    """Seconds per call of one call alone (its fastest of the rounds)."""
    return side_by_side([call], device, min_time=min_time)[0]
