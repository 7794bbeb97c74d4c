"""The CPU reduction loops (structgen/cpu/reduce.h; var/std, norm, logsumexp and any ride on them
too) on shapes the conformance suite's small samples do not reach: the outer loop (>= 16 kept
elements outside contiguous reduced dims), the split full reduction (more than one chunk), NaN
propagation in every loop, and thread-count independence."""

import subprocess
import sys

import pytest
import torch

import structops
from tests.conformance.opinfo import DTYPES  # the 12 dtypes the conformance suite runs

OPS = {
    "sum": (structops.sum, torch.sum),
    "mean": (structops.mean, torch.mean),
    "amax": (structops.amax, torch.amax),
    "amin": (structops.amin, torch.amin),
    "var": (
        lambda x, d, keepdim: structops.var(x, d, correction=0, keepdim=keepdim),
        lambda x, d, keepdim: torch.var(x, d, correction=0, keepdim=keepdim),
    ),
    "std": (
        lambda x, d, keepdim: structops.std(x, d, keepdim=keepdim),
        lambda x, d, keepdim: torch.std(x, d, keepdim=keepdim),
    ),
    "norm2": (
        lambda x, d, keepdim: structops.norm(x, 2, d or [], keepdim),
        lambda x, d, keepdim: torch.linalg.vector_norm(x, 2, d, keepdim),
    ),
    "norm_inf": (
        lambda x, d, keepdim: structops.norm(x, float("inf"), d or [], keepdim),
        lambda x, d, keepdim: torch.linalg.vector_norm(x, float("inf"), d, keepdim),
    ),
    "logsumexp": (
        lambda x, d, keepdim: structops.logsumexp(x, d or list(range(x.dim())), keepdim),
        lambda x, d, keepdim: torch.logsumexp(x, d or list(range(x.dim())), keepdim),
    ),
    "any": (
        lambda x, d, keepdim: structops.any(x > 1, d or None, keepdim),
        lambda x, d, keepdim: torch.any(x > 1, d or None, keepdim),
    ),
}
# (shape, dims, how the input is laid out): which loop each case takes is in the comment.
CASES = [
    ((64, 1000), [0], "contiguous"),  # outer
    ((3, 50, 40), [0], "contiguous"),  # outer over two kept dims
    ((7, 5, 300), [0, 1], "contiguous"),  # outer over two reduced dims
    ((300, 70), [1], "contiguous"),  # inner
    ((300, 70), [0], "transposed"),  # inner after the permute (a view)
    ((40, 70), [1], "sliced"),  # copy, then inner
    ((200_003,), None, "contiguous"),  # full reduction in several chunks
    ((517, 389), [], "transposed"),  # full reduction of a non-contiguous input (memory order)
    ((300, 70), [0], "sliced"),  # outer along a strided dim
    ((300, 70), [0], "expanded"),  # outer, each reduced row the same (stride 0)
    ((300, 70), [1], "expanded"),  # inner
    ((5000,), None, "expanded"),  # full reduction of one element repeated
    ((7, 5, 300), [0, 2], "sliced"),  # rows gathered from two reduced dims
    ((6, 300, 40), [1], "contiguous"),  # columns per row of the outer dim: a middle dim reduced
    ((3, 5, 70, 33), [2], "sliced"),  # columns 2 apart, per row of two outer dims
    ((6, 50, 7, 40), [1, 2], "contiguous"),  # two middle dims reduced, columns per outer row
    ((9, 300, 8), [1], "contiguous"),  # narrow columns per outer index, lanes of period 32
    ((9, 300, 3), [1], "contiguous"),  # period 96, in memory
    ((5, 300, 13), [1], "contiguous"),  # period 416 (below 16 columns: never the rows)
    ((4, 3, 700, 24), [2], "contiguous"),  # 24 columns: period 96, narrow rather than tiles
    ((6, 300, 17), [1], "contiguous"),  # 17 columns: a period of 544 lanes, merged as a tree
    ((5, 300, 31), [1], "contiguous"),  # the longest period, 992 lanes
    ((6, 300, 64), [1], "contiguous"),  # 64 and 48 columns: the tiles (a period of 64 or 96 lanes,
    ((6, 300, 48), [1], "contiguous"),  # but more columns than the narrow loop's 32 accumulators)
    ((700, 17), [0], "contiguous"),  # one outer index: narrow columns over chunks of rows
]


