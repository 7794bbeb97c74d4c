"""Pooling and loss kernels on what the conformance samples do not reach: NaN and -inf windows
(torch's argmax rules), large inputs crossing the parallel grain, channels_last and sliced
inputs, dilation with padding, and the checks only data or a Tensor? can trigger."""

import math

import pytest
import torch

import structops

A = torch.ops.aten


def test_max_pool2d_nan_and_lowest_windows():
    x = torch.randn(2, 3, 9, 9)
    x[0, 0, 1, 1] = float("nan")
    x[0, 0, 2, 2] = float("nan")  # two NaNs in one window: torch keeps the last
    x[1, 1] = float("-inf")  # all -inf: the index is the window's first element
    for args in ([3, 3], [2, 2], [1, 1], [2, 1]), ([2], [1], [0], [1], True):
        got, want = structops.max_pool2d_with_indices(x, *args), A.max_pool2d_with_indices(x, *args)
        torch.testing.assert_close(got[0], want[0], equal_nan=True)
        assert torch.equal(got[1], want[1])


def test_max_pool_int_lowest():
    x = torch.full((1, 2, 6, 6), torch.iinfo(torch.int32).min, dtype=torch.int32)
    got, want = (
        structops.max_pool2d_with_indices(x, [3], [2], [1]),
        A.max_pool2d_with_indices(x, [3], [2], [1]),
    )
    assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])


@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "sliced"])
def test_pool_large_and_laid_out(layout):
    x = torch.randn(4, 32, 61, 67)
    if layout == "channels_last":
        x = x.contiguous(memory_format=torch.channels_last)
    elif layout == "sliced":
        x = x[:, ::2, :, 1:]
    got, want = (
        structops.max_pool2d_with_indices(x, [3, 3], [2, 2], [1, 1]),
        A.max_pool2d_with_indices(x, [3, 3], [2, 2], [1, 1]),
    )
    torch.testing.assert_close(got[0], want[0])
    assert torch.equal(got[1], want[1])
    for cip in (True, False):
        torch.testing.assert_close(
            structops.avg_pool2d(x, [3, 3], [2, 2], [1, 1], True, cip),
            A.avg_pool2d(x, [3, 3], [2, 2], [1, 1], True, cip),
            atol=1e-6,
            rtol=1e-5,
        )
    x3 = torch.randn(2, 8, 17, 18, 19)
    got, want = (
        structops.max_pool3d_with_indices(x3, [3], [2], [1], [1], True),
        A.max_pool3d_with_indices(x3, [3], [2], [1], [1], True),
    )
    torch.testing.assert_close(got[0], want[0])
    assert torch.equal(got[1], want[1])


def test_pool_single_int_arguments_and_fake_tensors():
    x = torch.randn(2, 3, 10, 11)
    got = structops.max_pool2d_with_indices(x, 3, 2, 1)
    want = A.max_pool2d_with_indices(x, [3, 3], [2, 2], [1, 1])
    assert torch.equal(got[1], want[1])
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        out, idx = structops.max_pool2d_with_indices(torch.empty(2, 3, 10, 11), [3, 2], [], [1, 0])
    assert out.shape == idx.shape == (2, 3, 4, 5) and idx.dtype == torch.int64  # stride [] = kernel_size


def test_avg_pool2d_divisor_override_zero():
    with pytest.raises(RuntimeError, match="avg_pool2d: divisor_override must not be zero"):
        structops.avg_pool2d(torch.ones(1, 1, 4, 4), [2, 2], [], [0, 0], False, True, 0)


