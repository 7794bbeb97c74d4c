"""torch.nn.functional's signatures and results (issue 58): structops.nn.functional takes each
function's parameters (names, order, defaults) and returns what torch returns, its checks raise
torch's exception types, and structops.layer_norm / batch_norm are torch's top-level forms (the
ATen forms with statistics are native_layer_norm / native_batch_norm)."""

from __future__ import annotations

import inspect

import pytest
import structops.nn.functional as SF
import torch
import torch.nn.functional as F

import structops

# torch's functions without a Python signature (C builtins, boolean dispatch): the signature
# of the function they stand for.
_TORCH_SIGNATURE_OF = {"max_pool2d": F._max_pool2d, "max_pool3d": F._max_pool3d}


def _torch_parameters(fn) -> list[tuple[str, object]] | None:
    try:
        return [(p.name, p.default) for p in inspect.signature(fn).parameters.values()]
    except ValueError:  # a C builtin: its ATen schema's names (the parser takes self as input)
        schema = getattr(torch.ops.aten, fn.__name__).default._schema
        return [("input" if a.name == "self" else a.name, None) for a in schema.arguments]


@pytest.mark.parametrize("name", SF.__all__)
def test_functional_takes_torchs_parameters(name):
    theirs = _torch_parameters(_TORCH_SIGNATURE_OF.get(name, getattr(F, name)))
    ours = [(p.name, p.default) for p in inspect.signature(getattr(SF, name)).parameters.values()]
    names_only = all(default is None for _, default in theirs)
    if names_only:
        ours = [(n, None) for n, _ in ours]
    # torch's, in order; a newer torch's trailing parameters (mse_loss's weight) may follow
    assert ours[: len(theirs)] == theirs


def test_top_level_forms_are_torchs():
    for name in ("layer_norm", "batch_norm"):
        schema = getattr(torch.ops.aten, name).default._schema
        assert list(inspect.signature(getattr(structops, name)).parameters) == [
            a.name for a in schema.arguments
        ]
    x, w, b = torch.randn(3, 4, 5), torch.randn(5), torch.randn(5)
    torch.testing.assert_close(structops.layer_norm(x, [5], w, b), torch.layer_norm(x, [5], w, b))
    out, mean, rstd = structops.native_layer_norm(x, [5], w, b, 1e-5)
    for a, e in zip((out, mean, rstd), torch.native_layer_norm(x, [5], w, b, 1e-5)):
        torch.testing.assert_close(a, e)
    rm, rv = torch.zeros(4), torch.ones(4)
    got = structops.batch_norm(x, None, None, rm.clone(), rv.clone(), True, 0.1, 1e-5, True)
    torch.testing.assert_close(
        got, torch.batch_norm(x, None, None, rm.clone(), rv.clone(), True, 0.1, 1e-5, True)
    )


def _d(*shape, scale=1.0):
    return torch.randn(*shape, dtype=torch.float64) * scale


_LOGITS = _d(6, 5, scale=8.0)  # what a classifier gives: wide, not near 0
_LOGITS[2, 1:] = -1e9  # a masked row
_CLASSES = torch.tensor([1, 0, 0, 2, -100, 3])
_PROBS = torch.sigmoid(_d(4, 3, scale=4.0)).clamp(1e-6, 1 - 1e-6)
_TARGETS = torch.rand(4, 3, dtype=torch.float64)
_IMAGES = _d(2, 3, 6, 6, scale=3.0)
_IDS = torch.tensor([[0, 3, 3, 7], [1, 0, 9, 3]])
_Q, _KV = _d(2, 4, 6, 8, scale=3.0), _d(2, 2, 9, 8, scale=3.0)  # 4 query heads over 2 of key and value
_KEEP = torch.rand(6, 9) > 0.4
_KEEP[4] = False  # a query that sees nothing: torch gives it 0

