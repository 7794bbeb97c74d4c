"""torch.compile (Inductor) on models made of structops ops vs the same models on aten ops, side
by side in one run (a script, not a test).

    .venv/bin/python tools/bench_compile.py
    .venv/bin/python tools/bench_compile.py --dynamic --train

Models: a transformer-style block (linear -> gelu -> mm + residual -> layer_norm -> softmax x
column sums) and an MLP (linear + bias -> gelu -> linear + residual -> relu). Per model and
library: the first compiled call's time (Dynamo + AOTAutograd + Inductor, every compile cache
off), the steady-state time per call of eager and compiled (forward, or forward + backward with
--train), the kernels Inductor generated and the structops ops it calls as extern kernels, and
the ratio aten compiled / structops compiled (> 1: structops' compiled model is faster).
Inductor compiles structops' formula ops from their formulas (structgen/lowering.py) and calls
the others (matmul, layer_norm, softmax, reductions) as extern kernels.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch._dynamo
from torch._inductor.utils import run_and_get_code

import structops

F = torch.nn.functional


class Block(torch.nn.Module):
    """linear -> gelu -> residual mm -> layer_norm -> softmax * column sums; `ops` picks the library."""

    def __init__(self, ops: str, dim: int, hidden: int):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.ops = ops
        self.w1 = torch.nn.Parameter(torch.randn(hidden, dim, generator=g) / dim**0.5)
        self.b1 = torch.nn.Parameter(torch.randn(hidden, generator=g))
        self.w2 = torch.nn.Parameter(torch.randn(dim, hidden, generator=g) / hidden**0.5)
        self.gamma = torch.nn.Parameter(torch.rand(dim, generator=g) + 0.5)
        self.beta = torch.nn.Parameter(torch.randn(dim, generator=g))

    def forward(self, x):
        if self.ops == "structops":
            h = structops.gelu(structops.linear(x, self.w1, self.b1), approximate="tanh")
            h = structops.add(structops.mm(h, self.w2.t()), x, alpha=0.5)
            h = structops.native_layer_norm(h, [h.shape[-1]], self.gamma, self.beta)[0]
            return structops.mul(structops.softmax(h, -1), structops.sum(h, [0], keepdim=True))
        h = F.gelu(F.linear(x, self.w1, self.b1), approximate="tanh")
        # Not torch.add(mm, x, alpha=0.5): Inductor 2.13 folds that into an addmm that drops alpha
        # (compiled result = mm + x; docs/compile.md).
        h = torch.mm(h, self.w2.t()) + 0.5 * x
        h = F.layer_norm(h, [h.shape[-1]], self.gamma, self.beta)
        return torch.mul(torch.softmax(h, -1), torch.sum(h, [0], keepdim=True))


class MLP(torch.nn.Module):
    """linear + bias -> gelu -> linear + residual -> relu; `ops` picks the library."""

    def __init__(self, ops: str, dim: int, hidden: int):
        super().__init__()
        g = torch.Generator().manual_seed(1)
        self.ops = ops
        self.w1 = torch.nn.Parameter(torch.randn(dim, hidden, generator=g) / dim**0.5)
        self.b1 = torch.nn.Parameter(torch.randn(hidden, generator=g))
        self.w2 = torch.nn.Parameter(torch.randn(hidden, dim, generator=g) / hidden**0.5)

    def forward(self, x):
        if self.ops == "structops":
            h = structops.bias_gelu(structops.mm(x, self.w1), self.b1)
            return structops.relu(structops.add(structops.mm(h, self.w2), x))
        h = F.gelu(torch.mm(x, self.w1) + self.b1)
        return torch.relu(torch.mm(h, self.w2) + x)


def per_call_us(fn, x, rounds: int = 7) -> float:
    fn(x)
    t0 = time.perf_counter()
    fn(x)
    inner = max(1, int(0.02 / max(time.perf_counter() - t0, 1e-7)))
    best = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn(x)
        best.append((time.perf_counter() - t0) / inner)
    return statistics.median(best) * 1e6


def step(model, train: bool):
    """One call: the forward under no_grad, or forward + backward (the parameters' gradients)."""
    if not train:

        def forward(x):
            with torch.no_grad():
                return model(x)

        return forward

    def train_step(x):
        out = model(x)
        return (out, *torch.autograd.grad(out.square().mean(), list(model.parameters())))

    return train_step


def counts(code: list[str]) -> tuple[int, int]:
    """(kernels Inductor generated, calls of structops ops) in the compiled modules' code."""
    kernels = sum(c.count("async_compile.cpp_pybinding(") + c.count("async_compile.triton(") for c in code)
    calls = sum(c.count("= torch.ops.structops.") for c in code)  # not the comments and shape asserts
    return kernels, calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dynamic", action="store_true")
    parser.add_argument("--train", action="store_true", help="forward + backward")
    parser.add_argument("--rows", type=int, nargs="+", default=[64, 4096])
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--hidden", type=int, default=1024)
    args = parser.parse_args()
    torch.compiler.config.force_disable_caches = True  # the first call compiles from scratch

    shapes = "dynamic" if args.dynamic else "static"
    what = "forward + backward" if args.train else "forward"
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, dim {args.dim}, hidden {args.hidden},"
        f" {shapes} shapes, {what}"
    )
    print(
        f"{'model':6s} {'ops':10s} {'compile s':>9s} {'kernels':>7s} {'calls':>5s} {'rows':>5s}"
        f" {'eager us':>9s} {'compiled us':>11s} {'eager/comp':>10s} {'aten/ours':>9s}"
    )
    for kind in (Block, MLP):
        models = {ops: kind(ops, args.dim, args.hidden) for ops in ("aten", "structops")}
        compiled_us: dict[tuple[str, int], float] = {}
        for ops, model in models.items():
            torch._dynamo.reset()
            compiled = step(torch.compile(model, fullgraph=True, dynamic=args.dynamic), args.train)
            eager = step(model, args.train)
            t0 = time.perf_counter()
            _, code = run_and_get_code(compiled, torch.randn(args.rows[0], args.dim))
            compile_s = time.perf_counter() - t0
            kernels, calls = counts(code)
            for rows in args.rows:
                x = torch.randn(rows, args.dim)
                for c, e in zip(compiled(x), eager(x)) if args.train else [(compiled(x), eager(x))]:
                    torch.testing.assert_close(c, e, rtol=1e-3, atol=1e-3)
                eager_us, comp_us = per_call_us(eager, x), per_call_us(compiled, x)
                compiled_us[ops, rows] = comp_us
                ratio = f"{compiled_us['aten', rows] / comp_us:9.2f}" if ops == "structops" else ""
                print(
                    f"{kind.__name__:6s} {ops:10s} {compile_s:9.2f} {kernels:7d} {calls:5d} {rows:5d}"
                    f" {eager_us:9.1f} {comp_us:11.1f} {eager_us / comp_us:10.2f} {ratio}"
                )
        x = torch.randn(args.rows[0], args.dim)
        with torch.no_grad():
            torch.testing.assert_close(models["structops"](x), models["aten"](x), rtol=1e-4, atol=1e-4)


if __name__ == "__main__":
    main()
