"""Indexing ops beyond the generated suite: kernel paths (strided inputs, every element size,
sizes past the parallel grain), deterministic index errors, masked_select on fake tensors and
under torch.compile, Tensor[] outputs, embedding_bag against torch on random bags."""

import os
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F
from torch._subclasses.fake_tensor import DynamicOutputShapeException, FakeTensorMode
from torch.fx.experimental.symbolic_shapes import ShapeEnv

import structops

# One dtype per element size the kernels dispatch on (1, 2, 4, 8, 16 bytes).
SIZES = [torch.bool, torch.float16, torch.float32, torch.int64, torch.complex128]


def _rand(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(*shape, generator=g, dtype=torch.float64)
    return (x > 0) if dtype == torch.bool else x.to(dtype)


def _layouts(x):
    """The same values contiguous, transposed in memory, and as a strided view."""
    yield x
    if x.dim() >= 2:
        yield x.transpose(0, -1).contiguous().transpose(0, -1)
    buf = torch.empty(*x.shape[:-1], 2 * x.shape[-1], dtype=x.dtype)
    buf[..., ::2] = x
    yield buf[..., ::2]


@pytest.mark.parametrize("dtype", SIZES)
def test_index_select_layouts_and_sizes(dtype):
    x = _rand(300, 70, dtype=dtype)
    for dim in (0, 1, -1):
        idx = torch.randint(0, x.size(dim), (123,), generator=torch.Generator().manual_seed(1))
        for xs in _layouts(x):
            for ix in (idx, idx.to(torch.int32), torch.stack([idx, idx], 1)[:, 0]):  # the last one strided
                torch.testing.assert_close(
                    structops.index_select(xs, dim, ix), torch.index_select(xs, dim, ix)
                )


@pytest.mark.parametrize("dtype", SIZES)
def test_gather_layouts_and_sizes(dtype):
    x = _rand(64, 40, 9, dtype=dtype)
    g = torch.Generator().manual_seed(2)
    for dim in (0, 1, 2):
        shape = [64, 40, 9]
        shape[dim] = 17
        idx = torch.randint(0, x.size(dim), shape, generator=g)
        for xs in _layouts(x):
            for ix in (idx, idx.transpose(0, 1).contiguous().transpose(0, 1), idx.to(torch.int32)):
                torch.testing.assert_close(structops.gather(xs, dim, ix), torch.gather(xs, dim, ix))


@pytest.mark.parametrize("dtype", SIZES)
def test_take_and_masked_select_layouts(dtype):
    x = _rand(120, 50, dtype=dtype)
    idx = torch.randint(-x.numel(), x.numel(), (40, 33), generator=torch.Generator().manual_seed(3))
    mask = _rand(120, 50, dtype=torch.bool, seed=4)
    for xs in _layouts(x):
        torch.testing.assert_close(structops.take(xs, idx), torch.take(xs, idx))
        torch.testing.assert_close(structops.take(xs, idx.t()), torch.take(xs, idx.t()))
        for m in _layouts(mask):
            torch.testing.assert_close(structops.masked_select(xs, m), torch.masked_select(xs, m))
        for m in (mask[:1], mask[:, :1], mask[0, 0]):  # the mask broadcasts
            torch.testing.assert_close(structops.masked_select(xs, m), torch.masked_select(xs, m))
    # self broadcasts against a larger mask
    small, big = _rand(50, dtype=dtype), _rand(7, 120, 50, dtype=torch.bool, seed=5)
    torch.testing.assert_close(structops.masked_select(small, big), torch.masked_select(small, big))


def test_large_sizes_cross_the_parallel_grain():
    x = _rand(2000, 600)
    g = torch.Generator().manual_seed(6)
    idx = torch.randint(0, 2000, (5000,), generator=g)
    torch.testing.assert_close(structops.index_select(x, 0, idx), torch.index_select(x, 0, idx))
    idx1 = torch.randint(0, 600, (500,), generator=g)
    torch.testing.assert_close(structops.index_select(x, 1, idx1), torch.index_select(x, 1, idx1))
    gi = torch.randint(0, 600, (2000, 300), generator=g)
    torch.testing.assert_close(structops.gather(x, 1, gi), torch.gather(x, 1, gi))
    m = x > 0.3
    torch.testing.assert_close(structops.masked_select(x, m), torch.masked_select(x, m))
    flat = torch.randint(0, x.numel(), (1_000_000,), generator=g)
    torch.testing.assert_close(structops.take(x, flat), torch.take(x, flat))


def test_index_errors_name_the_first_bad_position():
    """A bad index deep in a big, parallel index is reported at its first position, every time."""
    idx = torch.zeros(1_000_000, dtype=torch.int64)
    idx[700_001] = 9
    idx[900_000] = 10
    x = torch.ones(9, 4)
    for _ in range(3):
        with pytest.raises(
            IndexError,
            match=r"^index_select: index 9 is out of range for dim 0 of 'self' with size 9 "
            r"\(at position 700001 of 'index'; expected 0 <= index < 9\)$",
        ):
            structops.index_select(x, 0, idx)
    with pytest.raises(IndexError, match=r"^take: index 36 is out of range for 'self' with 36 elements"):
        structops.take(x, torch.tensor([0, 36, 40]))
    with pytest.raises(
        RuntimeError,
        match=r"^gather: index -1 is out of range for dim 1 of 'self' with size 4 "
        r"\(at position 1 of 'index'",
    ):
        structops.gather(x, 1, torch.tensor([[0, -1]]))
    # index_select checks the index even when the result is empty (as torch does)
    with pytest.raises(IndexError, match="index_select: index 3 is out of range"):
        structops.index_select(torch.ones(2, 0), 0, torch.tensor([3]))


def test_out_variants_resize_and_keep_their_dtype():
    """index_select, like torch's, writes only an out of its result dtype (out_dtype: exact)."""
    x = _rand(6, 5)
    idx = torch.tensor([5, 0, 2])
    out = torch.empty(0)
    structops.index_select(x, 0, idx, out=out)
    torch.testing.assert_close(out, torch.index_select(x, 0, idx))
    with pytest.raises(RuntimeError, match="same scalar type"):
        torch.index_select(x, 0, idx, out=torch.empty(0, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="expected 'out' to have the result dtype Float, but got Double"):
        structops.index_select(x, 0, idx, out=torch.empty(0, dtype=torch.float64))
    out = torch.empty(2, 2)
    with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        structops.masked_select(x, x > 0, out=out)
    torch.testing.assert_close(out, torch.masked_select(x, x > 0))


# ---------------------------------------------------------------------------------------------
# masked_select on fake tensors and under torch.compile


def test_masked_select_fake_without_shape_env_raises_like_torch():
    with FakeTensorMode():
        x, m = torch.ones(3, 4), torch.ones(4, dtype=torch.bool)
        with pytest.raises(DynamicOutputShapeException):
            torch.masked_select(x, m)
        with pytest.raises(DynamicOutputShapeException):
            structops.masked_select(x, m)


def test_masked_select_fake_with_shape_env_has_an_unbacked_size():
    with FakeTensorMode(shape_env=ShapeEnv(allow_dynamic_output_shape_ops=True)):
        x, m = torch.ones(3, 4, dtype=torch.float64), torch.ones(4, dtype=torch.bool)
        ours, theirs = structops.masked_select(x, m), torch.masked_select(x, m)
        assert ours.dim() == theirs.dim() == 1 and ours.dtype == theirs.dtype == torch.float64
        assert isinstance(ours.shape[0], torch.SymInt) and not ours.shape[0].node.has_hint()
        # the checks run on fake tensors too, with the C++ meta function's messages
        with pytest.raises(
            RuntimeError, match="masked_select: 'mask' has dtype Float, which masked_select does not"
        ):
            structops.masked_select(x, torch.ones(4))
        with pytest.raises(
            RuntimeError, match=r"masked_select: the size of 'mask' \(5\) must match the size of 'self'"
        ):
            structops.masked_select(x, torch.ones(5, dtype=torch.bool))
    no_dynamic = FakeTensorMode(shape_env=ShapeEnv(allow_dynamic_output_shape_ops=False))
    with no_dynamic, pytest.raises(DynamicOutputShapeException):
        structops.masked_select(torch.ones(3), torch.ones(3, dtype=torch.bool))


def test_masked_select_on_meta_tensors_is_refused():
    with pytest.raises((RuntimeError, NotImplementedError), match="data-dependent|Meta"):
        structops.masked_select(torch.ones(3, device="meta"), torch.ones(3, dtype=torch.bool, device="meta"))


@pytest.mark.parametrize("dynamic", [False, True])
def test_masked_select_compiles_with_a_graph_break(dynamic):
    torch._dynamo.reset()

    def f(x, m):
        return structops.masked_select(x * 2, m).sum() + structops.masked_select(x, m).numel()

    compiled = torch.compile(f, fullgraph=False, dynamic=dynamic)
    for n in (5, 8):
        x = _rand(n, 4, seed=n)
        m = x > 0
        torch.testing.assert_close(compiled(x, m), f(x, m))


def test_masked_select_traces_with_captured_dynamic_output_shapes():
    torch._dynamo.reset()

    def f(x, m):
        return structops.masked_select(x, m) * 3

    x = _rand(6, 5)
    with torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True):
        compiled = torch.compile(f, fullgraph=True, dynamic=True, backend="aot_eager")
        torch.testing.assert_close(compiled(x, x > 0), f(x, x > 0))


def test_masked_select_opcheck():
    x = _rand(4, 6)
    torch.library.opcheck(torch.ops.structops.masked_select.default, (x, x > 0))
    torch.library.opcheck(torch.ops.structops.masked_select.default, (x, torch.tensor([True, False] * 3)))


# ---------------------------------------------------------------------------------------------
# Tensor[] outputs


@pytest.mark.parametrize("dtype", SIZES)
def test_split_with_sizes_copy_layouts(dtype):
    x = _rand(40, 30, 6, dtype=dtype)
    for xs in _layouts(x):
        for sizes, dim in (([10, 0, 30], 0), ([7, 23], 1), ([1, 5], -1)):
            ours = structops.split_with_sizes_copy(xs, sizes, dim)
            theirs = torch.split_with_sizes_copy(xs, sizes, dim)
            assert isinstance(ours, list) and len(ours) == len(theirs)
            for a, e in zip(ours, theirs, strict=True):
                torch.testing.assert_close(a, e)
                assert a.is_contiguous()


@pytest.mark.parametrize("dtype", SIZES)
@pytest.mark.parametrize(
    "shape, sizes, dim",
    [
        ((3, 5, 7), [2, 0, 3], 1),  # rows of 7 elements, a piece of none
        ((64, 300), [1] * 300, 1),  # one element per piece and row: fixed-size moves
        ((700, 96), [17, 64, 15], 1),  # every short-row move width, overlapping tails
        ((2, 70_000), [3, 69_990, 7], 1),  # rows past 64 KiB are cut; wide enough for two threads
        ((200_000,), [150_000, 50_000], 0),  # one row
    ],
)
def test_cat_stack_split_row_copies(dtype, shape, sizes, dim):
    """cat, stack and split copy rows of contiguous tensors in 64-byte vector moves or short inline
    moves, by width and on torch's threads (csrc/ops/shape/cpu.cpp): every path against torch."""
    x = _rand(*shape, dtype=dtype)
    pieces = structops.split_with_sizes_copy(x, sizes, dim)
    for a, e in zip(pieces, torch.split_with_sizes_copy(x, sizes, dim), strict=True):
        assert torch.equal(a, e)
    assert torch.equal(structops.cat(pieces, dim), x)
    for d in (0, dim, -1, x.dim()):
        assert torch.equal(structops.stack(pieces[:1] * 3, d), torch.stack(pieces[:1] * 3, d))


@pytest.mark.parametrize("sizes", [[1001, 7999], [1001, 7, 7992]], ids=["row by row", "blocks of rows"])
def test_large_copies_streamed_into_fresh_outputs(sizes):
    """From 16 MiB in all the long runs are streamed (from each run's first 16-byte boundary: byte
    pieces put them at odd offsets), and from 4 MiB a functional output's fresh pages are mapped
    before the copy (csrc/runtime/structured.cpp): split, cat and stack against torch."""
    x = torch.randint(0, 256, (4200, 9000), dtype=torch.uint8)  # 37.8 MB
    pieces = structops.split_with_sizes_copy(x, sizes, 1)
    for a, e in zip(pieces, torch.split_with_sizes_copy(x, sizes, 1), strict=True):
        assert torch.equal(a, e)
    assert torch.equal(structops.cat(pieces, 1), x)
    assert torch.equal(structops.cat([x, x[:7]], 0), torch.cat([x, x[:7]], 0))  # rows cut at 64 KiB
    out = torch.empty_like(x)  # out=: pages the copy maps itself
    assert structops.cat(pieces, 1, out=out) is out and torch.equal(out, x)
    wide = pieces[-1]
    assert torch.equal(structops.stack([wide, wide], 1), torch.stack([wide, wide], 1))


def test_outputs_on_fresh_pages_between_4_and_32_mib():
    """Below glibc's largest mmap threshold the heap hands out fresh pages too (here every time:
    MALLOC_MMAP_THRESHOLD_ fixes the threshold at 128 KiB); functional outputs from 4 MiB get them
    mapped first (csrc/runtime/structured.cpp): pointwise, copies and a reduction against torch."""
    code = (
        "import torch, structops\n"
        "x = torch.rand(1300, 1000); y = torch.rand(1000)\n"  # outputs of 5.2 MB
        "assert torch.equal(structops.add(x, y), torch.add(x, y))\n"
        "torch.testing.assert_close(structops.exp(x), torch.exp(x))\n"
        "assert torch.equal(structops.cat([x, x], 1), torch.cat([x, x], 1))\n"
        "torch.testing.assert_close(structops.cumsum(x, 0), torch.cumsum(x, 0))\n"
        "print('ok')\n"
    )
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "131072"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_split_with_sizes_copy_out_list():
    x = _rand(5, 4)
    a, b = torch.empty(0), torch.empty(3, 4).t()  # b: right size, transposed
    assert torch.ops.structops.split_with_sizes_copy.out(x, [2, 3], out=[a, b.t()]) is None
    torch.testing.assert_close(a, x[:2])
    torch.testing.assert_close(b.t(), x[2:])
    with pytest.raises(
        RuntimeError,
        match=r"split_with_sizes_copy.out: expected 'out' to be a list of 2 tensors "
        r"\(one per output\), got 1",
    ):
        structops.split_with_sizes_copy(x, [2, 3], out=[torch.empty(0)])
    with pytest.raises(
        RuntimeError, match="expected 'out\\[1\\]' to have the result dtype Float, but got Double"
    ):
        structops.split_with_sizes_copy(x, [2, 3], out=[torch.empty(0), torch.empty(0, dtype=torch.float64)])


def test_split_with_sizes_copy_symbolic_sizes_compile():
    torch._dynamo.reset()

    def f(x, n):
        return [t * 2 for t in structops.split_with_sizes_copy(x, [n, x.shape[0] - n])]

    compiled = torch.compile(f, fullgraph=True, dynamic=True, backend="aot_eager")
    for rows in (6, 9):
        x = _rand(rows, 3, seed=rows)
        for a, e in zip(compiled(x, 2), f(x, 2), strict=True):
            torch.testing.assert_close(a, e)


def test_split_describe_lists_every_piece():
    d = structops.describe("split_with_sizes_copy", torch.ones(5, 3), [2, 3], 0)
    assert [(n, s) for n, s, _, _ in d.outputs] == [("out[0]", (2, 3)), ("out[1]", (3, 3))]


# ---------------------------------------------------------------------------------------------
# embedding_bag


@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
# Row widths for each path of the CPU loop (float sums: registers in blocks of 128 and 64 columns):
# narrower than a block (30), a block and its last columns (70, 200: the block at the row's end
# overlaps the one before), blocks only (128).
@pytest.mark.parametrize("width", [30, 70, 128, 200])
def test_embedding_bag_random_bags(mode, dtype, width):
    g = torch.Generator().manual_seed(mode)
    w = _rand(300, width, dtype=dtype)
    idx = torch.randint(0, 300, (2000,), generator=g)
    lengths = torch.randint(0, 9, (400,), generator=g)  # empty bags included
    offsets = torch.cat([torch.zeros(1, dtype=torch.int64), lengths.cumsum(0)[:-1]]).clamp(max=2000)
    name = ("sum", "mean", "max")[mode]
    tol = {"atol": 2e-2, "rtol": 2e-2} if dtype in (torch.float16, torch.bfloat16) else {}
    for last in (False, True):
        offs = torch.cat([offsets, torch.tensor([2000])]) if last else offsets
        expected = F.embedding_bag(idx, w, offs, mode=name, include_last_offset=last)
        torch.testing.assert_close(
            structops.embedding_bag(w, idx, offs, False, mode, False, None, last), expected, **tol
        )
    if mode == 0:
        psw = _rand(2000, dtype=dtype, seed=9)
        expected = F.embedding_bag(idx, w, offsets, mode="sum", per_sample_weights=psw)
        torch.testing.assert_close(
            structops.embedding_bag(w, idx, offsets, False, 0, False, psw), expected, **tol
        )


def test_embedding_bag_non_contiguous_inputs():
    w = _rand(40, 30).t().contiguous().t()
    idx = torch.arange(0, 80, 2) % 40
    offsets = torch.tensor([0, 3, 3, 17])
    torch.testing.assert_close(
        structops.embedding_bag(w, idx, offsets, False, 1), F.embedding_bag(idx, w, offsets, mode="mean")
    )
