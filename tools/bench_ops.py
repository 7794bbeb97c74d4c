"""Reductions, scans and normalisation: structops vs torch eager, side by side in one run (a script,
not a test).

    .venv/bin/python tools/bench_ops.py            # every case
    .venv/bin/python tools/bench_ops.py --quick    # one size per case
    .venv/bin/python tools/bench_ops.py --dtypes float16  # other dtypes (default: float32 bfloat16)
    .venv/bin/python tools/bench_ops.py --dtypes uint8 int32 bool  # integer inputs: the ops that take them
    .venv/bin/python tools/bench_ops.py --layouts  # sum over strided inputs (read in place, no copy)
    python3 tools/bench_ops.py --device cuda       # on a GPU, with the CUDA kernels' corner shapes

Each case runs the functional call of both libraries on the same input (values checked equal
first), prints their times (side by side in interleaved rounds, tools/timing.py) and the ratio
torch / structops (> 1: structops is faster), and ends with the median ratio per op and the cases
below 0.8.
"""

from __future__ import annotations

import argparse
import functools
import math
import statistics
import sys
from pathlib import Path

import torch

import structops

sys.path.insert(0, str(Path(__file__).parent))
from timing import side_by_side

F = torch.nn.functional


# name -> (structops call, torch call); each takes (x, dim).
OPS = {
    "sum": (lambda x, d: structops.sum(x, [d]), lambda x, d: torch.sum(x, d)),
    "mean": (lambda x, d: structops.mean(x, [d]), lambda x, d: torch.mean(x, d)),
    "amax": (lambda x, d: structops.amax(x, [d]), lambda x, d: torch.amax(x, d)),
    "prod": (lambda x, d: structops.prod(x, [d]), lambda x, d: torch.prod(x, d)),
    "argmax": (lambda x, d: structops.argmax(x, d), lambda x, d: torch.argmax(x, d)),
    "any": (lambda x, d: structops.any(x, [d]), lambda x, d: torch.any(x, d)),
    "var": (lambda x, d: structops.var(x, [d]), lambda x, d: torch.var(x, d)),
    "std": (lambda x, d: structops.std(x, [d]), lambda x, d: torch.std(x, d)),
    "norm2": (lambda x, d: structops.norm(x, 2, [d]), lambda x, d: torch.linalg.vector_norm(x, 2, d)),
    "logsumexp": (lambda x, d: structops.logsumexp(x, [d]), lambda x, d: torch.logsumexp(x, d)),
    "cumsum": (lambda x, d: structops.cumsum(x, d), lambda x, d: torch.cumsum(x, d)),
    # the same scan kernels with another combine (manifest `scan: true`)
    "cumprod": (lambda x, d: structops.cumprod(x, d), lambda x, d: torch.cumprod(x, d)),
    "logcumsumexp": (lambda x, d: structops.logcumsumexp(x, d), lambda x, d: torch.logcumsumexp(x, d)),
    # the runtime's triangle kernel (manifest `triangle:`); d is the diagonal
    "tril": (lambda x, d: structops.tril(x, d), lambda x, d: torch.tril(x, d)),
    "triu": (lambda x, d: structops.triu(x, d), lambda x, d: torch.triu(x, d)),
    "softmax": (lambda x, d: structops.softmax(x, d), lambda x, d: torch.softmax(x, d)),
    "log_softmax": (lambda x, d: structops.log_softmax(x, d), lambda x, d: torch.log_softmax(x, d)),
    "layer_norm": (
        lambda x, d: structops.native_layer_norm(x, [x.shape[-1]], *_affine(x))[0],
        lambda x, d: F.layer_norm(x, [x.shape[-1]], *_affine(x)),
    ),
    "rms_norm": (
        lambda x, d: structops.rms_norm_with_rstd(x, [x.shape[-1]], _affine(x)[0])[0],
        lambda x, d: F.rms_norm(x, [x.shape[-1]], _affine(x)[0]),
    ),
    # training statistics over the rows, a channel per column (a [N, C] input: S == 1)
    "batch_norm": (
        lambda x, d: structops.batch_norm(x, *_affine(x), None, None, True, 0.1, 1e-5, False),
        lambda x, d: F.batch_norm(x, None, None, *_affine(x), True, 0.1, 1e-5),
    ),
    # Seeded alike (on the CPU the op draws torch's bits); the draw itself, bernoulli_, is most of it.
    "dropout": (
        lambda x, d: (torch.manual_seed(0), structops.native_dropout(x, 0.1, True)[0])[1],
        lambda x, d: (torch.manual_seed(0), F.dropout(x, 0.1))[1],
    ),
}
RANDOM_OPS = {"dropout"}  # CUDA draws its own bits: not compared with torch's there
# The ops of integer and bool inputs (read in their own type: issue 56); the others need floats.
INTEGER_OPS = {"sum", "amax", "prod", "argmax", "any", "cumsum", "cumprod", "tril", "triu"}
# (rows, cols, dim): dim 1 reduces contiguous rows, dim 0 strides across them.
SHAPES = [(256, 256, 1), (2048, 2048, 1), (2048, 2048, 0), (64, 65536, 1)]
QUICK_SHAPES = [(2048, 2048, 1), (2048, 2048, 0)]
# The CUDA kernels' corners (issue 18, finding 8): few long columns (split over blocks), fewer
# than 32 columns (read in place, no permuted copy), rows of ten elements (a warp per row).
CUDA_SHAPES = [(10_000_000, 64, 0), (10_000_000, 4, 0), (1_000_000, 10, 1), (100_000, 100, 1)]


