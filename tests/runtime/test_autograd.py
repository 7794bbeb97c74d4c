"""Gradients on the users' paths: a model trained with structops ops, torch.compile of a forward
and backward (Inductor, dynamic shapes), torch.func's grad/vjp/jvp, forward-mode AD, fake
tensors, and torch's rules for inplace and out= calls (docs/autograd.md). Each op's gradients
against finite differences and against torch are the conformance suite's `gradients` check."""

from __future__ import annotations

import pytest
import torch
from structgen.conformance.gradients import _by_reverse as by_reverse
from torch._subclasses.fake_tensor import FakeTensorMode

import structops


def block(x, w1, b1, gamma, beta, w2, target):
    """A transformer-like block: linear, bias_gelu, layer_norm, linear, softmax, cross_entropy."""
    h = structops.linear(x, w1)
    h = structops.bias_gelu(h, b1)
    h = structops.native_layer_norm(h, [h.shape[-1]], gamma, beta)[0]
    logits = structops.linear(h, w2)
    probs = structops.softmax(logits, -1)
    return structops.cross_entropy_loss(logits, target) + structops.sum(probs * probs, [])


def torch_block(x, w1, b1, gamma, beta, w2, target):
    h = torch.nn.functional.linear(x, w1)
    h = torch.nn.functional.gelu(h + b1)
    h = torch.nn.functional.layer_norm(h, [h.shape[-1]], gamma, beta)
    logits = torch.nn.functional.linear(h, w2)
    probs = torch.softmax(logits, -1)
    return torch.nn.functional.cross_entropy(logits, target) + (probs * probs).sum()


