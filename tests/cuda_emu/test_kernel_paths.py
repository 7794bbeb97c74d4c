"""Every path of the hand-written and generated CUDA kernels, run by the CPU emulator.

The conformance suite's samples are small; these shapes cross each kernel's path boundaries
(csrc/ops/*/cuda.cu, structgen/cuda/pointwise.cuh) with STRUCTGEN_EMU_SMS=2 multiprocessors. Each
case runs the CUDA path (torch.ops.structops_emu) and the CPU impl (torch.ops.structops) on the
same CPU tensors and compares (docs/cuda_emulation.md).
"""

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from structgen.conformance.emulation import emulated_library
from structgen.conformance.spec import op as ops

pytestmark = pytest.mark.skipif(
    torch.cuda.is_available(),
    reason="a GPU is present: it runs these kernels (tests/runtime/test_cuda.py, the cuda_matches_cpu check)",
)

FLOATS = (torch.float32, torch.float64, torch.float16, torch.bfloat16)


def run_both(qualified: str, *args, **kwargs):
    emulated_library()
    cpu = ops("structops", qualified)(*args, **kwargs)
    emulated = ops("structops_emu", qualified)(*args, **kwargs)
    return emulated, cpu


def tolerance(dtype: torch.dtype) -> dict:
    # Different summation orders (per-thread chains, warp trees) than the CPU's cascade.
    loose = {torch.float16: {"atol": 2e-3, "rtol": 2e-3}, torch.bfloat16: {"atol": 2e-2, "rtol": 2e-2}}
    return loose.get(dtype, {"atol": 1e-5, "rtol": 1e-5})


def assert_same(emulated, cpu, what: str):
    if isinstance(cpu, tuple | list):
        for e, c in zip(emulated, cpu, strict=True):
            assert_same(e, c, what)
        return
    assert emulated.dtype == cpu.dtype and emulated.shape == cpu.shape, what
    torch.testing.assert_close(
        emulated, cpu, equal_nan=True, msg=lambda m: f"{what}: {m}", **tolerance(cpu.dtype)
    )


def values(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point:
        return torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)
    return torch.randint(-5, 6, shape, generator=g).to(dtype)


# --- reductions (reduce.cu): lane groups, warp rows, block rows, two passes, columns (wide, narrow, split)
# With 2 simulated SMs, columns split n over blocks when fewer than 4 column tiles run.
REDUCE_SHAPES = [
    ((37, 200), [1], "warp rows"),
    ((50, 10), [1], "rows of 10: two per warp"),
    ((35, 3), [1], "rows of 3: eight per warp, a partial warp"),
    ((3, 1000), [1], "block rows"),
    ((2, 70000), [1], "two-pass rows"),
    ((300, 40), [0], "columns"),
    ((3000, 40), [0], "columns split in 4"),
    ((300, 5), [0], "narrow columns"),
    ((1000, 5), [0], "narrow columns split in 3"),
    ((1000, 3), [0], "narrow columns of a partial warp"),
    ((3, 700, 5), [1], "middle dim in place, split"),
    ((40, 300), [0], "transposed: rows in place"),
    ((4, 6, 70), [0, 2], "two reduced dims: rows of a copy"),
]
REDUCTIONS = ["sum.dim_IntList", "mean.dim", "amax", "amin", "prod.dims"]


@pytest.mark.parametrize("dtype", FLOATS + (torch.int64,), ids=str)
@pytest.mark.parametrize("shape, dims, path", REDUCE_SHAPES, ids=[p for *_, p in REDUCE_SHAPES])
@pytest.mark.parametrize("op", REDUCTIONS)
def test_reductions(op, shape, dims, path, dtype):
    if op == "mean.dim" and not dtype.is_floating_point:
        pytest.skip("mean takes floating dtypes (torch)")
    x = values(shape, dtype)
    if path.startswith("transposed"):
        x = values(shape[::-1], dtype).t()
    if op == "prod.dims":
        x = 1 + x / 64 if dtype.is_floating_point else x.clamp(-1, 1)
    emulated, cpu = run_both(op, x, dims)
    assert_same(emulated, cpu, f"{op} {path} {shape}")


