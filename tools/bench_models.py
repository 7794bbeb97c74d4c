"""Unmodified models on structops: the Llama-style and GPT-style transformers of
tests/runtime/models.py, a training step (forward + backward) on torch and under
structops.patch(), side by side in one run (a script, not a test).

    PYTHONPATH=. .venv/bin/python tools/bench_models.py [--quick]

Per model: the loss and largest gradient difference of the two runs; the share of the torch
calls that structops ran (routed.share) and what stayed torch's; the share of the operator time
the profiler attributes to structops:: ops (self CPU time, of all aten:: and structops:: ops);
the step time on each side and the ratio torch / structops (> 1: structops is faster), eager and
compiled (torch.compile, Inductor).
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from timing import side_by_side

import structops
from tests.runtime.models import MODELS, batch


def _step(model, ids, targets):
    model.zero_grad(set_to_none=True)
    loss = model(ids, targets)
    loss.backward()
    return loss


def _time_share(model, ids, targets) -> float:
    """The share of operator self time (aten:: and structops::) that structops:: ops took."""
    with structops.patch(), profile(activities=[ProfilerActivity.CPU]) as prof:
        _step(model, ids, targets)
    ours = total = 0.0
    for event in prof.key_averages():
        if event.key.startswith(("aten::", "structops::")):
            total += event.self_cpu_time_total
            ours += event.self_cpu_time_total if event.key.startswith("structops::") else 0.0
    return ours / total if total else 0.0


def _patched(fn):
    def run(*args):
        with structops.patch():
            return fn(*args)

    return run


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="one small batch, fewer rounds")
    args = parser.parse_args()
    size, length = (4, 16) if args.quick else (8, 32)
    torch.manual_seed(0)
    threads = torch.get_num_threads()
    print(f"batch {size} x {length} tokens, float32, {threads} threads, torch {torch.__version__}")
    header = f"{'model':6} {'mode':8} {'loss diff':>10} {'grad diff':>10} {'calls':>6} {'time':>6}"
    print(header + f" {'torch ms':>9} {'structops ms':>13} {'ratio':>6}")
    for name, cls in MODELS.items():
        reference = cls()
        ours = copy.deepcopy(reference)
        ids, targets = batch(size=size, length=length)
        want = _step(reference, ids, targets)
        with structops.patch() as routed:
            got = _step(ours, ids, targets)
        grads = max(
            float((a.grad - b.grad).abs().max())
            for a, b in zip(ours.parameters(), reference.parameters(), strict=True)
        )
        share = _time_share(ours, ids, targets)
        for mode in ("eager", "compiled"):
            torch._dynamo.reset()
            # the model compiled, as users compile it; backward runs AOT autograd's graph
            theirs_model = torch.compile(reference) if mode == "compiled" else reference
            ours_model = torch.compile(ours) if mode == "compiled" else ours
            ours_step = _patched(_step)
            calls = [
                lambda m=theirs_model, i=ids, t=targets: _step(m, i, t),
                lambda m=ours_model, i=ids, t=targets, s=ours_step: s(m, i, t),
            ]
            t_theirs, t_ours = side_by_side(calls, rounds=3 if args.quick else 7)
            loss = float((got - want).abs().detach())
            print(
                f"{name:6} {mode:8} {loss:10.2e} {grads:10.2e} {routed.share:6.0%} {share:6.0%}"
                f" {t_theirs * 1e3:9.2f} {t_ours * 1e3:13.2f} {t_theirs / t_ours:6.2f}"
            )
        left = ", ".join(f"{n} {c}" for n, c in routed.torch.most_common())
        print(f"       stayed torch's: {left}")


if __name__ == "__main__":
    main()