# (torch's call, structops'): F.<name>(*args, **kwargs) both ways, values and float64 gradients
CALLS = {
    "linear": ("linear", (_d(2, 3, 4), _d(5, 4), _d(5)), {}),
    "relu": ("relu", (_d(3, 4),), {}),
    "silu": ("silu", (_d(3, 4, scale=6.0),), {}),
    "hardtanh": ("hardtanh", (_d(3, 4, scale=2.0),), {}),
    "hardtanh_relu6": ("hardtanh", (_d(3, 4, scale=5.0), 0.0, 6.0), {}),
    # at a bound torch's gradient is 0 (its hardtanh_backward is strict), clamp's would be 1
    "hardtanh_at_its_bounds": ("hardtanh", (torch.tensor([-1.0, 1.0, 0.5, -3.0, 2.0]).double(),), {}),
    "gelu_tanh": ("gelu", (_d(3, 4, scale=4.0),), {"approximate": "tanh"}),
    "softmax_masked": ("softmax", (_LOGITS,), {"dim": -1}),
    "log_softmax_masked": ("log_softmax", (_LOGITS,), {"dim": 1}),
    "log_softmax_float32": ("log_softmax", (_LOGITS,), {"dim": 1, "dtype": torch.float32}),
    "layer_norm_offset": ("layer_norm", (_d(2, 3, 8) + 1e4, [8], _d(8), _d(8)), {"eps": 1e-6}),
    "batch_norm_training": ("batch_norm", (_IMAGES, None, None, _d(3), _d(3)), {"training": True}),
    "batch_norm_evaluation": (
        "batch_norm",
        (_IMAGES,),
        {"running_mean": _d(3), "running_var": _d(3).abs(), "weight": _d(3), "bias": _d(3)},
    ),
    "embedding_padding": ("embedding", (_IDS, _d(10, 4)), {"padding_idx": 3}),
    "embedding_frequency": ("embedding", (_IDS, _d(10, 4)), {"scale_grad_by_freq": True, "padding_idx": -1}),
    # bags: 2-D ids (bags of 4), padding left out of sums and of the mean's counts, a last offset
    "embedding_bag_rows_mean_padding": ("embedding_bag", (_IDS, _d(10, 4)), {"padding_idx": 3}),
    "embedding_bag_max": ("embedding_bag", (_IDS, _d(10, 4)), {"mode": "max"}),
    "embedding_bag_weighted_padding": (
        "embedding_bag",
        (_IDS.reshape(-1), _d(10, 4), torch.tensor([0, 3, 3, 5])),
        {"mode": "sum", "per_sample_weights": _d(8), "padding_idx": -7},
    ),
    "embedding_bag_last_offset": (
        "embedding_bag",
        (_IDS.reshape(-1), _d(10, 4), torch.tensor([0, 2, 2, 8])),
        {
            "include_last_offset": True
        },  # (not scale_grad_by_freq: torch's CPU backward miscounts, 1 / 2 for one)
    ),
    "cross_entropy_ignored_smoothed": (
        "cross_entropy",
        (_LOGITS, _CLASSES),
        {"weight": _d(5).abs(), "label_smoothing": 0.1},
    ),
    "cross_entropy_sum": ("cross_entropy", (_LOGITS, _CLASSES), {"reduction": "sum"}),
    "cross_entropy_legacy_flags": ("cross_entropy", (_LOGITS, _CLASSES), {"size_average": False}),
    "cross_entropy_probabilities": ("cross_entropy", (_LOGITS[:4, :3], _TARGETS), {"reduction": "none"}),
    "binary_cross_entropy": ("binary_cross_entropy", (_PROBS, _TARGETS), {"weight": _d(3).abs()}),
    "binary_cross_entropy_none": ("binary_cross_entropy", (_PROBS, _TARGETS), {"reduction": "none"}),
    "mse_loss_sum": ("mse_loss", (_d(4, 3, scale=100.0), _d(4, 3)), {"reduction": "sum"}),
    "max_pool2d_indices": ("max_pool2d", (_IMAGES, 3), {"stride": 2, "padding": 1, "return_indices": True}),
    "max_pool2d_ceil": ("max_pool2d", (_IMAGES, 2), {"ceil_mode": True}),
    "max_pool3d": ("max_pool3d", (_IMAGES[:, None], (1, 2, 2)), {}),
    "avg_pool2d": ("avg_pool2d", (_IMAGES, 3), {"padding": 1, "count_include_pad": False}),
    "rms_norm_offset": ("rms_norm", (_d(2, 3, 8) + 1e3, [8], _d(8)), {}),
    "rms_norm_2d_eps": ("rms_norm", (_d(2, 3, 8, scale=1e-3), [3, 8]), {"eps": 1e-8}),
    "sdpa_causal_gqa": (
        "scaled_dot_product_attention",
        (_Q, _KV, _KV * 2),
        {"is_causal": True, "enable_gqa": True},
    ),
    "sdpa_bool_mask_and_causal": (
        "scaled_dot_product_attention",
        (_Q[:, :2], _KV, _KV * 2),
        {"attn_mask": _KEEP, "is_causal": True, "scale": 0.2},
    ),
    "sdpa_additive_mask": ("scaled_dot_product_attention", (_Q[:, :2], _KV, _KV), {"attn_mask": _d(6, 9)}),
    "sdpa_2d": ("scaled_dot_product_attention", (_Q[0, 0], _KV[0, 0], _KV[1, 1]), {"is_causal": True}),
    "sdpa_batch_broadcast": ("scaled_dot_product_attention", (_Q[:1, :2], _KV, _KV * 2), {}),
}


