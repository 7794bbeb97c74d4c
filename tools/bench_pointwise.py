"""Pointwise ops: structops vs torch eager, side by side in one run (a script, not a test).

    .venv/bin/python tools/bench_pointwise.py            # the full table
    .venv/bin/python tools/bench_pointwise.py --quick    # fewer sizes and ops

For each op, size (1e3 .. 1e7 elements, and 65,536: two grains, where both libraries start a
second thread; --sizes picks others), layout (contiguous, broadcast row, transposed/strided) and
dtype (float32 and bfloat16; --dtypes adds float16 or float64) it times the functional call and
the out= call (no allocation: allocating a fresh 64 MiB output halves throughput for both),
side by side in interleaved rounds (tools/timing.py), and prints the time, the ratio torch /
structops (> 1: structops is faster) and structops' GB/s (bytes read + written once). Fused
formulas are compared with torch's unfused chain, next to the ratio the bytes they move allow
("bound"). On a GPU it also reports the share of the measured device-to-device copy bandwidth.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

import structops

sys.path.insert(0, str(Path(__file__).parent))
from timing import per_call, side_by_side

DTYPES = ("float32", "bfloat16", "float16", "float64")
LAYOUTS = ("contiguous", "broadcast", "strided")


def direct(f, arity: int):
    """``f`` called as users write it: the inputs positionally and ``out=`` a keyword of the call
    itself. Forwarding through ``f(*args, **kwargs)`` makes CPython unpack the dict for a vectorcall
    function such as structops' entries (+0.2 us; tools/profile_call.py reports it), while torch's
    tuple-and-dict bindings pay that conversion on every direct call instead."""
    if arity == 1:
        return lambda a, out=None: f(a) if out is None else f(a, out=out)
    if arity == 2:
        return lambda a, b, out=None: f(a, b) if out is None else f(a, b, out=out)
    return lambda a, b, c, out=None: f(a, b, c) if out is None else f(a, b, c, out=out)


# name -> (structops call, torch call, number of tensor inputs), each call taking out=None
OPS = {
    "add": (
        lambda a, b, out=None: (
            structops.add(a, b, alpha=2) if out is None else structops.add(a, b, alpha=2, out=out)
        ),
        lambda a, b, out=None: torch.add(a, b, alpha=2) if out is None else torch.add(a, b, alpha=2, out=out),
        2,
    ),
    "mul": (direct(structops.mul, 2), direct(torch.mul, 2), 2),
    # a Python number as the other operand (on a GPU: read from the launch, not copied there)
    "mul_number": (
        lambda a, out=None: structops.mul(a, 0.5) if out is None else structops.mul(a, 0.5, out=out),
        lambda a, out=None: torch.mul(a, 0.5) if out is None else torch.mul(a, 0.5, out=out),
        1,
    ),
    "div": (direct(structops.div, 2), direct(torch.div, 2), 2),
    "div_floor": (
        lambda a, b, out=None: (
            structops.div(a, b, rounding_mode="floor")
            if out is None
            else structops.div(a, b, rounding_mode="floor", out=out)
        ),
        lambda a, b, out=None: (
            torch.div(a, b, rounding_mode="floor")
            if out is None
            else torch.div(a, b, rounding_mode="floor", out=out)
        ),
        2,
    ),
    "maximum": (direct(structops.maximum, 2), direct(torch.maximum, 2), 2),
    "exp": (direct(structops.exp, 1), direct(torch.exp, 1), 1),
    "sigmoid": (direct(structops.sigmoid, 1), direct(torch.sigmoid, 1), 1),
    "tanh": (direct(structops.tanh, 1), direct(torch.tanh, 1), 1),
    "gelu": (
        direct(structops.gelu, 1),
        lambda a, out=None: F.gelu(a) if out is None else out.copy_(F.gelu(a)),
        1,
    ),
    "relu": (
        direct(structops.relu, 1),
        lambda a, out=None: torch.relu(a) if out is None else torch.clamp(a, min=0, out=out),
        1,
    ),
    "logaddexp": (direct(structops.logaddexp, 2), direct(torch.logaddexp, 2), 2),
    "lt": (direct(structops.lt, 2), direct(torch.lt, 2), 2),
    "where": (
        lambda c, a, b, out=None: (
            structops.where(c > 0, a, b) if out is None else structops.where(c > 0, a, b, out=out)
        ),
        lambda c, a, b, out=None: (
            torch.where(c > 0, a, b) if out is None else torch.where(c > 0, a, b, out=out)
        ),
        3,
    ),
    "addcmul": (direct(structops.addcmul, 3), direct(torch.addcmul, 3), 3),
    # fused formulas vs torch's chains
    "add_relu": (
        direct(structops.add_relu, 2),
        lambda a, b, out=None: torch.relu(a + b) if out is None else torch.clamp(a + b, min=0, out=out),
        2,
    ),
    "bias_gelu": (
        direct(structops.bias_gelu, 2),
        lambda a, b, out=None: F.gelu(a + b) if out is None else out.copy_(F.gelu(a + b)),
        2,
    ),
    "mul_add": (
        direct(structops.mul_add, 3),
        lambda a, b, c, out=None: torch.add(a * b, c) if out is None else torch.add(a * b, c, out=out),
        3,
    ),
}
QUICK = ("add", "mul", "mul_number", "exp", "gelu", "add_relu", "bias_gelu", "mul_add")
# Tensors torch's unfused chain writes and reads back that the fused formula does not: the most
# a fused formula can gain where memory bandwidth bounds both is (bytes + 2 * n * output bytes) /
# bytes, printed as "bound" (add_relu on contiguous float32: 5/3 = 1.67).
INTERMEDIATES = {"add_relu": 1, "bias_gelu": 1, "mul_add": 1}


def make_inputs(n_inputs: int, numel: int, layout: str, dtype, device: str) -> list[torch.Tensor]:
    cols = 1000 if numel >= 10_000 else 100
    rows = max(1, numel // cols)
    g = torch.Generator(device="cpu").manual_seed(0)

    def rand(*shape):
        return (torch.rand(*shape, generator=g) + 0.5).to(dtype=dtype, device=device)

    first = rand(rows, cols)
    if layout == "contiguous":
        rest = [rand(rows, cols) for _ in range(n_inputs - 1)]
    elif layout == "broadcast":
        rest = [rand(cols) for _ in range(n_inputs - 1)]
    else:  # strided: the first input is a transposed view, the others are sliced
        first = rand(cols, rows).t()
        rest = [rand(rows, 2 * cols)[:, ::2] for _ in range(n_inputs - 1)]
    return [first] + rest


def timings(ours, theirs, xs, out, device: str) -> tuple[float, float, float, float]:
    """torch and structops, functional and out=, timed side by side on the same inputs."""
    calls = [lambda: theirs(*xs), lambda: ours(*xs), lambda: theirs(*xs, out=out), lambda: ours(*xs, out=out)]
    t_f, o_f, t_o, o_o = side_by_side(calls, device)
    return t_f, o_f, t_o, o_o


def copy_bandwidth(device: str) -> float | None:
    if device != "cuda":
        return None
    x = torch.empty(2**28, dtype=torch.uint8, device=device)
    y = torch.empty_like(x)
    return 2 * x.numel() / per_call(lambda: y.copy_(x), device)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--ops", nargs="+", choices=sorted(OPS), help="only these ops")
    parser.add_argument("--dtypes", nargs="+", default=["float32", "bfloat16"], choices=DTYPES)
    parser.add_argument("--layouts", nargs="+", default=list(LAYOUTS), choices=LAYOUTS)
    parser.add_argument(
        "--sizes", nargs="+", type=int, help="element counts (e.g. 65536: the threading threshold)"
    )
    args = parser.parse_args()
    device = args.device
    sizes = args.sizes or (
        (1_000, 100_000, 10_000_000)
        if args.quick
        else (1_000, 10_000, 65_536, 100_000, 1_000_000, 10_000_000)
    )
    names = args.ops or (QUICK if args.quick else tuple(OPS))
    peak = copy_bandwidth(device)
    print(
        f"device={device} threads={torch.get_num_threads()} torch={torch.__version__}"
        + (f" copy bandwidth={peak / 1e9:.0f} GB/s" if peak else "")
    )
    header = (
        f"{'op':<10} {'dtype':<9} {'layout':<10} {'numel':>9} {'torch us':>10} {'ours us':>10} {'ratio':>6}"
        f" {'ratio out=':>10} {'GB/s':>7}"
    )
    print(header + ("  %copy" if peak else "") + "  bound")
    ratios, ratios_out = [], []
    by_size: dict[int, list[float]] = {}
    for name in names:
        ours, theirs, n = OPS[name]
        for dtype in (getattr(torch, d) for d in args.dtypes):
            for layout in args.layouts:
                if layout == "broadcast" and n == 1:
                    continue
                for numel in sizes:
                    xs = make_inputs(n, numel, layout, dtype, device)
                    expected = theirs(*xs)
                    torch.testing.assert_close(ours(*xs), expected, atol=2e-2, rtol=2e-2, equal_nan=True)
                    t_torch, t_ours, t_torch_out, t_ours_out = timings(
                        ours, theirs, xs, torch.empty_like(expected), device
                    )
                    moved = (
                        sum(x.numel() * x.element_size() for x in xs)
                        + expected.numel() * expected.element_size()
                    )
                    gbs = moved / t_ours_out / 1e9
                    ratios.append(t_torch / t_ours)
                    ratios_out.append(t_torch_out / t_ours_out)
                    by_size.setdefault(numel, []).extend([t_torch / t_ours, t_torch_out / t_ours_out])
                    line = (
                        f"{name:<10} {str(dtype)[6:]:<9} {layout:<10} {expected.numel():>9}"
                        f" {t_torch * 1e6:>10.1f} {t_ours * 1e6:>10.1f} {t_torch / t_ours:>6.2f}"
                        f" {t_torch_out / t_ours_out:>10.2f} {gbs:>7.1f}"
                    )
                    if peak:
                        line += f"  {100 * moved / t_ours_out / peak:5.0f}%"
                    if name in INTERMEDIATES:
                        extra = 2 * INTERMEDIATES[name] * expected.numel() * expected.element_size()
                        line += f"  {(moved + extra) / moved:5.2f}"
                    print(line, flush=True)
    print(
        f"median ratio torch/structops: functional {statistics.median(ratios):.2f}, out="
        f" {statistics.median(ratios_out):.2f} over {len(ratios)} cases"
    )
    for numel, found in sorted(by_size.items()):  # functional and out= together
        print(f"  {numel:>9} elements: median {statistics.median(found):.2f}, min {min(found):.2f}")


if __name__ == "__main__":
    main()