@pytest.mark.parametrize("dtype", (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32), ids=str)
@pytest.mark.parametrize("shape, dims, path", REDUCE_SHAPES, ids=[p for *_, p in REDUCE_SHAPES])
@pytest.mark.parametrize("op", ["sum.dim_IntList", "prod.dims"])
def test_integer_inputs_are_read_in_their_own_type(op, shape, dims, path, dtype):
    """sum and prod of integer and bool inputs into int64 (and a narrow dtype=): the kernels read the
    input in its own type and widen each element (ReduceLaunch::widen_in; the host glue had made an
    int64 copy of it). Into bool they are any and all, as torch casts to bool first (the int64 sum
    of 1 and -1 had made a false sum)."""
    x = values(shape[::-1] if path.startswith("transposed") else shape, torch.int64)
    x = x > 0 if dtype == torch.bool else (x.clamp(-1, 1) if op == "prod.dims" else x).to(dtype)
    x = x.t() if path.startswith("transposed") else x
    for out_dtype in (None, torch.int16, torch.bool):
        emulated, cpu = run_both(op, x, dims, dtype=out_dtype)
        assert_same(emulated, cpu, f"{op} {path} {shape} dtype={out_dtype}")
        if op == "sum.dim_IntList":
            assert torch.equal(emulated, torch.sum(x, dims, dtype=out_dtype)), path


@pytest.mark.parametrize("shape, dims, path", REDUCE_SHAPES, ids=[p for *_, p in REDUCE_SHAPES])
@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, float("inf"), float("-inf")])
def test_norms(shape, dims, path, p):
    x = values(shape, torch.float32)
    emulated, cpu = run_both("norm.ScalarOpt_dim", x, p, dims)
    assert_same(emulated, cpu, f"norm p={p} {path}")


@pytest.mark.parametrize("dtype", (torch.bool, torch.uint8, torch.int32, torch.float32), ids=str)
@pytest.mark.parametrize("shape, dims, path", REDUCE_SHAPES, ids=[p for *_, p in REDUCE_SHAPES])
@pytest.mark.parametrize("op", ["all.dims", "any.dims"])
def test_truth_reductions(op, shape, dims, path, dtype):
    x = values(shape, torch.int64, seed=1).clamp(0, 1).to(dtype)
    emulated, cpu = run_both(op, x, dims)
    assert_same(emulated, cpu, f"{op} {path}")


# Complex: sum, mean, any, all, norms and var/std fold the parts with the real kernels above
# (every path); prod and logsumexp take cuda_complex.cu's warp rows (shorter and longer than a
# warp, a copy of transposed rows, a reduction of nothing).
COMPLEX_SHAPES = [
    ((37, 20), [1], "rows shorter than a warp"),
    ((3, 1000), [1], "rows of many warps' lengths"),
    ((40, 300), [0], "transposed: rows of a copy"),
    ((4, 6, 70), [0, 2], "two reduced dims"),
    ((3, 0), [1], "empty rows"),
]
COMPLEX_OPS = [
    ("sum.dim_IntList", ()),
    ("mean.dim", ()),
    ("prod.dims", ()),
    ("any.dims", ()),
    ("all.dims", ()),
    ("var.correction", ()),
    ("std.correction", ()),
    ("logsumexp", ()),
    ("norm.ScalarOpt_dim", (0.0,)),
    ("norm.ScalarOpt_dim", (1.0,)),
    ("norm.ScalarOpt_dim", (2.0,)),
    ("norm.ScalarOpt_dim", (3.0,)),
    ("norm.ScalarOpt_dim", (float("inf"),)),
]