def _leaves(args):
    """The floating tensors of args, as leaves that require grad (and copies for torch)."""
    return [
        a.detach().clone().requires_grad_() if isinstance(a, torch.Tensor) and a.is_floating_point() else a
        for a in args
    ]


@pytest.mark.parametrize("case", CALLS)
def test_functional_gives_torchs_result_and_gradients(case):
    name, args, kwargs = CALLS[case]
    ours_args, torch_args = _leaves(args), _leaves(args)
    got, want = getattr(SF, name)(*ours_args, **kwargs), getattr(F, name)(*torch_args, **kwargs)
    torch.testing.assert_close(got, want, equal_nan=True)
    outputs = [t for t in (got if isinstance(got, tuple) else (got,)) if t.is_floating_point()]
    expected = [t for t in (want if isinstance(want, tuple) else (want,)) if t.is_floating_point()]
    grads = [torch.randn_like(t) for t in outputs]
    ours_in = [a for a in ours_args if isinstance(a, torch.Tensor) and a.requires_grad]
    torch_in = [a for a in torch_args if isinstance(a, torch.Tensor) and a.requires_grad]
    a = torch.autograd.grad(outputs, ours_in, grads, allow_unused=True)
    b = torch.autograd.grad(expected, torch_in, grads, allow_unused=True)
    # an output computed in float32 (dtype=) has float32's rounding in its gradient too
    tolerance = {"atol": 1e-5, "rtol": 1.3e-6} if torch.float32 in {t.dtype for t in outputs} else {}
    for i, (x, y) in enumerate(zip(a, b)):
        if y is None:
            assert x is None or not x.any(), f"input {i}: torch gives it no gradient"
        else:
            torch.testing.assert_close(x, y, msg=lambda m, i=i: f"gradient of input {i}: {m}", **tolerance)


def test_inplace_activations_write_their_input():
    for name in ("relu", "silu", "hardtanh"):
        x = _d(3, 4)
        expected = getattr(F, name)(x.clone())
        out = getattr(SF, name)(x, inplace=True)
        assert out is x
        torch.testing.assert_close(x, expected)


def test_embedding_max_norm_renormalises_the_weight_in_place_as_torchs():
    w1, w2 = _d(10, 4, scale=3.0), None
    w2 = w1.clone()
    torch.testing.assert_close(SF.embedding(_IDS, w1, max_norm=1.0), F.embedding(_IDS, w2, max_norm=1.0))
    torch.testing.assert_close(w1, w2)