def test_bce_input_range_and_weight_broadcast():
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        structops.binary_cross_entropy(torch.full((2, 3), 1.5), torch.ones(2, 3))
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        structops.binary_cross_entropy(torch.tensor([float("nan"), 0.5]), torch.ones(2), None, 0)
    with pytest.raises(RuntimeError, match="must match"):
        structops.binary_cross_entropy(torch.full((2, 3), 0.5), torch.ones(2, 3), torch.ones(4))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_bce_chunks_and_dtypes_as_torch(reduction, weighted, dtype):
    """40,001 elements: three parallel chunks, the last block of each partial; inputs of exactly 0
    and 1 (torch clamps the logs at -100); 16-bit losses rounded before they are summed, as torch."""
    g = torch.Generator().manual_seed(reduction)
    x, t, w = (torch.rand(40001, generator=g).to(dtype) for _ in range(3))
    x[:3] = torch.tensor([0.0, 1.0, 0.5])
    t[:3] = torch.tensor([1.0, 0.0, 1.0])
    w = w if weighted else None
    tol = {torch.bfloat16: 2e-2, torch.float16: 2e-3}.get(dtype, 1e-5)
    got, want = structops.binary_cross_entropy(x, t, w, reduction), A.binary_cross_entropy(x, t, w, reduction)
    torch.testing.assert_close(got, want, atol=tol, rtol=tol)
    if reduction == 0 and not weighted:
        assert got[0] == got[1] == 100  # log clamped to -100
    bad_target, bad_input = t.clone(), x.clone()
    bad_target[40000], bad_input[20000] = 1.5, float("nan")
    with pytest.raises(RuntimeError, match="all elements of target should be between 0 and 1"):
        structops.binary_cross_entropy(x, bad_target, w, reduction)
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        structops.binary_cross_entropy(bad_input, t, w, reduction)


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_losses_large(reduction):
    gen = torch.Generator().manual_seed(reduction)
    x, t, w = (torch.rand(300, 1001, generator=gen) * 0.98 + 0.01 for _ in range(3))
    torch.testing.assert_close(
        structops.binary_cross_entropy(x, t, w, reduction),
        A.binary_cross_entropy(x, t, w, reduction),
        atol=1e-5,
        rtol=1e-5,
    )
    torch.testing.assert_close(
        structops.mse_loss(x.t(), t.t(), reduction), A.mse_loss(x.t(), t.t(), reduction), atol=1e-5, rtol=1e-5
    )


# --- cross_entropy_loss ------------------------------------------------------------------------------


def _ce_inputs(seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(64, 10, 7, generator=g) * 3
    idx = torch.randint(0, 10, (64, 7), generator=g)
    idx[::5, 0] = -100
    return x, idx, torch.rand(10, generator=g) + 0.1


@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_indices_large(reduction, smoothing, weighted):
    x, idx, w = _ce_inputs()
    w = w if weighted else None
    expected = torch.ops.aten.cross_entropy_loss(x, idx, w, reduction, -100, smoothing)
    torch.testing.assert_close(structops.cross_entropy_loss(x, idx, w, reduction, -100, smoothing), expected)


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_cross_entropy_probabilities_large(reduction):
    x, _, w = _ce_inputs(1)
    p = torch.softmax(torch.randn(x.shape, generator=torch.Generator().manual_seed(2)), 1)
    expected = torch.ops.aten.cross_entropy_loss(x, p, w, reduction, -100, 0.1)
    torch.testing.assert_close(structops.cross_entropy_loss(x, p, w, reduction, -100, 0.1), expected)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16])
@pytest.mark.parametrize(
    "shape", [(9, 300), (3, 12, 70), (2, 5, 7, 11)], ids=["rows of 300", "spatial 70", "spatial 7x11"]
)
def test_cross_entropy_layouts_as_torch(shape, dtype):
    """The log-sum-exp's two loops: rows of classes (300: exp blocks of 256 and a remainder, 16-bit
    rows widened first) and blocks of up to 64 spatial positions (70: a full block and 6)."""
    g = torch.Generator().manual_seed(3)
    x = (torch.randn(shape, generator=g) * 4).to(dtype)
    idx = torch.randint(0, shape[1], (shape[0], *shape[2:]), generator=g)
    tol = {torch.bfloat16: 2e-2, torch.float16: 2e-3}.get(dtype, 1e-5)
    for reduction in (0, 1):
        torch.testing.assert_close(
            structops.cross_entropy_loss(x, idx, None, reduction),
            torch.ops.aten.cross_entropy_loss(x, idx, None, reduction),
            atol=tol,
            rtol=tol,
        )