@pytest.mark.parametrize("dtype", (torch.complex64, torch.complex128), ids=str)
@pytest.mark.parametrize("shape, dims, path", COMPLEX_SHAPES, ids=[p for *_, p in COMPLEX_SHAPES])
@pytest.mark.parametrize("op, before", COMPLEX_OPS, ids=[f"{o}{b}" for o, b in COMPLEX_OPS])
def test_complex_reductions(op, before, shape, dims, path, dtype):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(shape, generator=g, dtype=dtype)
    if path.startswith("transposed"):
        x = torch.randn(shape[::-1], generator=g, dtype=dtype).t()
    if op == "prod.dims":
        x = 1 + x / 64  # products of ~1, neither overflowing nor vanishing
        emulated, cpu = run_both(op, x, dims)  # prod.dims takes a dim list: two reduced dims too
    elif op in ("any.dims", "all.dims"):
        x = torch.where(torch.randn(x.shape, generator=g) > 0.7, 0, x)  # zeros among nonzeros
        x.real[..., ::3] = 0  # elements nonzero by their imaginary part alone
        emulated, cpu = run_both(op, x, dims)
    elif before == (float("inf"),) and x.numel() == 0:
        emulated_library()
        for library in ("structops", "structops_emu"):  # as torch
            with pytest.raises(RuntimeError, match="that norm has no identity"):
                ops(library, op)(x, *before, dims)
        return
    else:
        emulated, cpu = run_both(op, x, *before, dims)
    assert_same(emulated, cpu, f"{op}{before} {path}")


def test_complex_logsumexp_of_infinite_and_zero_parts():
    """torch's shift is 0 when the largest real part is infinite; exp(-inf + iy) is 0."""
    x = torch.tensor(
        [[complex(float("-inf"), 2.0), complex(1.0, -1.0)], [complex(float("-inf"), 0.0)] * 2],
        dtype=torch.complex64,
    )
    emulated, cpu = run_both("logsumexp", x, [1])
    assert_same(emulated, cpu, "logsumexp with -inf real parts")


def test_any_of_256_nonzero_uint8():
    """any() of uint8 once counted the nonzeros in uint8: 256 of them wrapped to 0 (false)."""
    x = torch.zeros(2, 512, dtype=torch.uint8)
    x[0, :256] = 1
    emulated, cpu = run_both("any.dims", x, [1])
    assert emulated.tolist() == [True, False] == cpu.tolist()


# argmax/argmin fold (value, position) pairs through the same paths: values rounded to few
# distinct ones, so that ties meet across lanes, blocks and chunks (the first position wins), and
# two NaNs in another half of the first slice (the first NaN wins, for argmin too).
ARG_SHAPES = [(shape, dims[0], path) for shape, dims, path in REDUCE_SHAPES if len(dims) == 1]
ARG_SHAPES += [((4, 6, 70), None, "dim=None: rows of every element"), ((300, 40), None, "dim=None in place")]


