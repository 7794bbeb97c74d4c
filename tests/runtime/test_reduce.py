"""The CPU reduction loops (structops/cpu_reduce.h; var/std, norm, logsumexp and any ride on them
too) on shapes the conformance suite's small samples do not reach: the outer loop (>= 16 kept elements outside contiguous reduced dims), the split full
reduction (more than one chunk), NaN propagation in every loop, and thread-count independence."""

import pytest
import structops
import torch

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
    ((517, 389), [], "transposed"),  # full reduction of a non-contiguous input
]


def laid_out(shape, layout, dtype, gen):
    if layout == "transposed":
        return torch.randn(tuple(reversed(shape)), generator=gen).to(dtype).t()
    if layout == "sliced":
        return torch.randn(shape[0], 2 * shape[1], generator=gen).to(dtype)[:, ::2]
    return torch.randn(shape, generator=gen).to(dtype)


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("shape, dims, layout", CASES, ids=lambda x: str(x).replace(" ", ""))
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64])
def test_matches_torch(op, shape, dims, layout, dtype):
    ours, theirs = OPS[op]
    x = laid_out(shape, layout, dtype, torch.Generator().manual_seed(0))
    dims = [] if dims is None and op in ("amax", "amin") else dims  # their dim is int[1], not optional
    for keepdim in (False, True):
        expected = theirs(x, dims, keepdim=keepdim)
        got = ours(x, dims, keepdim=keepdim)
        if op == "any":
            assert torch.equal(got, expected)
            continue
        tol = {"rtol": 1e-2, "atol": 1e-2} if dtype == torch.bfloat16 else {"rtol": 1e-5, "atol": 1e-4}
        torch.testing.assert_close(got, expected, **tol)


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


@pytest.mark.parametrize("n", [2**24 + 2**20, 5 * 10**7])
def test_float32_sum_of_many_ones_is_exact_as_torch(n):
    """Partials merged pairwise (cpu_reduce.h Cascade): 1e8 ones summed to 99,999,920 when the
    64 chunk partials were added one after another."""
    x = torch.ones(n)
    assert structops.sum(x, [0]).item() == torch.sum(x).item() == n
    assert structops.sum(x.view(2, -1), [1]).tolist() == [n // 2, n // 2]