@pytest.mark.parametrize("spatial", [False, True])
def test_cross_entropy_infinite_logits_as_torch(spatial):
    """torch computes cross_entropy through log_softmax, shifted by the max: a +inf logit, an all
    -inf sample or a NaN give NaN; a -inf logit is a probability of 0 (inf where it is the target)."""
    inf, nan = math.inf, math.nan
    rows = [[1.0, 2, 3], [-inf] * 3, [inf, 0, 0], [0, inf, 0], [nan, 0, 0], [-inf, 0, 1], [-inf, 0, 1]]
    x = torch.tensor(rows)
    target = torch.tensor([0, 0, 1, 1, 2, 2, 0])
    if spatial:  # samples along a trailing dim: [1, C, 7]
        x, target = x.t()[None].contiguous(), target[None]
    want = torch.ops.aten.cross_entropy_loss(x, target, None, 0)
    assert want.isnan().sum() == 4 and want.flatten()[-1] == inf
    torch.testing.assert_close(structops.cross_entropy_loss(x, target, None, 0), want, equal_nan=True)


def test_cross_entropy_all_ignored_mean_is_nan_and_bad_index_raises():
    x = torch.randn(3, 4)
    ignored = torch.full((3,), -100)
    assert structops.cross_entropy_loss(x, ignored).isnan()
    assert torch.ops.aten.cross_entropy_loss(x, ignored).isnan()
    with pytest.raises(
        IndexError,
        match=r"cross_entropy_loss: target 4 is out of bounds for 4 classes \(at flat "
        r"position 1 of 'target'\)",
    ):
        structops.cross_entropy_loss(x, torch.tensor([0, 4, 1]))


@pytest.mark.parametrize(
    "size, args",
    [
        ((1, 2, 2, 2), ([3, 3], [], [0, 0], [1, 1], True)),  # kernel larger than the input: one row
        ((1, 2, 2, 5), ([3, 2], [3, 2], [1, 1], [1, 1], True)),
        ((2, 3, 4), ([5, 5], [2, 2], [2, 2], [1, 1], True)),
        ((1, 1, 5, 5), ([2, 2], [3, 3], [1, 1], [2, 2], True)),
        ((1, 1, 7, 6), ([3, 2], [2, 4], [1, 1], [1, 2], True)),
    ],
)
def test_pool_ceil_mode_windows_as_torch(size, args):
    """torch's output size: a floor quotient, then the ceil_mode rule that the last window starts
    inside the input or the left padding (a window larger than the input still gives one row)."""
    x = torch.randn(size)
    kernel, stride, padding, dilation, ceil = args
    got, want = structops.max_pool2d_with_indices(x, *args), A.max_pool2d_with_indices(x, *args)
    torch.testing.assert_close(got[0], want[0])
    assert torch.equal(got[1], want[1])
    for include_pad in (True, False):
        torch.testing.assert_close(
            structops.avg_pool2d(x, kernel, stride, padding, ceil, include_pad),
            A.avg_pool2d(x, kernel, stride, padding, ceil, include_pad),
        )
    x3 = torch.randn(1, *size[-2:], size[-1])
    args3 = ([2, *kernel], [], [0, *padding], [1, *dilation], ceil)
    got, want = structops.max_pool3d_with_indices(x3, *args3), A.max_pool3d_with_indices(x3, *args3)
    torch.testing.assert_close(got[0], want[0])
    assert torch.equal(got[1], want[1])


@pytest.mark.parametrize("padding, dilation", [(2, 3), (2, 4), (3, 2)])
def test_pool_padding_beyond_half_the_kernel_is_rejected_as_torch(padding, dilation):
    """torch allows padding up to kernel_size // 2 (and half the dilated window, which is larger)."""
    x = torch.randn(1, 1, 9, 9)
    with pytest.raises(RuntimeError, match="pad should be (smaller than or equal to|at most) half of"):
        A.max_pool2d_with_indices(x, [2, 2], [1, 1], [padding, padding], [dilation, dilation])
    with pytest.raises(RuntimeError, match="padding"):
        structops.max_pool2d_with_indices(x, [2, 2], [1, 1], [padding, padding], [dilation, dilation])
    with pytest.raises(RuntimeError, match="padding"):
        structops.max_pool3d_with_indices(x[None], [2, 2, 2], [1, 1, 1], [padding] * 3, [dilation] * 3)