def test_embedding_sparse_gradient_is_sparse_as_torchs():
    w1, w2 = _d(10, 4).requires_grad_(), _d(10, 4)
    w2 = w1.detach().clone().requires_grad_()
    g = _d(2, 4, 4)
    (a,) = torch.autograd.grad(SF.embedding(_IDS, w1, padding_idx=0, sparse=True), w1, g)
    (b,) = torch.autograd.grad(F.embedding(_IDS, w2, padding_idx=0, sparse=True), w2, g)
    assert a.layout == b.layout == torch.sparse_coo
    torch.testing.assert_close(a.to_dense(), b.to_dense())


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_sparse_gradient_is_sparse_as_torchs(mode):
    w1 = _d(10, 4).requires_grad_()
    w2 = w1.detach().clone().requires_grad_()
    g = _d(2, 4)
    (a,) = torch.autograd.grad(SF.embedding_bag(_IDS, w1, mode=mode, padding_idx=3, sparse=True), w1, g)
    (b,) = torch.autograd.grad(F.embedding_bag(_IDS, w2, mode=mode, padding_idx=3, sparse=True), w2, g)
    assert a.layout == b.layout == torch.sparse_coo
    torch.testing.assert_close(a.to_dense(), b.to_dense())


def _raised(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


def _sparse_and_scaled_backward(F):
    w = torch.nn.Parameter(_d(10, 4))
    F.embedding(_IDS, w, scale_grad_by_freq=True, sparse=True).sum().backward()


@pytest.mark.parametrize(
    "call",
    [
        lambda F: F.cross_entropy(_LOGITS, _CLASSES, reduction="average"),
        lambda F: F.binary_cross_entropy(_PROBS, _TARGETS[:, :2]),
        lambda F: F.batch_norm(_d(1, 3), None, None, training=True),
        lambda F: F.embedding(_IDS, _d(10, 4), padding_idx=10),
        _sparse_and_scaled_backward,
        lambda F: F.embedding_bag(_IDS, _d(10, 4), torch.tensor([0, 1])),
        lambda F: F.embedding_bag(_IDS.reshape(-1), _d(10, 4)),
        lambda F: F.embedding_bag(_IDS, _d(10, 4), mode="median"),
        lambda F: F.embedding_bag(_IDS, _d(10, 4), mode="max", sparse=True),
        lambda F: F.embedding_bag(_IDS, _d(10, 4), per_sample_weights=_d(2, 4)),
        lambda F: F.embedding_bag(_IDS, _d(10, 4), padding_idx=-11),
        lambda F: F.hardtanh(_d(3), 1.0, -1.0),
    ],
    ids=[
        "bad_reduction",
        "bce_target_size",
        "one_value_per_channel",
        "padding_out_of_range",
        "sparse_scaled",
        "bags_2d_with_offsets",
        "bags_1d_without_offsets",
        "bags_unknown_mode",
        "bags_max_sparse",
        "bags_weights_not_sum",
        "bags_padding_out_of_range",
        "hardtanh_min_above_max",
    ],
)
def test_bad_calls_raise_torchs_exception(call):
    assert _raised(lambda: call(SF)) == _raised(lambda: call(F))


def test_implicit_softmax_dim_warns_as_torchs():
    x = _d(2, 3)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        got = SF.softmax(x)
    with pytest.warns(UserWarning):
        want = F.softmax(x)
    torch.testing.assert_close(got, want)


@pytest.mark.parametrize(
    "kind", [torch.int8, torch.int16, torch.int32, torch.int64, torch.float16, torch.bfloat16, torch.float32]
)
@pytest.mark.parametrize("bounds", [(-1.5, 2.7), (-2, 3), (-1.0, 1.0)])
def test_hardtanh_takes_torchs_bounds_in_every_dtype(kind, bounds):
    """Negative bounds (which the conformance samples cannot hold: uint8 refuses them): an
    integral tensor's bounds are truncated, its result keeps its dtype."""
    x = _d(4, 5, scale=4.0) if kind.is_floating_point else torch.arange(-10, 10).reshape(4, 5)
    x = x.to(kind)
    got, want = SF.hardtanh(x, *bounds), F.hardtanh(x, *bounds)
    assert got.dtype == want.dtype == kind
    torch.testing.assert_close(got, want, atol=0, rtol=0)


def test_hardtanh_refuses_negative_bounds_on_uint8_as_torch():
    x = torch.arange(4, dtype=torch.uint8)
    with pytest.raises(RuntimeError, match="hardtanh: rule .*uint8.* does not hold self=\\[4\\] min_val=-1"):
        SF.hardtanh(x)
    with pytest.raises(RuntimeError, match="unsigned type with negative limits"):
        F.hardtanh(x)
    torch.testing.assert_close(SF.hardtanh(x, 0, 2), F.hardtanh(x, 0, 2), atol=0, rtol=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16, torch.bfloat16])