def _affine(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    n = x.shape[-1]
    return torch.randn(n, generator=g).to(x.dtype), torch.randn(n, generator=g).to(x.dtype)


def strided_sums() -> None:
    """sum over inputs that are not contiguous along the reduced dims: structops reads them through
    their strides (structgen/cpu/reduce.h), torch's TensorIterator strides or copies."""
    base = torch.ones(3 * 2**26)
    matrix = base.view(3 * 2**12, 2**14)
    cases = [
        ("expanded 2^31, all dims", torch.ones(1).expand(2**31), None),
        ("expanded [2^29, 3], dim 0", torch.arange(3.0).expand(2**29, 3), 0),
        ("[2^26, 3], dim 0", base.view(-1, 3), 0),
        ("every other column, dim 1", matrix[:, ::2], 1),
        ("every other column, dim 0", matrix[:, ::2], 0),
        ("transposed, all dims", matrix.t(), None),
        ("contiguous, dim 1", matrix, 1),
        ("contiguous, dim 0", matrix, 0),
        ("[64, 256, 64], middle dim", base[: 2**20].view(64, 256, 64), 1),
        ("[64, 256, 17], middle dim", base[: 64 * 256 * 17].view(64, 256, 17), 1),
    ]
    print(f"\n{'sum over':<28} {'torch us':>10} {'ours us':>10} {'ratio':>6}")
    for name, x, dim in cases:
        ours = functools.partial(structops.sum, x, None if dim is None else [dim])
        theirs = functools.partial(torch.sum, x) if dim is None else functools.partial(torch.sum, x, dim)
        torch.testing.assert_close(ours(), theirs())
        t_torch, t_ours = side_by_side([theirs, ours])
        print(f"{name:<28} {t_torch * 1e6:>10.1f} {t_ours * 1e6:>10.1f} {t_torch / t_ours:>6.2f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--ops", nargs="*", default=list(OPS))
    parser.add_argument("--layouts", action="store_true", help="only sum over strided inputs")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument(
        "--dtypes",
        nargs="+",
        default=["float32", "bfloat16"],
        choices=["float32", "bfloat16", "float16", "int64", "int32", "int16", "int8", "uint8", "bool"],
    )
    args = parser.parse_args()
    device = args.device
    if args.layouts:
        print(f"device=cpu threads={torch.get_num_threads()} torch={torch.__version__}")
        strided_sums()
        return
    shapes = QUICK_SHAPES if args.quick else SHAPES
    if device == "cuda":
        print(f"device={torch.cuda.get_device_name()} torch={torch.__version__}")
        shapes = shapes + CUDA_SHAPES
    else:
        print(f"device=cpu threads={torch.get_num_threads()} torch={torch.__version__}")
    print(f"{'op':<12} {'dtype':<9} {'shape':<14} {'dim':>3} {'torch us':>10} {'ours us':>10} {'ratio':>6}")
    by_op: dict[str, list[float]] = {}
    slow = []
    for name in args.ops:
        ours, theirs = OPS[name]
        for dtype in (getattr(torch, d) for d in args.dtypes):
            if not dtype.is_floating_point and name not in INTEGER_OPS:
                continue
            for rows, cols, dim in shapes:
                if name in ("layer_norm", "rms_norm", "batch_norm", "dropout") and dim == 0:
                    continue  # normalises one dim only; dropout has no dim
                g = torch.Generator(device).manual_seed(0)  # on the device: 6.4e8 CPU randoms take seconds
                x = torch.randn(rows, cols, generator=g, device=device)
                if not dtype.is_floating_point:
                    x = x * 40 if dtype != torch.uint8 else x.abs() * 40
                x = x.to(dtype)
                if name in ("prod", "cumprod") and dtype.is_floating_point:
                    x = 1 + x / 1000  # keep products finite (integer ones wrap alike)
                expected, got = theirs(x, dim), ours(x, dim)
                note = ""
                # prod of 2048 bfloat16 factors: torch rounds its running product to bfloat16, we do not
                tol = (
                    1e-1
                    if name in ("prod", "cumprod") and dtype == torch.bfloat16
                    else 2e-2
                    if dtype in (torch.bfloat16, torch.float16) or name in ("cumsum", "logcumsumexp")
                    else 1e-4
                )
                # n terms added or multiplied in another order than torch's: rounding grows like
                # sqrt(n) ulps (prod over 1e7 rows on CUDA: 1.9e-3 relative)
                tol = max(tol, 1e-6 * math.sqrt(rows if dim == 0 else cols))
                try:
                    if not (name in RANDOM_OPS and device == "cuda"):
                        torch.testing.assert_close(got, expected, atol=tol, rtol=tol, equal_nan=True)
                except AssertionError:
                    # torch's float32 scan over 1e7 rows drifts by ~1.5 (ours by 0.007): ask float64
                    # which of the two is wrong, and fail only when ours is the farther one
                    ref = theirs(x.double(), dim)
                    ours_err, torch_err = (float((t.double() - ref).abs().max()) for t in (got, expected))
                    if ours_err > torch_err:
                        raise
                    note = f"  (float64 says: torch off by {torch_err:.3g}, ours by {ours_err:.3g})"
                t_torch, t_ours = side_by_side(
                    [functools.partial(theirs, x, dim), functools.partial(ours, x, dim)], device
                )
                ratio = t_torch / t_ours
                by_op.setdefault(name, []).append(ratio)
                line = (
                    f"{name:<12} {str(dtype)[6:]:<9} {f'{rows}x{cols}':<14} {dim:>3} {t_torch * 1e6:>10.1f} "
                    f"{t_ours * 1e6:>10.1f} {ratio:>6.2f}"
                )
                print(line + note, flush=True)
                if ratio < 0.8:
                    slow.append(line)
    print("\nmedian ratio per op: " + ", ".join(f"{k} {statistics.median(v):.2f}" for k, v in by_op.items()))
    if slow:
        print("below 0.8:\n" + "\n".join(slow))


if __name__ == "__main__":
    main()
