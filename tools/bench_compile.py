"""torch.compile (Inductor) on a small model made of structops ops vs the same model on aten ops,
side by side in one run (a script, not a test).

    .venv/bin/python tools/bench_compile.py
    .venv/bin/python tools/bench_compile.py --dynamic

Prints, per library: the time of the first compiled call (Dynamo + AOTAutograd + Inductor, every
compile cache off), and the steady-state time per call of eager and compiled. Inductor fuses the
aten model's pointwise ops and the glue around structops' ops, and calls each structops op as a
fallback kernel.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch._dynamo

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dynamic", action="store_true")
    parser.add_argument("--rows", type=int, nargs="+", default=[64, 4096])
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--hidden", type=int, default=1024)
    args = parser.parse_args()
    torch.compiler.config.force_disable_caches = True  # the first call compiles from scratch

    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, dim {args.dim}, hidden {args.hidden},"
        f" {'dynamic' if args.dynamic else 'static'} shapes"
    )
    print(
        f"{'model':10s} {'compile s':>10s} {'rows':>6s} {'eager us':>10s} {'compiled us':>12s}"
        f" {'eager/compiled':>15s}"
    )
    models = {ops: Block(ops, args.dim, args.hidden).eval() for ops in ("aten", "structops")}
    for ops, model in models.items():
        torch._dynamo.reset()
        compiled = torch.compile(model, fullgraph=True, dynamic=args.dynamic)
        x = torch.randn(args.rows[0], args.dim)
        with torch.no_grad():
            t0 = time.perf_counter()
            compiled(x)
            compile_s = time.perf_counter() - t0
            for rows in args.rows:
                x = torch.randn(rows, args.dim)
                torch.testing.assert_close(compiled(x), model(x), rtol=1e-4, atol=1e-4)
                eager, comp = per_call_us(model, x), per_call_us(compiled, x)
                print(
                    f"{ops:10s} {compile_s:10.2f} {rows:6d} {eager:10.1f} {comp:12.1f} {eager / comp:15.2f}"
                )
    with torch.no_grad():
        x = torch.randn(args.rows[0], args.dim)
        torch.testing.assert_close(models["structops"](x), models["aten"](x), rtol=1e-4, atol=1e-4)


if __name__ == "__main__":
    main()