def params(batch=6, dim=8, hidden=16, classes=5, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(batch, dim, generator=g, dtype=dtype)
    weights = [
        torch.randn(hidden, dim, generator=g, dtype=dtype) / dim**0.5,
        torch.randn(hidden, generator=g, dtype=dtype) * 0.1,
        1 + 0.1 * torch.randn(hidden, generator=g, dtype=dtype),
        0.1 * torch.randn(hidden, generator=g, dtype=dtype),
        torch.randn(classes, hidden, generator=g, dtype=dtype) / hidden**0.5,
    ]
    target = torch.randint(0, classes, (batch,), generator=g)
    return x, [w.requires_grad_() for w in weights], target


def test_a_block_has_torchs_gradients():
    x, ws, target = params(dtype=torch.float64)
    ours = torch.autograd.grad(block(x, *ws, target), ws)
    theirs = torch.autograd.grad(torch_block(x, *ws, target), ws)
    for a, b in zip(ours, theirs, strict=True):
        torch.testing.assert_close(a, b)


def test_training_lowers_the_loss_as_torch_does():
    """Twenty SGD steps with structops ops follow the same losses as with torch's."""
    x, ws, target = params()
    ref = [w.detach().clone().requires_grad_() for w in ws]
    losses, ref_losses = [], []
    for _ in range(20):
        for weights, fn, record in ((ws, block, losses), (ref, torch_block, ref_losses)):
            loss = fn(x, *weights, target)
            grads = torch.autograd.grad(loss, weights)
            with torch.no_grad():
                for w, g in zip(weights, grads, strict=True):
                    w -= 0.1 * g
            record.append(float(loss.detach()))
    assert losses[-1] < 0.7 * losses[0]
    torch.testing.assert_close(torch.tensor(losses), torch.tensor(ref_losses), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dynamic", [False, True])
def test_compiled_forward_and_backward_equal_eager(dynamic):
    """torch.compile with Inductor traces the generated autograd kernels (AOTAutograd)."""
    torch._dynamo.reset()
    x, ws, target = params()

    def step(x, *ws):
        loss = block(x, *ws, target)
        return loss, torch.autograd.grad(loss, ws)

    expected = step(x, *ws)
    compiled = torch.compile(step, fullgraph=False, dynamic=dynamic)
    for batch in (6, 9):  # a second shape: recompiled, or reused symbolically
        xb, wb, tb = params(batch=batch)
        target = tb
        got, want = compiled(xb, *wb), step(xb, *wb)
        torch.testing.assert_close(got[0], want[0])
        for a, b in zip(got[1], want[1], strict=True):
            torch.testing.assert_close(a, b)
    assert expected[0].isfinite()


def test_compiled_training_step_fullgraph_dynamic():
    torch._dynamo.reset()
    x = torch.randn(4, 8)
    w = torch.randn(8, 8, requires_grad=True)
    b = torch.randn(8, requires_grad=True)

    def loss_fn(x, w, b):
        h = structops.bias_gelu(structops.mm(x, w), b)
        return structops.mean(structops.mul(h, h), [])

    @torch.compile(fullgraph=True, dynamic=True)
    def compiled(x, w, b):
        return loss_fn(x, w, b)

    loss = compiled(x, w, b)
    loss.backward()
    gw, gb = w.grad.clone(), b.grad.clone()
    w.grad = b.grad = None
    loss_fn(x, w, b).backward()
    torch.testing.assert_close(gw, w.grad)
    torch.testing.assert_close(gb, b.grad)


def test_torch_func_grad_vjp_and_jvp():
    x = torch.randn(3, 4, dtype=torch.float64)
    y = torch.randn(4, dtype=torch.float64)

    def f(x, y):
        return structops.sum(structops.exp(structops.mul(x, y)), [])

    def g(x, y):
        return torch.exp(x * y).sum()

    for a, b in zip(torch.func.grad(f, argnums=(0, 1))(x, y), torch.func.grad(g, argnums=(0, 1))(x, y)):
        torch.testing.assert_close(a, b)
    out, vjp = torch.func.vjp(lambda x: structops.tanh(structops.mm(x, x.T)), x)
    (vx,) = vjp(torch.ones_like(out))
    _, tvjp = torch.func.vjp(lambda x: torch.tanh(x @ x.T), x)
    torch.testing.assert_close(vx, tvjp(torch.ones_like(out))[0])
    t = torch.randn_like(x)
    for fn, ref in (
        (lambda x: structops.sigmoid(structops.add(x, y, alpha=2)), lambda x: torch.sigmoid(x + 2 * y)),
        (lambda x: structops.mm(x, x.T), lambda x: x @ x.T),
        (lambda x: structops.sum(structops.mul(x, x), [1]), lambda x: (x * x).sum(1)),
    ):
        got = torch.func.jvp(fn, (x,), (t,))
        want = torch.func.jvp(ref, (x,), (t,))
        torch.testing.assert_close(got, want)


def test_hessian_by_forward_over_reverse():
    x = torch.randn(5, dtype=torch.float64)
    f = lambda x: structops.sum(structops.mul(structops.tanh(x), x), [])
    g = lambda x: (torch.tanh(x) * x).sum()
    torch.testing.assert_close(torch.func.hessian(f)(x), torch.func.hessian(g)(x))


def test_forward_ad_dual_tensors():
    import torch.autograd.forward_ad as fwAD

    x, t = torch.randn(3), torch.randn(3)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, t)
        out = fwAD.unpack_dual(structops.mul(structops.exp(dual), dual))
    torch.testing.assert_close(out.tangent, (torch.exp(x) * x + torch.exp(x)) * t)


def _d(*shape):
    return torch.randn(*shape, dtype=torch.float64)


_W, _I = _d(6, 3), torch.tensor([0, 2, 4, 1, 5, 2, 3])
_X, _Y = _d(4, 5), _d(4, 5)
_TARGET, _PROBS = torch.tensor([1, 0, 4, 2]), torch.softmax(_d(4, 5), -1)
_IGNORING = torch.tensor([1, -100, 4, 2])
_CLASS_WEIGHT, _RUNNING_MEAN, _RUNNING_VAR = _d(5).abs(), _d(3), _d(3).abs() + 0.5
_ZEROS = torch.tensor([[2.0, 0.0, 3.0], [0.0, 0.0, 1.0], [1.5, -2.0, 0.5]], dtype=torch.float64)
# (ours, torch's or None where torch has no forward mode, primals): every primal gets a tangent.
FORWARD_CASES = {
    "layer_norm_affine_2d": (
        lambda x, w, b: structops.native_layer_norm(x, [3, 5], w, b)[0],
        lambda x, w, b: torch.nn.functional.layer_norm(x, [3, 5], w, b),
        (_d(2, 3, 5), _d(3, 5), _d(3, 5)),
    ),
    "batch_norm_training": (
        lambda x, w, b: structops.native_batch_norm(x, w, b, None, None, True, 0.1, 1e-5)[0],
        lambda x, w, b: torch.nn.functional.batch_norm(x, None, None, w, b, True),
        (_d(4, 3, 2), _d(3), _d(3)),
    ),
    "batch_norm_evaluation": (
        lambda x, w, b: structops.native_batch_norm(x, w, b, _RUNNING_MEAN, _RUNNING_VAR, False, 0.1, 1e-5)[
            0
        ],
        lambda x, w, b: torch.nn.functional.batch_norm(x, _RUNNING_MEAN, _RUNNING_VAR, w, b, False),
        (_d(4, 3, 2), _d(3), _d(3)),
    ),
    "cross_entropy_indices_weighted_ignored_smoothed": (
        lambda x: structops.cross_entropy_loss(x, _IGNORING, _CLASS_WEIGHT, 1, -100, 0.2),
        lambda x: torch.nn.functional.cross_entropy(x, _IGNORING, _CLASS_WEIGHT, label_smoothing=0.2),
        (_X,),
    ),
    "cross_entropy_probabilities_none": (
        lambda x, q: structops.cross_entropy_loss(x, q, None, 0),
        lambda x, q: torch.nn.functional.cross_entropy(x, q, reduction="none"),
        (_X, _PROBS),
    ),
    "cross_entropy_indices_sum": (
        lambda x: structops.cross_entropy_loss(x, _TARGET, None, 2),
        lambda x: torch.nn.functional.cross_entropy(x, _TARGET, reduction="sum"),
        (_X,),
    ),
    "binary_cross_entropy_weighted_mean": (
        lambda x, y: structops.binary_cross_entropy(x, y, _X.abs(), 1),
        lambda x, y: torch.nn.functional.binary_cross_entropy(x, y, _X.abs()),
        (torch.sigmoid(_X), torch.sigmoid(_Y)),
    ),
    "binary_cross_entropy_none": (
        lambda x, y: structops.binary_cross_entropy(x, y, None, 0),
        lambda x, y: torch.nn.functional.binary_cross_entropy(x, y, reduction="none"),
        (torch.sigmoid(_X), torch.sigmoid(_Y)),
    ),
    "embedding_bag_sum_weighted": (
        lambda w, p: structops.embedding_bag(w, _I, torch.tensor([0, 3, 3]), False, 0, False, p),
        None,
        (_W, _d(7)),
    ),
    "embedding_bag_mean_last_offset": (
        lambda w: structops.embedding_bag(w, _I, torch.tensor([0, 2, 7]), False, 1, False, None, True),
        None,
        (_W,),
    ),
    "embedding_bag_max_empty_bag": (
        lambda w: structops.embedding_bag(w, _I, torch.tensor([0, 4, 4]), False, 2),
        None,
        (_W,),
    ),
    **{
        f"cdist_p{p}": (lambda x1, x2, p=p: structops.cdist(x1, x2, p), None, (_d(2, 4, 3), _d(2, 5, 3)))
        for p in (0.0, 1.0, 2.0, 3.0, float("inf"))
    },
    **{
        f"norm_p{p}": (
            lambda x, p=p: structops.norm(x, p, [1]),
            lambda x, p=p: torch.linalg.vector_norm(x, p, [1]),
            (_X,),
        )
        for p in (1.0, 2.0, 3.0, float("inf"))
    },
    "prod_with_zeros": (lambda x: structops.prod(x, [1]), lambda x: torch.prod(x, 1), (_ZEROS,)),
}


@pytest.mark.parametrize("name", FORWARD_CASES)
def test_forward_mode_on_the_cases_models_meet(name):
    """Tangents of every primal together, where the suite's samples do not reach: affine
    statistics, evaluation mode, ignored and smoothed targets, empty bags, zeros in a product;
    against torch's forward mode, or against reverse mode where torch has none."""
    ours, theirs, primals = FORWARD_CASES[name]
    gen = torch.Generator().manual_seed(1)
    tangents = tuple(torch.randn(p.shape, generator=gen, dtype=p.dtype) for p in primals)
    got = torch.func.jvp(ours, primals, tangents)[1]
    if theirs is None:  # J t from reverse mode's Jacobian (the suite's, checked against torch's)
        want = by_reverse(lambda *p: (ours(*p),), list(primals), tangents)[0]
    else:
        want = torch.func.jvp(theirs, primals, tangents)[1]
    torch.testing.assert_close(got, want)


def test_backward_on_fake_tensors():
    with FakeTensorMode():
        x = torch.randn(4, 8, requires_grad=True)
        w = torch.randn(8, 3, requires_grad=True)
        loss = structops.sum(structops.gelu(structops.mm(x, w)), [])
        gx, gw = torch.autograd.grad(loss, (x, w))
    assert (gx.shape, gw.shape) == ((4, 8), (8, 3))


def test_inplace_follows_torchs_rules():
    leaf = torch.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        structops.mul_(leaf, torch.randn(3))
    a = leaf * 1
    b = structops.exp(a)  # saves its result
    structops.add_(b, torch.ones(3))
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        b.sum().backward()
    c = leaf * 1
    version = c._version
    structops.mul_(c, torch.full((3,), 2.0))
    assert c._version > version
    c.sum().backward()
    torch.testing.assert_close(leaf.grad, torch.full((3,), 2.0))


def test_out_refuses_inputs_that_require_grad():
    x = torch.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"add\(\): functions with out=\.\.\. arguments don't support"):
        structops.add(x, x, out=torch.empty(3))
    with torch.no_grad():
        structops.add(x, x, out=torch.empty(3))  # no grad mode: no autograd, no error


