"""Multi-kernel autotuning: which kernel variant each op runs, and why.

Ops whose manifest entry lists ``kernels:`` choose among their variants per (op, device, dtype,
tuning key): on first use each eligible variant is timed on scratch outputs and the fastest kept
(variants within 3% of it tie, and the earlier declared wins), in memory and in a JSON file per
decision under :func:`cache_dir`, which later processes read instead of timing again.

Environment (read when the library loads):
  STRUCTOPS_AUTOTUNE=0                      no timing: the first eligible variant
  STRUCTOPS_AUTOTUNE_PIN=op=variant,...     pin variants (``op@cuda=variant`` for one device type)
  STRUCTOPS_AUTOTUNE_CACHE_DIR=path         where decisions are stored (default ~/.cache/structops/autotune)
  STRUCTOPS_AUTOTUNE_LOG=1                  one line on stderr per decision
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from structops import _C

__all__ = ["cache_dir", "clear", "counters", "decisions", "pin", "report"]


def decisions() -> list[dict]:
    """This process's decisions, in order: op, device, dtype, key, pick, source
    (tuned | disk | only eligible), tuning_ms and every variant's timing (us, or the error)."""
    return _C._autotune_decisions()


def report(file=None) -> str:
    """A table of this process's decisions with each variant's best time; printed to ``file``
    when given."""
    lines = [f"{'op':<24} {'device':<7} {'dtype':<12} {'key':<26} {'pick':<12} {'source':<13} timings (us)"]
    for d in decisions():
        times = ", ".join(
            f"{t['variant']} {t['us']:.1f}" if t["us"] is not None else f"{t['variant']} ({t['error']})"
            for t in d["timings"]
        )
        key = "[" + ", ".join(str(k) for k in d["key"]) + "]"
        lines.append(
            f"{d['op']:<24} {d['device']:<7} {d['dtype']:<12} {key:<26} {d['pick']:<12} {d['source']:<13}"
            f" {times}"
        )
    text = "\n".join(lines)
    if file is not None:
        print(text, file=file)
    return text


@contextlib.contextmanager
def pin(op: str, variant: str) -> Iterator[None]:
    """Run ``op`` (its out= overload's name, e.g. ``"sum.IntList_out"``; ``"mm.out@cuda"`` for one
    device type) with ``variant`` wherever that variant is eligible, inside the block."""
    _C._autotune_set_pin(op, variant)
    try:
        yield
    finally:
        _C._autotune_set_pin(op, "")


def clear() -> None:
    """Forget this process's decisions (the disk cache stays): the next call re-reads the disk."""
    _C._autotune_clear_memory()


def cache_dir() -> str:
    return _C._autotune_cache_dir()


def counters() -> tuple[int, int]:
    """(variants timed, decisions read from disk) since the library loaded."""
    return tuple(_C._autotune_counters())