def laid_out(shape, layout, dtype, gen):
    if layout == "transposed":
        return torch.randn(tuple(reversed(shape)), generator=gen).to(dtype).t()
    if layout == "sliced":
        return torch.randn(*shape[:-1], 2 * shape[-1], generator=gen).to(dtype)[..., ::2]
    if layout == "expanded":
        return torch.randn(1, *shape[1:], generator=gen).to(dtype).expand(shape)
    return torch.randn(shape, generator=gen).to(dtype)


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("shape, dims, layout", CASES, ids=lambda x: str(x).replace(" ", ""))
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.float64])
def test_matches_torch(op, shape, dims, layout, dtype):
    ours, theirs = OPS[op]
    x = laid_out(shape, layout, dtype, torch.Generator().manual_seed(0))
    dims = [] if dims is None and op in ("amax", "amin") else dims  # their dim is int[1], not optional
    for keepdim in (False, True):
        # torch in float64, rounded once: torch's own float32 2-norm of 5000 equal values is
        # 1.3e-5 off, ours 4e-7.
        expected = theirs(x.double(), dims, keepdim=keepdim).to(x.dtype if op != "any" else torch.bool)
        got = ours(x, dims, keepdim=keepdim)
        if op == "any":
            assert torch.equal(got, expected)
            continue
        tol = {torch.bfloat16: {"rtol": 1e-2, "atol": 1e-2}, torch.float16: {"rtol": 2e-3, "atol": 2e-3}}
        torch.testing.assert_close(got, expected, **tol.get(dtype, {"rtol": 1e-5, "atol": 1e-4}))


@pytest.mark.parametrize("op", ["amax", "amin"])
@pytest.mark.parametrize("shape, dims, layout", CASES, ids=lambda x: str(x).replace(" ", ""))
def test_nan_propagates(op, shape, dims, layout):
    x = laid_out(shape, layout, torch.float32, torch.Generator().manual_seed(1))
    for position in (0, x.numel() // 2, x.numel() - 1):  # first, middle (a vector lane), tail
        x[tuple(int(i) for i in torch.unravel_index(torch.tensor(position), x.shape))] = float("nan")
    ours, theirs = OPS[op]
    torch.testing.assert_close(ours(x, dims or []), theirs(x, dims or []), equal_nan=True)


def test_integer_and_bool_extrema():
    x = torch.randint(-(2**62), 2**62, (64, 1000))
    assert torch.equal(structops.amax(x, [0]), torch.amax(x, 0))
    assert torch.equal(structops.amin(x, [1]), torch.amin(x, 1))
    b = torch.rand(64, 1000) > 0.999
    assert torch.equal(structops.amax(b, [0]), torch.amax(b, 0))
    assert torch.equal(structops.amin(b, []), torch.amin(b))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "sliced", "transposed"])
def test_all_and_any_of_every_dtype(dtype, layout):
    # all/any read an element's bits (one loop per element size): -0.0 is false, NaN true, and a
    # complex number with a zero real part but a nonzero imaginary one true.
    values = [0, 1, -1, 2]
    if dtype.is_floating_point or dtype.is_complex:
        values += [-0.0, float("nan"), float("inf"), 1e-30]
    gen = torch.Generator().manual_seed(3)
    picks = torch.randint(len(values), (2, 37, 40), generator=gen)
    x = torch.tensor(values, dtype=torch.float64)[picks].to(dtype)
    if dtype.is_complex:
        x = torch.complex(torch.zeros(x.shape, dtype=x.real.dtype), x.real)  # only the imaginary part
    if dtype.is_floating_point or dtype.is_complex:  # a row of negative zeros: false
        x[0, 1] = torch.complex(torch.tensor(-0.0), torch.tensor(-0.0)) if dtype.is_complex else -0.0
    x[1, 5] = 0  # a row all false
    if dtype != torch.bool:
        x[1, 6] = 1
    if layout == "sliced":
        x = x[..., ::2]
    elif layout == "transposed":
        x = x.transpose(1, 2)
    for dims in ([2], [0, 2], [1], None):
        for ours, theirs in ((structops.all, torch.all), (structops.any, torch.any)):
            got = ours(x, dims)
            expected = theirs(x, dims) if dims is not None else theirs(x)
            assert got.dtype == expected.dtype and torch.equal(got, expected), (ours, dims)


