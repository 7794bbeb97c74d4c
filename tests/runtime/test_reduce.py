"""The CPU reduction loops (structops/cpu_reduce.h) on shapes the conformance suite's small samples
do not reach: the outer loop (>= 16 kept elements outside contiguous reduced dims), the split full
reduction (more than one chunk), NaN propagation in every loop, and thread-count independence."""

import pytest
import structops
import torch

OPS = {
    "sum": (structops.sum, torch.sum),
    "mean": (structops.mean, torch.mean),
    "amax": (structops.amax, torch.amax),
    "amin": (structops.amin, torch.amin),
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