def test_opcheck_autograd_registration_with_inputs_that_require_grad():
    x = torch.randn(3, 4, requires_grad=True)
    y = torch.randn(4, requires_grad=True)
    for op, args in (
        (torch.ops.structops.mul.Tensor, (x, y)),
        (torch.ops.structops.mm.default, (x, torch.randn(4, 2, requires_grad=True))),
        (torch.ops.structops.layer_norm.default, (x, [4], y, y)),
    ):
        report = torch.library.opcheck(op, args, test_utils=("test_autograd_registration",))
        assert set(report.values()) == {"SUCCESS"}, report


def test_a_not_implemented_input_raises_when_its_gradient_is_asked():
    p = torch.rand(3, 4)
    w = torch.rand(3, 4, requires_grad=True)
    loss = structops.binary_cross_entropy(p.requires_grad_(), torch.rand(3, 4), w)
    with pytest.raises(NotImplementedError, match="the derivative for 'weight'"):
        loss.backward()


class _Calls(torch.utils._python_dispatch.TorchDispatchMode):
    """The ops called below autograd, by name (backward's included: the CPU engine runs it on
    the calling thread, under the mode)."""

    def __init__(self):
        super().__init__()
        self.names: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.append(func.name())
        return func(*args, **(kwargs or {}))