def test_dropout_keeps_what_torchs_keeps_from_the_same_seed(dtype):
    """The dropout op on the CPU draws torch's bits and rounds as torch does: bitwise torch's
    F.dropout from the same seed (float16's scale 1 / 0.9 is 1.1113), leaving the generator where
    torch's leaves it; a transposed input draws in its memory order, as torch's empty_like."""
    x = (_d(64, 32) * 100).to(dtype).requires_grad_()
    for p, inplace, t in (
        (0.3, False, x),
        (0.9, False, x.mT),
        (0.1, False, x),
        (1.0, False, x),
        (0.5, True, x),
    ):
        torch.manual_seed(7)
        got = SF.dropout(t.detach().clone() if inplace else t, p, inplace=inplace)
        after = torch.rand(2)
        torch.manual_seed(7)
        want = F.dropout(t.detach().clone() if inplace else t, p, inplace=inplace)
        assert torch.equal(got, want), (p, inplace)
        assert torch.equal(after, torch.rand(2))
    x = x.detach().double().requires_grad_()
    assert SF.dropout(x, 0.5, training=False) is x
    (g,) = torch.autograd.grad(SF.dropout(x, 0.25).sum(), x)  # 0 where dropped, 1 / 0.75 where kept
    assert set(g.unique().tolist()) <= {0.0, 1 / 0.75}
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        SF.dropout(x, 1.5)


@pytest.mark.parametrize(
    "shape",
    [
        # (batch, heads, l, s, e, ev, dtype): query rows across two tasks of 512 and a part block;
        # a depth past the packed 512 (the products split it); float16 rows widened
        (1, 2, 1030, 700, 8, 4, torch.float32),
        (1, 1, 70, 130, 600, 520, torch.float32),
        (2, 1, 520, 520, 16, 8, torch.float16),
    ],
    ids=["two_tasks", "deep", "half"],
)
@pytest.mark.parametrize("is_causal", [False, True])
def test_tiled_attention_matches_float64_beyond_its_tiles(shape, is_causal):
    """The tiled CPU kernel (pinned) where its task, tile and packing sizes end, against torch's
    SDPA in float64."""
    b, h, l, s, e, ev, dtype = shape
    g = torch.Generator().manual_seed(0)
    q, k = (torch.randn(b, h, n, e, generator=g).to(dtype) for n in (l, s))
    v = torch.randn(b, h, s, ev, generator=g).to(dtype)
    with structops.autotune.pin("scaled_dot_product_attention.out", "tiled"):
        got, lse = structops.scaled_dot_product_attention_with_lse(q, k, v, None, is_causal)
    want = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=is_causal)
    tolerance = {"atol": 2e-3, "rtol": 2e-3} if dtype == torch.float16 else {"atol": 2e-5, "rtol": 2e-5}
    torch.testing.assert_close(got.double(), want, **tolerance)
    assert lse.shape == (b, h, l) and bool(torch.isfinite(lse).all())
