"""softmax, log_softmax, logsumexp, layer_norm and batch_norm beyond the conformance suite's small
samples: the column-block softmax loop, long rows across the parallel grain, infinities, and
batch_norm's in-place running statistics (which the generated suite does not compare)."""

import pytest
import torch

import structops


def randn(*shape, dtype=torch.float32, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed)).to(dtype)


@pytest.mark.parametrize(
    "shape, dim", [((64, 3000), 1), ((3000, 64), 0), ((4, 100, 130), 1), ((2, 5, 7, 3), 2)]
)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64])
def test_softmax_paths(shape, dim, dtype):
    x = randn(*shape, dtype=dtype) * 4
    tol = {"atol": 2e-2, "rtol": 2e-2} if dtype == torch.bfloat16 else {"atol": 1e-5, "rtol": 1e-5}
    torch.testing.assert_close(structops.softmax(x, dim), torch.softmax(x, dim), **tol)
    torch.testing.assert_close(structops.log_softmax(x, dim), torch.log_softmax(x, dim), **tol)


@pytest.mark.parametrize(
    "shape, dim", [((64, 3000), 1), ((3000, 64), 0), ((4, 100, 130), 1), ((5, 77), 1), ((2, 5, 7, 3), 2)]
)
def test_float16_normalizations_compute_in_float_as_torch(shape, dim):
    """float16 rows are widened to float by the vector instruction (or bit arithmetic in the column
    loops) and the results rounded 64 at a time: the bits of the same loops on a float input,
    rounded once, and torch's values within float16 rounding. Infinities and a NaN included.
    (layer_norm's affine step, y * w + b, may be fused into one rounding in one loop and not the
    other: within an ulp of float16 there.)"""
    x = randn(*shape, dtype=torch.float16) * 4
    x.view(-1)[:: max(1, x.numel() // 7)] = float("-inf")
    x.view(-1)[x.numel() // 2] = float("inf")
    x.view(-1)[-1] = float("nan")
    w, b = randn(shape[-1], dtype=torch.float16, seed=1), randn(shape[-1], dtype=torch.float16, seed=2)
    finite = randn(*shape, dtype=torch.float16, seed=3) * 3 + 20
    cases = [  # ours, torch's, input, whether the bits are the float loops'
        (lambda t: structops.softmax(t, dim), lambda t: torch.softmax(t, dim), x, True),
        (lambda t: structops.log_softmax(t, dim), lambda t: torch.log_softmax(t, dim), x, True),
        (lambda t: structops.logsumexp(t, [dim]), lambda t: torch.logsumexp(t, [dim]), x, True),
        (
            lambda t: structops.native_layer_norm(t, [shape[-1]], None, None, 1e-5)[0],
            lambda t: torch.layer_norm(t, [shape[-1]], None, None, 1e-5),
            finite,
            True,
        ),
        (
            lambda t: structops.native_layer_norm(t, [shape[-1]], w.to(t.dtype), b.to(t.dtype), 1e-5)[0],
            lambda t: torch.layer_norm(t, [shape[-1]], w.to(t.dtype), b.to(t.dtype), 1e-5),
            finite,
            False,
        ),
    ]
    for ours, theirs, t, same_bits in cases:
        got = ours(t)
        as_float = ours(t.float()).half()
        assert torch.equal(got.isnan(), as_float.isnan())  # NaN bits aside: payloads are not kept
        ulps = (
            got.nan_to_num().view(torch.int16).int() - as_float.nan_to_num().view(torch.int16).int()
        ).abs()
        assert ulps.max() <= (0 if same_bits else 1)
        torch.testing.assert_close(got, theirs(t.float()).half(), atol=2e-3, rtol=2e-3, equal_nan=True)


@pytest.mark.parametrize("width", [3, 100])
def test_softmax_and_logsumexp_infinities(width):
    """-inf (masked) entries, a row of them, +inf and NaN, and exp arguments far below exp's
    underflow (-87.3), in short rows and in rows that the 16-lane vector loops take."""
    inf = float("inf")
    x = torch.linspace(-120, 3, width).repeat(5, 1)
    x[0, ::3] = -inf
    x[1] = -inf
    x[2, width // 2] = inf
    x[3, width - 2] = float("nan")
    for dim in (0, 1):
        for ours, theirs in (
            (structops.softmax(x, dim), torch.softmax(x, dim)),
            (structops.log_softmax(x, dim), torch.log_softmax(x, dim)),
            (structops.logsumexp(x, [dim]), torch.logsumexp(x, [dim])),
        ):
            torch.testing.assert_close(ours, theirs, equal_nan=True)


@pytest.mark.parametrize(
    "shape, normalized", [((512, 1024), [1024]), ((3, 40000), [40000]), ((4, 6, 5, 7), [5, 7])]
)
def test_layer_norm_large(shape, normalized):
    x = randn(*shape) * 3 + 100  # a large mean: a one-pass E[x^2] - mean^2 would lose digits
    w, b = randn(*normalized, seed=1), randn(*normalized, seed=2)
    out, mean, rstd = structops.native_layer_norm(x, normalized, w, b, 1e-5)
    e_out, e_mean, e_rstd = torch.ops.aten.native_layer_norm(x, normalized, w, b, 1e-5)
    torch.testing.assert_close(out, e_out, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(mean, e_mean)
    torch.testing.assert_close(rstd, e_rstd, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("shape", [(16, 3), (8, 4, 50), (2, 5, 9, 11)])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_updates_running_stats_like_torch(shape, training):
    c = shape[1]
    x, w, b = randn(*shape) * 2 + 1, randn(c, seed=1), randn(c, seed=2)
    rm, rv = randn(c, seed=3), randn(c, seed=4).abs() + 0.5
    ours_rm, ours_rv, torch_rm, torch_rv = rm.clone(), rv.clone(), rm.clone(), rv.clone()
    got = structops.native_batch_norm(x, w, b, ours_rm, ours_rv, training, 0.3, 1e-5)
    expected = torch.ops.aten.native_batch_norm(x, w, b, torch_rm, torch_rv, training, 0.3, 1e-5)
    for g, e in zip(got, expected, strict=True):
        torch.testing.assert_close(g, e, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(ours_rm, torch_rm)
    torch.testing.assert_close(ours_rv, torch_rv)
    assert torch.equal(ours_rm, rm) != training  # updated exactly when training


def test_batch_norm_updates_non_contiguous_running_stats():
    x = randn(6, 4, 5)
    stats = torch.zeros(4, 2)
    rm, rv = stats[:, 0], stats[:, 1].fill_(1.0)  # strided views into one buffer
    torch_rm, torch_rv = rm.clone(), rv.clone()
    structops.native_batch_norm(x, None, None, rm, rv, True, 0.1, 1e-5)
    torch.ops.aten.native_batch_norm(x, None, None, torch_rm, torch_rv, True, 0.1, 1e-5)
    torch.testing.assert_close(stats[:, 0], torch_rm)
    torch.testing.assert_close(stats[:, 1], torch_rv)


def test_batch_norm_functional_compiles_with_its_mutation():
    x, rm, rv = randn(8, 3, 4), torch.zeros(3), torch.ones(3)
    compiled = torch.compile(
        lambda x, rm, rv: structops.native_batch_norm(x, None, None, rm, rv, True, 0.1, 1e-5)[0],
        fullgraph=True,
        backend="aot_eager",
    )
    torch_rm, torch_rv = rm.clone(), rv.clone()
    out = compiled(x, rm, rv)
    expected = torch.ops.aten.native_batch_norm(x, None, None, torch_rm, torch_rv, True, 0.1, 1e-5)[0]
    torch.testing.assert_close(out, expected)
    torch.testing.assert_close(rm, torch_rm)  # the functionalized graph writes the update back
    torch.testing.assert_close(rv, torch_rv)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_softmax_dtype_casts_the_input_first_as_torch(dtype):
    """1001.9 is 1000 in bfloat16 (1002 in float16): cast first, the row is (nearly) uniform;
    computed in float32 and cast after, it would be [0.13, 0.87]."""
    x = torch.tensor([[1000.0, 1001.9], [-3.3, 7.1]])
    for ours, theirs in ((structops.softmax, torch.softmax), (structops.log_softmax, torch.log_softmax)):
        got, want = ours(x, 1, dtype), theirs(x, 1, dtype=dtype)
        assert got.dtype == want.dtype
        # Loose enough for the last-unit rounding of the two kernels, far below the 0.37 the wrong
        # order gives.
        torch.testing.assert_close(got, want, atol=1e-3, rtol=1.6e-2)


@pytest.mark.parametrize("correction", [-1, 0, 1, 2.5])
def test_var_and_std_of_nothing_are_nan_whatever_the_correction(correction):
    for x, dim in ((torch.empty(0), None), (torch.empty(3, 0), [1])):
        for ours, theirs in ((structops.var, torch.var), (structops.std, torch.std)):
            torch.testing.assert_close(
                ours(x, dim, correction=correction), theirs(x, dim, correction=correction), equal_nan=True
            )


def test_argmax_and_argmin_reject_bool_as_torch():
    b = torch.tensor([True, False])
    for ours, theirs in ((structops.argmax, torch.argmax), (structops.argmin, torch.argmin)):
        with pytest.raises(RuntimeError, match="bool"):
            theirs(b)
        with pytest.raises(RuntimeError, match="Bool"):
            ours(b)