@pytest.mark.parametrize("dtype", [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32], ids=str)
def test_sum_and_prod_into_a_narrow_integer_dtype_wrap_as_torch(dtype):
    # dtype= narrower than int64: computed in int64 and narrowed at the end, which must wrap as
    # torch's narrow arithmetic does (and a bool result is whether the sum is nonzero).
    gen = torch.Generator().manual_seed(4)
    x = torch.randint(-300, 300, (6, 50, 7), generator=gen)
    for source in (x, x.float() + 0.5, x[:, ::3]):
        for dims in ([1], [0, 2], None):
            got = structops.sum(source, dims, dtype=dtype)
            expected = torch.sum(source, dims, dtype=dtype) if dims else torch.sum(source, dtype=dtype)
            assert torch.equal(got, expected), ("sum", source.dtype, dims)
            # torch.prod takes one dim: the reference is the product in int64 of the values in
            # `dtype`, narrowed (what torch's narrow products wrap to; checked on one dim below).
            expected = source.to(dtype).long()
            for d in sorted(dims or range(source.dim()), reverse=True):
                expected = expected.prod(d)
            got = structops.prod(source, dims or [], dtype=dtype)
            assert torch.equal(got, expected.to(dtype)), ("prod", source.dtype, dims)
        assert torch.equal(structops.prod(source, [1], dtype=dtype), torch.prod(source, 1, dtype=dtype))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("p", [0, 1, 2, 3.5, float("inf"), float("-inf")])
def test_half_norms_round_as_float_norms_narrowed(dtype, p):
    # half and bfloat16 accumulate in float; their rarer p run float's loops on a float copy.
    x = torch.randn(33, 300, generator=torch.Generator().manual_seed(5)).to(dtype)
    x[0, :7] = 0
    for dims in ([1], [0], []):
        expected = structops.norm(x.float(), p, dims, False).to(dtype)
        assert torch.equal(structops.norm(x, p, dims, False), expected), dims
        torch.testing.assert_close(
            structops.norm(x, p, dims, False), torch.linalg.vector_norm(x.double(), p, dims or None).to(dtype)
        )


