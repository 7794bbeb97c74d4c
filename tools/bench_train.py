"""Training speed: structops vs torch eager, side by side in one run (a script, not a test).

    .venv/bin/python tools/bench_train.py            # both tables
    .venv/bin/python tools/bench_train.py --quick    # smaller sizes, fewer rounds

1. A transformer-like block (linear, bias_gelu, layer_norm, linear, softmax, cross_entropy)
   forward + backward, the same model on structops ops and on torch's.
2. Pointwise backward: the gradients of a formula op (bias_gelu, add_relu, mul_add, gelu, silu,
   sigmoid, mul, div) against torch's own op for it (torch.nn.functional.gelu on x + b, ...) and
   against the formula written as a chain of torch ops, at 1e6 and 1e7 elements.

Each line interleaves torch and structops rounds and keeps each side's minimum, so load on the
machine hits both alike; the ratio is torch / structops (> 1: structops is faster).
"""

from __future__ import annotations

import argparse
import time

import torch
import torch.nn.functional as F

import structops


def best_time(fns, rounds: int, min_time: float = 0.02) -> list[float]:
    """Per function, the minimum seconds per call over interleaved rounds."""
    for fn in fns:
        fn()
    inner = []
    for fn in fns:
        t0 = time.perf_counter()
        fn()
        inner.append(max(1, int(min_time / max(time.perf_counter() - t0, 1e-7))))
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            t0 = time.perf_counter()
            for _ in range(inner[i]):
                fn()
            best[i] = min(best[i], (time.perf_counter() - t0) / inner[i])
    return best


def block(ops, x, w1, b1, gamma, beta, w2, target):
    linear, bias_gelu, layer_norm, softmax, cross_entropy, square_sum = ops
    h = bias_gelu(linear(x, w1), b1)
    h = layer_norm(h, gamma, beta)
    logits = linear(h, w2)
    return cross_entropy(logits, target) + square_sum(softmax(logits))


STRUCTOPS = (
    structops.linear,
    structops.bias_gelu,
    lambda h, g, b: structops.native_layer_norm(h, [h.shape[-1]], g, b)[0],
    lambda z: structops.softmax(z, -1),
    structops.cross_entropy_loss,
    lambda p: structops.sum(structops.mul(p, p), []),
)
TORCH = (
    F.linear,
    lambda h, b: F.gelu(h + b),
    lambda h, g, b: F.layer_norm(h, [h.shape[-1]], g, b),
    lambda z: torch.softmax(z, -1),
    F.cross_entropy,
    lambda p: (p * p).sum(),
)


def block_table(sizes, rounds: int) -> None:
    print("## A block, forward + backward (float32)\n")
    print("| batch x dim -> hidden -> classes | torch ms | structops ms | torch / structops |")
    print("|---|---|---|---|")
    for batch, dim, hidden, classes in sizes:
        g = torch.Generator().manual_seed(0)
        x = torch.randn(batch, dim, generator=g)
        ws = [
            torch.randn(hidden, dim, generator=g) / dim**0.5,
            torch.randn(hidden, generator=g) * 0.1,
            torch.ones(hidden),
            torch.zeros(hidden),
            torch.randn(classes, hidden, generator=g) / hidden**0.5,
        ]
        ws = [w.requires_grad_() for w in ws]
        target = torch.randint(0, classes, (batch,), generator=g)

        def step(ops, x=x, ws=ws, target=target):
            loss = block(ops, x, *ws, target)
            torch.autograd.grad(loss, ws)

        t_torch, t_ours = best_time([lambda: step(TORCH), lambda: step(STRUCTOPS)], rounds)
        print(
            f"| {batch} x {dim} -> {hidden} -> {classes} | {t_torch * 1e3:.2f} | {t_ours * 1e3:.2f} | "
            f"{t_torch / t_ours:.2f} |"
        )


def _gelu_chain(z):
    return 0.5 * z * (1 + torch.erf(z * 0.7071067811865476))


# name -> (structops op, torch's own op (None: torch has none), the formula as a chain of torch
# ops, number of inputs)
POINTWISE = {
    "bias_gelu": (structops.bias_gelu, lambda a, b: F.gelu(a + b), lambda a, b: _gelu_chain(a + b), 2),
    "add_relu": (structops.add_relu, lambda a, b: torch.relu(a + b), lambda a, b: (a + b).clamp_min(0), 2),
    "mul_add": (structops.mul_add, None, lambda a, b, c: a * b + c, 3),
    "gelu": (structops.gelu, F.gelu, _gelu_chain, 1),
    "silu": (structops.silu, F.silu, lambda x: x * torch.sigmoid(x), 1),
    "sigmoid": (structops.sigmoid, torch.sigmoid, lambda x: 1 / (1 + torch.exp(-x)), 1),
    "mul": (structops.mul, torch.mul, torch.mul, 2),
    "div": (structops.div, torch.div, torch.div, 2),
}


def pointwise_table(numels, rounds: int) -> None:
    print("\n## Pointwise backward: the gradients of every input (float32)\n")
    print("torch op: torch's own kernel for the formula (F.gelu on x + b, ...); torch chain: the formula")
    print("written as torch ops, as a user without that op writes it (the fused kernels' goal: >= 1.5x).\n")
    print(
        "| op | elements | torch op ms | torch chain ms | structops ms | op / structops | chain / structops |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, (ours, op, chain, n) in POINTWISE.items():
        for numel in numels:
            g = torch.Generator().manual_seed(0)
            xs = [(torch.rand(numel, generator=g) + 0.5).requires_grad_() for _ in range(n)]
            grad = torch.randn(numel, generator=g)

            def back(out, xs=xs, grad=grad):
                return lambda: torch.autograd.grad(out, xs, grad, retain_graph=True)

            fns = [back(ours(*xs)), back(chain(*xs))] + ([back(op(*xs))] if op is not None else [])
            times = best_time(fns, rounds)
            t_ours, t_chain = times[0], times[1]
            t_op = times[2] if op is not None else None
            op_ms = f"{t_op * 1e3:.2f}" if t_op else "—"
            op_ratio = f"{t_op / t_ours:.2f}" if t_op else "—"
            print(
                f"| {name} | {numel:.0e} | {op_ms} | {t_chain * 1e3:.2f} | {t_ours * 1e3:.2f} | "
                f"{op_ratio} | {t_chain / t_ours:.2f} |"
            )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rounds = 3 if args.quick else 7
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads\n")
    sizes = [(64, 256, 1024, 512)] if args.quick else [(64, 256, 1024, 512), (256, 512, 2048, 1024)]
    block_table(sizes, rounds)
    pointwise_table([10**6] if args.quick else [10**6, 10**7], rounds)


if __name__ == "__main__":
    main()