def test_backward_runs_the_fused_kernel_and_create_graph_the_differentiable_formula():
    """bias_gelu's gradients: one generated op, called once for both inputs (they share it), with
    no ATen op of the formula; with create_graph=True the ATen formula instead, which
    differentiates again to torch's second derivative."""
    x = torch.randn(4, 8, dtype=torch.float64, requires_grad=True)
    b = torch.randn(8, dtype=torch.float64, requires_grad=True)
    g = torch.randn(4, 8, dtype=torch.float64)
    y = structops.bias_gelu(x, b)
    with _Calls() as calls:
        gx, gb = torch.autograd.grad(y, (x, b), g)
    assert calls.names.count("structops::_bias_gelu_backward_self") == 1, calls.names
    assert not any(n in calls.names for n in ("aten::erf", "aten::exp", "aten::mul.Tensor")), calls.names
    xt, bt = x.detach().requires_grad_(), b.detach().requires_grad_()
    expected = torch.autograd.grad(torch.nn.functional.gelu(xt + bt), (xt, bt), g, create_graph=True)
    torch.testing.assert_close((gx, gb), tuple(e.detach() for e in expected))

    with _Calls() as calls:
        gx2, gb2 = torch.autograd.grad(structops.bias_gelu(x, b), (x, b), g, create_graph=True)
    assert "structops::_bias_gelu_backward_self" not in calls.names and "aten::erf" in calls.names
    second = torch.autograd.grad(gx2.sum() + gb2.sum(), (x, b))
    torch.testing.assert_close(second, torch.autograd.grad(expected[0].sum() + expected[1].sum(), (xt, bt)))


def test_a_gradient_scaled_by_a_number_shares_the_kernel():
    """add_relu(self, other, alpha): other's gradient is alpha times self's, one kernel call."""
    x, y = torch.randn(5, 3, requires_grad=True), torch.randn(3, requires_grad=True)
    with _Calls() as calls:
        gx, gy = torch.autograd.grad(structops.add_relu(x, y, alpha=2.5), (x, y), torch.ones(5, 3))
    assert calls.names.count("structops::_add_relu_backward_self") == 1, calls.names
    mask = (x + 2.5 * y > 0).to(x.dtype)
    torch.testing.assert_close((gx, gy), (mask, 2.5 * mask.sum(0)))


@pytest.mark.parametrize("mode", [0, 1, 2])
def test_embedding_bag_indices_after_the_last_offset_take_no_gradient(mode):
    """include_last_offset: the last offset closes the last bag in the forward kernels, so the
    indices after it are in no bag; backward and forward mode agree (gradcheck against finite
    differences of the forward)."""
    weight = torch.randn(6, 3, dtype=torch.float64, requires_grad=True)
    indices, offsets = torch.tensor([1, 2, 4, 3, 0, 5]), torch.tensor([0, 2, 3])

    def bags(w):
        return structops.embedding_bag(w, indices, offsets, False, mode, False, None, True)

    assert torch.autograd.gradcheck(bags, (weight,))
    assert torch.autograd.gradcheck(
        bags, (weight,), check_forward_ad=True, check_backward_ad=False, check_undefined_grad=False
    )
    (grad,) = torch.autograd.grad(bags(weight).sum(), weight)
    assert not grad[[3, 0, 5]].any()  # the indices at positions 3..5