def test_result_does_not_depend_on_thread_count():
    x = torch.randn(1_000_003)
    old = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = structops.sum(x, None)
        torch.set_num_threads(max(2, old))
        many = structops.sum(x, None)
    finally:
        torch.set_num_threads(old)
    assert torch.equal(one, many)


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize(
    "shape, dim, layout",
    [
        ((300, 70), 1, "contiguous"),
        ((300, 70), 0, "transposed"),
        ((40, 70), 0, "sliced"),
        ((200_003,), None, "contiguous"),
        ((51, 38), None, "transposed"),
    ],
)
def test_arg_extrema_with_ties_and_nan(op, shape, dim, layout):
    x = laid_out(shape, layout, torch.float32, torch.Generator().manual_seed(2)).round()  # many ties
    ours, theirs = getattr(structops, op), getattr(torch, op)
    assert torch.equal(ours(x, dim), theirs(x, dim))
    x[tuple(int(i) for i in torch.unravel_index(torch.tensor(x.numel() // 3), x.shape))] = float("nan")
    assert torch.equal(ours(x, dim, True), theirs(x, dim, True))


@pytest.mark.parametrize("shape, dim", [((100_000,), 0), ((300, 700), 1), ((300, 700), 0), ((5, 40, 300), 1)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int32, torch.float64])
def test_cumsum_long_scans(shape, dim, dtype):
    x = (torch.randn(shape, generator=torch.Generator().manual_seed(3)) * 4).to(dtype)
    got, expected = structops.cumsum(x, dim), torch.cumsum(x, dim)
    assert got.dtype == expected.dtype
    torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-3)


# --- sum's kernel variants (manifest `kernels:`), each pinned -----------------------------------


@pytest.mark.parametrize("variant", ["rows", "columns"])
@pytest.mark.parametrize(
    ("shape", "dim"),
    [
        ((1 << 18, 4), 0),
        ((1 << 18, 4), 1),
        ((5000, 2), 0),
        ((3, 7000, 8), 1),
        ((100, 16), 0),
        ((1 << 16, 3), 0),
        ((40, 33), 1),
        ((2, 1 << 17), 0),
        ((5, 3000, 40), 1),
        ((5000, 17), 0),
        ((3, 5000, 5), 1),
    ],
)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32])
def test_sum_variants_match_torch(variant, shape, dim, dtype):
    """Narrow columns (a period-w lane fold), short rows (no lanes) and the chunked, cascaded paths."""
    from structops import autotune

    g = torch.Generator().manual_seed(3)
    x = (torch.randn(*shape, generator=g) * 4).to(dtype)
    for t in (x, x.transpose(0, -1).contiguous().transpose(0, -1)):  # both memory orders
        with autotune.pin("sum.IntList_out", variant):
            got = structops.sum(t, [dim])
        expected = t.double().sum(dim).to(got.dtype) if dtype == torch.bfloat16 else t.sum(dim)
        tol = {"atol": 1e-1, "rtol": 1e-2} if dtype == torch.bfloat16 else {"atol": 1e-3, "rtol": 1e-5}
        torch.testing.assert_close(got, expected, **tol)


def every_float16(shape, *, low=0.0, high=float("inf"), seed=0):
    """Every float16 value whose magnitude is in [low, high] (NaN excluded), shuffled and repeated
    to fill ``shape``: zeros, denormals, the largest values, infinities when high is inf."""
    every = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16).view(torch.float16)
    magnitude = every.float().abs()
    values = every[(magnitude >= low) & (magnitude <= high)]
    values = values[torch.randperm(values.numel(), generator=torch.Generator().manual_seed(seed))]
    n = torch.Size(shape).numel()
    return values.repeat(n // values.numel() + 1)[:n].view(shape)


FLOAT16_OPS = {  # what each op folds: finite values where a sum of them is compared
    "sum": (lambda x, d: structops.sum(x, [d]), {"high": 65504.0}),
    "mean": (lambda x, d: structops.mean(x, [d]), {"high": 65504.0}),
    "prod": (lambda x, d: structops.prod(x, d), {"low": 0.5, "high": 2.0}),
    "amax": (lambda x, d: structops.amax(x, [d]), {}),
    "amin": (lambda x, d: structops.amin(x, [d]), {}),
    "norm": (lambda x, d: structops.norm(x, 2, [d], False), {"high": 60.0}),
}


@pytest.mark.parametrize("variant", ["rows", "columns"])
@pytest.mark.parametrize(
    "shape, dim",
    [
        ((31, 2085), 1),  # rows: blocks of 256 and of 32, a tail
        ((2085, 31), 0),  # fewer than 32 columns: the narrow loop, by bit arithmetic
        ((300, 197), 0),  # column tiles of 64 and a tail
        ((197, 300), 1),
        ((21846, 3), 0),  # every value through float16_to_float (narrow columns)
        ((21846, 3), 1),  # and through the short-row loop
    ],
)
@pytest.mark.parametrize("op", sorted(FLOAT16_OPS))
def test_float16_reductions_fold_every_value_as_float(op, shape, dim, variant):
    """float16 inputs are widened by the vector instruction a block at a time and folded as floats
    (structgen/cpu/reduce.h FoldsWidenedFloat16: rows in blocks of 256 then 32 elements, columns
    64 at a time; tails, short rows and narrow columns by float16_to_float's bit arithmetic). Over
    every float16 value the result has the bits of the same loops on the input widened to float
    first, and is torch's within rounding."""
    from structops import autotune

    reduce, values = FLOAT16_OPS[op]
    x = every_float16(shape, **values)
    with autotune.pin("sum.IntList_out", variant):
        got = reduce(x, dim)
        expected = reduce(x.float(), dim).half()
    assert torch.equal(got.view(torch.int16), expected.view(torch.int16))
    theirs = {"norm": lambda: torch.linalg.vector_norm(x.double(), 2, dim)}.get(op)
    theirs = theirs() if theirs else getattr(torch, op)(x.double(), dim)
    torch.testing.assert_close(got, theirs.half(), rtol=2e-3, atol=1e-3)


@pytest.mark.parametrize("n", [2**24 + 2**20, 5 * 10**7])
def test_float32_sum_of_many_ones_is_exact_as_torch(n):
    """Partials merged pairwise (structgen/cpu/reduce.h Cascade): 1e8 ones summed to 99,999,920 when the
    64 chunk partials were added one after another."""
    x = torch.ones(n)
    assert structops.sum(x, [0]).item() == torch.sum(x).item() == n
    assert structops.sum(x.view(2, -1), [1]).tolist() == [n // 2, n // 2]


# --- reductions read strided inputs in place (no copy of the input) ------------------------------

_NO_COPY = """
import resource, torch, structops
from structops import autotune

def capped_by(extra):
    # The address space this process may still take: a copy of any input below would not fit.
    vm = next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (vm + extra, vm + extra))

base = torch.ones(3 * 2**26)  # 768 MiB
rows3 = base.view(-1, 3)  # sum over dim 0: three outputs, the reduced dim outside
sliced = base.view(3 * 2**12, 2**14)[:, ::2]  # every other column: 384 MiB to copy
wide = torch.arange(3.0).expand(2**31, 3)  # 8 GiB if made contiguous
capped_by(256 * 2**20)
assert structops.sum(torch.ones(1).expand(2**31), None).item() == 2**31
assert structops.sum(wide, [0]).tolist() == [0, 2**31, 2**32]
assert structops.mean(wide, [0]).tolist() == [0, 1, 2]
assert structops.amax(rows3, [0]).tolist() == [1, 1, 1]
assert structops.sum(sliced, [1]).eq(2**13).all()
for variant in ("rows", "columns"):
    with autotune.pin("sum.IntList_out", variant):
        assert structops.sum(rows3, [0]).tolist() == [2**26] * 3, variant
        assert structops.sum(sliced, [0]).eq(3 * 2**12).all(), variant
        assert structops.sum(sliced.t(), [1]).eq(3 * 2**12).all(), variant
"""


def test_strided_inputs_are_reduced_without_a_copy():
    """Issue 17 item 7: an expanded (stride-0) input, an outer reduced dim with few outputs, a
    sliced input, and each of sum's pinned variants on a layout it does not fit, all under an
    address-space cap that a copy of the input would exceed (a fresh process: the cap is final)."""
    subprocess.run([sys.executable, "-c", _NO_COPY], check=True, timeout=300)


# --- integer and bool inputs are folded in their own type (issue 56) ----------------------------

INTEGER_DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]


def integers_laid_out(shape, layout, dtype, gen):
    def values(*size):
        v = torch.randint(0 if dtype == torch.uint8 else -100, 100, size, generator=gen)
        return v > 0 if dtype == torch.bool else v.to(dtype)

    if layout == "transposed":
        return values(*reversed(shape)).t()
    if layout == "sliced":
        return values(*shape[:-1], 2 * shape[-1])[..., ::2]
    if layout == "expanded":
        return values(1, *shape[1:]).expand(shape)
    return values(*shape)


@pytest.mark.parametrize("shape, dims, layout", CASES, ids=lambda x: str(x).replace(" ", ""))
@pytest.mark.parametrize("dtype", INTEGER_DTYPES, ids=str)
def test_integer_reductions_read_in_place_match_torch(shape, dims, layout, dtype):
    """sum (both variants; into int64, a narrow dtype= and float64), prod, mean (dtype=) and
    cumsum of integer and bool inputs, which read the input in its own type and widen each element
    as torch does, on every loop's layout."""
    from structops import autotune

    x = integers_laid_out(shape, layout, dtype, torch.Generator().manual_seed(6))
    reduced = sorted(dims or range(x.dim()), reverse=True)
    for variant in ("rows", "columns"):
        with autotune.pin("sum.IntList_out", variant):
            for out_dtype in (None, torch.int16, torch.float64):
                got, expected = structops.sum(x, dims, dtype=out_dtype), torch.sum(x, dims, dtype=out_dtype)
                assert got.dtype == expected.dtype and torch.equal(got, expected), (variant, out_dtype)
    expected = x.long()  # torch.prod takes one dim: one at a time (int64 products wrap alike in any order)
    for d in reduced:
        expected = expected.prod(d)
    assert torch.equal(structops.prod(x, dims or []), expected)
    torch.testing.assert_close(
        structops.mean(x, dims, dtype=torch.float32), torch.mean(x, dims, dtype=torch.float64).float()
    )
    assert torch.equal(structops.cumsum(x, reduced[-1]), torch.cumsum(x, reduced[-1]))


_NO_INTEGER_COPY = """
import resource, torch, structops

def capped_by(extra):
    vm = next(int(l.split()[1]) * 1024 for l in open("/proc/self/status") if l.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (vm + extra, vm + extra))

scanned = torch.ones(2**26, dtype=torch.uint8)  # its cumsum: 512 MiB of int64, and as much again for a copy
capped_by(768 * 2**20)
n = 2**33 + 5  # an int64 copy: 64 GiB
assert structops.sum(torch.ones(1, dtype=torch.uint8).expand(n), [0], dtype=torch.uint8).item() == n % 256
assert structops.sum(torch.ones(1, dtype=torch.bool).expand(n), None).item() == n
assert structops.prod(torch.full((1,), -1, dtype=torch.int8).expand(2**31 + 1), [0]).item() == -1
threes = torch.full((1,), 3, dtype=torch.int16).expand(2**31)
assert structops.mean(threes, [0], dtype=torch.float32).item() == 3
assert structops.cumsum(scanned, 0)[-1].item() == 2**26
"""


def test_integer_inputs_are_reduced_without_an_int64_copy():
    """Issue 56: sum of an expanded uint8 input of 2^33 + 5 elements into uint8 (torch copies
    nothing; an int64 copy took 64 GiB), a bool sum into int64, an int8 prod, an int16 mean into
    float32 and a uint8 cumsum, under an address-space cap that such a copy would exceed."""
    subprocess.run([sys.executable, "-c", _NO_INTEGER_COPY], check=True, timeout=600)