@pytest.mark.parametrize("dtype", FLOATS + (torch.int64,), ids=str)
@pytest.mark.parametrize("shape, dim, path", ARG_SHAPES, ids=[p for *_, p in ARG_SHAPES])
@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_arg_reductions(op, shape, dim, path, dtype):
    x = values(shape, dtype)
    if path.startswith("transposed"):
        x = values(shape[::-1], dtype).t()
    if dtype.is_floating_point:
        x = x.round()
        flat = x.view(-1) if dim is None else x.select(1 - dim, 0) if x.dim() == 2 else x[0, :, 0]
        flat[len(flat) // 2 + 1] = flat[-1] = float("nan")
    emulated, cpu = run_both(op, x, dim)
    assert torch.equal(emulated, cpu), f"{op} {path}"


# --- row ops (normalization.cu): one block per row, chunked rows, non-finite values ---------
ROWS = [
    ((50, 10), "tiny rows: a warp each"),
    ((37, 100), "short rows: a warp each"),
    ((9, 256), "a warp each, at the limit"),
    ((9, 257), "block rows past the warp limit"),
    ((3, 3000), "block rows"),
    ((1, 40000), "chunked row"),
    ((2, 70000), "chunked rows"),
]


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape, path", ROWS, ids=[p for _, p in ROWS])
@pytest.mark.parametrize("op", ["softmax.int", "log_softmax.int", "logsumexp"])
def test_softmax_rows(op, shape, path, dtype):
    x = values(shape, dtype) * 4
    emulated, cpu = run_both(op, x, [1] if op == "logsumexp" else 1)
    assert_same(emulated, cpu, f"{op} {path}")


@pytest.mark.parametrize("case", ["a -inf chunk", "all -inf", "+inf", "nan"])
@pytest.mark.parametrize("op", ["softmax.int", "log_softmax.int", "logsumexp"])
def test_softmax_non_finite_chunks(op, case):
    """A chunk of a long row that is all -inf, or a row holding +inf, as torch (finding 4)."""
    x = values((1, 40000), torch.float32)
    if case == "a -inf chunk":
        x[0, :20000] = float("-inf")
    elif case == "all -inf":
        x[:] = float("-inf")
    elif case == "+inf":
        x[0, 30000] = float("inf")
    else:
        x[0, 123] = float("nan")
    emulated, cpu = run_both(op, x, [1] if op == "logsumexp" else 1)
    expected = ops("structops", op)(x.double(), [1] if op == "logsumexp" else 1).float()
    assert_same(cpu, expected, f"{op} {case}: CPU vs float64")
    assert_same(emulated, cpu, f"{op} {case}")


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape, path", ROWS, ids=[p for _, p in ROWS])
def test_layer_norm_rows(shape, path, dtype):
    x = values(shape, dtype)
    w, b = values(shape[-1:], dtype, 1), values(shape[-1:], dtype, 2)
    emulated, cpu = run_both("layer_norm", x, [shape[-1]], w, b, 1e-5)
    assert_same(emulated, cpu, f"layer_norm {path}")


@pytest.mark.parametrize("shape, path", ROWS, ids=[p for _, p in ROWS])
@pytest.mark.parametrize("op", ["var.correction", "std.correction"])
def test_variance_rows(op, shape, path):
    x = values(shape, torch.float32) + 1000  # large mean: a one-pass sum of squares would cancel
    emulated, cpu = run_both(op, x, [1])
    torch.testing.assert_close(emulated, cpu, rtol=1e-4, atol=1e-4)


BATCH_NORM = [((8, 3, 5, 5), "rows"), ((600, 40), "columns"), ((2, 3, 100, 100), "chunked channels")]


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape, path", BATCH_NORM, ids=[p for _, p in BATCH_NORM])
def test_batch_norm(shape, path, training):
    x = values(shape, torch.float32)
    c = shape[1]
    w, b = values((c,), torch.float32, 1), values((c,), torch.float32, 2)
    rm, rv = torch.zeros(c), torch.ones(c)
    rm2, rv2 = rm.clone(), rv.clone()
    cpu = ops("structops", "batch_norm")(x, w, b, rm, rv, training, 0.1, 1e-5)
    emulated_library()
    emulated = ops("structops_emu", "batch_norm")(x, w, b, rm2, rv2, training, 0.1, 1e-5)
    assert_same(emulated, cpu, f"batch_norm {path}")
    assert_same((rm2, rv2), (rm, rv), f"batch_norm {path} running stats")


# --- index ops (index.cu) ---------------------------------------------------------------------
def test_index_ops():
    x = values((50, 33), torch.float32)
    i = torch.randint(0, 50, (70,))
    for qualified, args in [
        ("index_select", (x, 0, i)),
        ("index_select", (x, 1, i % 33)),
        ("gather", (x, 1, torch.randint(0, 33, (50, 20)))),
        ("take", (x, torch.randint(-1650, 1650, (40, 3)))),
        ("embedding", (x, torch.randint(0, 50, (9, 4)))),
    ]:
        emulated, cpu = run_both(qualified, *args)
        assert torch.equal(emulated, cpu), qualified


@pytest.mark.parametrize("numel", [10, 5000, 300000], ids=str)
@pytest.mark.parametrize(
    "dtype", (torch.uint8, torch.float16, torch.float32, torch.float64, torch.complex128), ids=str
)
def test_masked_select(numel, dtype):
    """The count pass (ballots, popc, block scan) and the write pass for each element size."""
    x = values((numel,), torch.float64).to(dtype) if dtype != torch.uint8 else torch.arange(numel).to(dtype)
    mask = values((numel,), torch.float64, 3) > 0.3
    emulated, cpu = run_both("masked_select", x, mask)
    assert torch.equal(emulated, cpu)


@pytest.mark.parametrize("mode", [0, 1, 2], ids=["sum", "mean", "max"])
def test_embedding_bag(mode):
    weight = values((40, 70), torch.float32)
    indices = torch.randint(0, 40, (200,))
    offsets = torch.tensor([0, 3, 3, 50, 120])
    emulated, cpu = run_both("embedding_bag", weight, indices, offsets, mode=mode)
    assert_same(emulated, cpu, f"embedding_bag mode {mode}")


# --- mm (mm.cu): partial tiles in every direction ---------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("m, k, n", [(1, 1, 1), (65, 17, 130), (130, 100, 63)], ids=str)
def test_tiled_mm(m, k, n, dtype):
    from structops import autotune

    a, b = values((m, k), dtype), values((k, n), dtype, 1)
    with autotune.pin("mm.out@cuda", "tiled"):
        emulated, cpu = run_both("mm", a, b)
    assert_same(emulated, cpu, "tiled mm")


# --- pooling, cdist, losses ------------------------------------------------------------------
def test_pools_and_cdist():
    x = values((2, 3, 17, 19), torch.float32)
    for qualified, args in [
        ("max_pool2d_with_indices", (x, [3, 3], [2, 2], [1, 1], [1, 1], True)),
        ("avg_pool2d", (x, [3, 2], [2, 1], [1, 0], True, False)),
        ("cdist", (values((3, 40, 7), torch.float32), values((3, 50, 7), torch.float32, 1), 2.0)),
        ("cdist", (values((3, 40, 7), torch.float32), values((3, 50, 7), torch.float32, 1), 1.5)),
    ]:
        emulated, cpu = run_both(qualified, *args)
        assert_same(emulated, cpu, qualified)


@pytest.mark.parametrize("reduction", [0, 1, 2], ids=["none", "mean", "sum"])
def test_losses(reduction):
    x, t = values((300, 10), torch.float32), values((300, 10), torch.float32, 1)
    labels = torch.randint(0, 10, (300,))
    for qualified, args in [
        ("mse_loss", (x, t, reduction)),
        ("binary_cross_entropy", (torch.sigmoid(x), torch.sigmoid(t), None, reduction)),
        ("cross_entropy_loss", (x, labels, None, reduction)),
    ]:
        emulated, cpu = run_both(qualified, *args)
        assert_same(emulated, cpu, f"{qualified} reduction {reduction}")


CROSS_ENTROPY = {
    "thread per sample": lambda: (values((300, 10), torch.float32), torch.randint(0, 10, (300,))),
    "warp per sample (C >= 32)": lambda: (values((70, 40), torch.float32), torch.randint(0, 40, (70,))),
    "spatial": lambda: (values((4, 10, 5, 3), torch.float32), torch.randint(0, 10, (4, 5, 3))),
    "probabilities": lambda: (
        values((50, 40), torch.float32),
        torch.softmax(values((50, 40), torch.float32, 1), 1),
    ),
}


@pytest.mark.parametrize("reduction", [0, 1, 2], ids=["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("case", CROSS_ENTROPY)
def test_cross_entropy_paths(case, weighted, reduction):
    x, target = CROSS_ENTROPY[case]()
    weight = values((x.shape[1],), torch.float32, 2).abs() if weighted else None
    if not target.is_floating_point():
        target[0] = -100  # ignored
    emulated, cpu = run_both("cross_entropy_loss", x, target, weight, reduction, -100, 0.1)
    torch.testing.assert_close(emulated, cpu, rtol=1e-5, atol=1e-5)


def infinite_logits(classes: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Samples torch's cross_entropy (through log_softmax, shifted by the max) makes NaN (a +inf
    logit, all -inf, a NaN) or not (one -inf logit: probability 0; its target: inf), padded with
    zero logits to `classes`, and the targets."""
    inf, nan = math.inf, math.nan
    first = [[1.0, 2, 3], [-inf] * 3, [inf, 0, 0], [0, inf, 0], [nan, 0, 0], [-inf, 0, 1], [-inf, 0, 1]]
    x = torch.zeros(len(first), classes)
    x[:, :3] = torch.tensor(first)
    x[1] = -inf
    return x, torch.tensor([0, 0, 1, 1, 2, 2, 0])


@pytest.mark.parametrize("classes", [3, 40], ids=["thread per sample", "warp per sample"])
def test_cross_entropy_infinite_logits_as_torch(classes):
    x, target = infinite_logits(classes)
    want = torch.ops.aten.cross_entropy_loss(x, target, None, 0)
    assert want[2:5].isnan().all() and want[1].isnan() and want[6] == math.inf  # what torch does
    emulated, cpu = run_both("cross_entropy_loss", x, target, None, 0)
    torch.testing.assert_close(emulated, want, equal_nan=True)
    torch.testing.assert_close(cpu, want, equal_nan=True)


# --- generated pointwise kernels (pointwise.cuh) ------------------------------------------------
LAYOUTS = {
    "contiguous with a tail": lambda x: x,
    "misaligned view": lambda x: x.flatten()[1:].view(-1),
    "transposed": lambda x: x.t(),
    "sliced": lambda x: x[:, ::2],
    "broadcast": lambda x: x[:1].expand_as(x),
}


@pytest.mark.parametrize("dtype", FLOATS + (torch.int64, torch.int32, torch.uint8), ids=str)
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("op", ["add.Tensor", "mul.Tensor", "where.self", "clamp"])
def test_pointwise_layouts(op, layout, dtype):
    make = LAYOUTS[layout]
    a, b = make(values((37, 41), dtype)), make(values((37, 41), dtype, 1))
    if op == "where.self":
        emulated, cpu = run_both(op, a > b, a, b)
    elif op == "clamp":
        emulated, cpu = run_both(op, a, -1, 2)
    else:
        emulated, cpu = run_both(op, a, b)
    assert_same(emulated, cpu, f"{op} {layout}")


@pytest.mark.parametrize("out_layout", ["transposed", "sliced"])
@pytest.mark.parametrize("dtype", (torch.float32, torch.bfloat16, torch.int64), ids=str)
def test_pointwise_out_in_its_own_layout(out_layout, dtype):
    """An out= (or self) whose strides differ from the meta function's is written in place by the
    CUDA wrappers too (OutputTarget any_strides): the strided kernel's output through its strides,
    the out's strides and storage kept."""
    a, b = values((37, 41), dtype), values((37, 41), dtype, 1).t().contiguous().t()
    results = []
    for library in ("structops_emu", "structops"):
        emulated_library()
        out = values((41, 37), dtype).t() if out_layout == "transposed" else values((37, 82), dtype)[:, ::2]
        strides, pointer = out.stride(), out.data_ptr()
        ops(library, "add.out")(a, b, alpha=2, out=out)
        assert out.stride() == strides and out.data_ptr() == pointer
        self = out.clone() if out_layout == "transposed" else out
        ops(library, "mul_.Tensor")(self, b)
        results.append(self)
    assert_same(results[0], results[1], f"add(out=) then mul_ into a {out_layout} {dtype} tensor")


@pytest.mark.parametrize(
    "a, b",
    [
        ((5, 1, 7), (1, 3, 1)),  # three merged dims, both operands broadcast
        ((2, 1, 3, 1, 5), (1, 4, 1, 6, 1)),  # five dims: every division of the offset calculator
        ((1, 1021), (641, 1)),  # prime sizes: multipliers far from a power of two
        ((1024, 1), (1, 513)),  # a power of two and one past it
        ((3, 1, 1), (1, 1, 1)),  # more elements per thread than the tensor holds (a partial lane group)
    ],
    ids=str,
)
def test_pointwise_broadcast_geometries(a, b):
    """The strided kernel's positions per dim (multiplies instead of divisions, four elements per
    thread) give every element: broadcasts whose merged geometry keeps 2 to 5 dims."""
    x, y = values(a, torch.float32), values(b, torch.float32, 1)
    emulated, cpu = run_both("add.Tensor", x, y)
    assert_same(emulated, cpu, f"{a} + {b}")
    emulated, cpu = run_both("mul.Tensor", x.transpose(0, -1), y.transpose(0, -1))
    assert_same(emulated, cpu, f"{a} * {b}, transposed")


@pytest.mark.parametrize("dtype", FLOATS + (torch.int64, torch.int16, torch.uint8, torch.bool), ids=str)
@pytest.mark.parametrize("layout", ["contiguous with a tail", "transposed"])
def test_a_cpu_scalar_operand_is_read_from_the_launch(layout, dtype):
    """A 0-dim CPU tensor (a Python number, a CPU scalar beside CUDA tensors) is not copied to the
    device: its value, converted to the operand's dtype, travels in the launch (PointwiseLaunch::
    values), in the vectorised and the strided kernel, as either operand."""
    x = LAYOUTS[layout](values((37, 41), dtype))
    number = torch.tensor(True if dtype == torch.bool else 2.5 if dtype.is_floating_point else 3)
    for args in ((x, number), (number, x), (x, torch.tensor(-1.75, dtype=torch.float64))):
        emulated, cpu = run_both("mul.Tensor", *args)
        assert_same(emulated, cpu, f"mul {layout} {[tuple(a.shape) for a in args]}")
    if dtype != torch.bool:
        emulated, cpu = run_both("add.Scalar", x, 3, alpha=2)  # the number as a wrapped 0-dim tensor
        assert_same(emulated, cpu, f"add.Scalar {layout}")


@pytest.mark.parametrize(
    "op, args, kwargs",
    [
        ("add.Tensor", (torch.ones(3, dtype=torch.int8), torch.ones(3, dtype=torch.int8)), {"alpha": 1000}),
        ("clamp_min", (torch.tensor([1, 5], dtype=torch.uint8), 300), {}),
        ("clamp_max", (torch.ones(3, dtype=torch.float16), 1e6), {}),
    ],
    ids=["add int8 alpha=1000", "clamp_min uint8 300", "clamp_max float16 1e6"],
)
def test_a_number_the_compute_type_cannot_hold_raises(op, args, kwargs):
    """As torch's kernels (Scalar::to), on the CUDA path too: not a wrapped or infinite number."""
    emulated_library()
    for library in ("structops", "structops_emu"):
        with pytest.raises(RuntimeError, match="overflow"):
            ops(library, op)(*args, **kwargs)


def test_tiled_mm_with_more_than_65535_row_tiles():
    """m tiles once sat on grid.y, which stops at 65535: m > 4,194,240 failed to launch."""
    from structops import autotune

    m = 65535 * 64 + 65
    a, b = values((m, 1), torch.float32), torch.tensor([[2.0]])
    with autotune.pin("mm.out@cuda", "tiled"):
        emulated, cpu = run_both("mm", a, b)
    assert torch.equal(emulated, cpu)


# --- 64-bit index instantiations, forced on small tensors (index_fits, structgen/cuda/launch.cuh)
# A GPU takes them only past 2^31 elements; the emulator's set_wide_indices makes every launcher
# choose them here.
WIDE_CALLS = {
    "add, contiguous": lambda: (
        "add.Tensor",
        values((37, 41), torch.float32),
        values((37, 41), torch.float32, 1),
    ),
    "add, strided": lambda: (
        "add.Tensor",
        values((41, 37), torch.float32).t(),
        values((37, 1), torch.float32, 1),
    ),
    "where, strided int64": lambda: (
        "where.self",
        values((37, 41), torch.int64) > 0,
        values((41, 37), torch.int64).t(),
        values((37, 41), torch.int64, 1),
    ),
    "batch_norm, training": lambda: (
        "batch_norm",
        values((8, 3, 5, 5), torch.float32),
        None,
        None,
        None,
        None,
        True,
        0.1,
        1e-5,
    ),
    "index_select": lambda: ("index_select", values((50, 33), torch.float32), 1, torch.randint(0, 33, (70,))),
    "gather": lambda: ("gather", values((50, 33), torch.float64), 1, torch.randint(0, 33, (50, 20))),
    "take": lambda: ("take", values((50, 33), torch.float16), torch.randint(-1650, 1650, (40, 3))),
    "embedding, int32 indices": lambda: (
        "embedding",
        values((50, 33), torch.float32),
        torch.randint(0, 50, (9, 4), dtype=torch.int32),
    ),
}


@pytest.fixture
def wide_indices():
    emulated_library()
    torch.ops.structops_emu_checks.set_wide_indices(True)
    yield
    torch.ops.structops_emu_checks.set_wide_indices(False)


@pytest.mark.parametrize("call", WIDE_CALLS)
def test_64_bit_index_instantiations(call, wide_indices):
    qualified, *args = WIDE_CALLS[call]()
    emulated, cpu = run_both(qualified, *args)
    assert_same(emulated, cpu, f"{call} with 64-bit indices")


def test_wide_indices_switch_takes_the_64_bit_kernels(tmp_path):
    """The switch really reaches the launchers: the trace lists the 64-bit instantiations."""
    trace = tmp_path / "trace.txt"
    script = (
        "import torch\n"
        "from structgen.conformance.emulation import emulated_library\n"
        "from structgen.conformance.spec import op\n"
        "from tests.under_test import use_structops\n"
        "use_structops()\n"
        "emulated_library()\n"
        "torch.ops.structops_emu_checks.set_wide_indices(True)\n"
        "x = torch.randn(37, 41)\n"
        "op('structops_emu', 'add.Tensor')(x, x)\n"
        "op('structops_emu', 'add.Tensor')(x.t(), x[:1].t())\n"
        "op('structops_emu', 'batch_norm')(torch.randn(4, 3, 5), None, None, None, None, True, 0.1, 1e-5)\n"
    )
    subprocess.run(
        [sys.executable, "-c", script],
        check=True,
        cwd=Path(__file__).resolve().parents[2],  # the script imports tests.under_test
        env={**os.environ, "STRUCTGEN_EMU_TRACE": str(trace)},
    )
    ran = trace.read_text()
    for kernel in (
        "contiguous_kernel<Threads, Unroll, VEC, int64_t>",
        "strided_kernel<Threads, int64_t>",
        "batch_norm_stats_kernel<T, int64_t>",
        "batch_norm_apply_kernel<T, int64_t>",
    ):
        assert kernel in ran, f"{kernel} did not run; the trace holds:\n{ran}"
    assert "uint32_t>" not in ran, ran


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_dropout_draws_its_own_bits_with_the_right_rate(p):
    """The CUDA dropout's philox draw: over 1M elements (a grid-stride loop on 2 SMs) the kept share
    is 1 - p within 5 standard deviations, each kept element is x / (1 - p) and each dropped one 0,
    the same seed repeats the draw, another seed draws another mask, and the bits do not repeat
    with the element's group of 4 (a counter reuse would)."""
    emulated_library()
    op = ops("structops_emu", "dropout")
    x = torch.rand(1 << 20) + 0.5
    torch.manual_seed(1)
    out, mask = op(x, p, True)
    n = x.numel()
    sd = math.sqrt(n * p * (1 - p))
    assert abs(int(mask.sum()) - n * (1 - p)) < 5 * sd
    torch.testing.assert_close(out, torch.where(mask, x * (1 / (1 - p)), torch.zeros(())), rtol=0, atol=0)
    torch.manual_seed(1)
    assert torch.equal(op(x, p, True)[1], mask)
    torch.manual_seed(2)
    assert not torch.equal(op(x, p, True)[1], mask)
    groups = mask.view(-1, 4)
    assert not torch.equal(groups[0::2], groups[1::2])  # neighbouring groups draw apart
    for j in range(4):  # each lane of a group is kept at the same rate
        assert abs(int(groups[:, j].sum()) - n / 4 * (1 - p)) < 5 * sd / 2
