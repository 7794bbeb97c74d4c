"""The gradient checks must be able to fail: a planted wrong derivative is caught.

Each case replaces the functional the suite calls by the real op under a torch.autograd.Function
whose backward (or forward-mode tangent) is slightly wrong, exactly as a wrong `derivatives:`
formula would make it, and runs the conformance suite's check on a real op.
"""

import pytest
import torch
from structgen.conformance import gradients
from structgen.conformance.checks import CHECKS
from structgen.conformance.spec import functional, load_specs
from torch.autograd.gradcheck import GradcheckError


@pytest.fixture(scope="module")
def specs():
    return {spec.name: spec for spec in load_specs()}


def _planted(op, scale_grad: float = 1.0, skip_input: int | None = None, scale_tangent: float = 1.0):
    """``op`` with its backward scaled (or one input's gradient dropped) and its tangent scaled."""

    class Wrong(torch.autograd.Function):
        @staticmethod
        def forward(*args):
            return op(*args)

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.inputs = inputs

        @staticmethod
        def backward(ctx, grad):
            with torch.enable_grad():
                inputs = [
                    a.detach().requires_grad_()
                    if isinstance(a, torch.Tensor) and a.is_floating_point()
                    else a
                    for a in ctx.inputs
                ]
                out = op(*inputs)
            leaves = [a for a in inputs if isinstance(a, torch.Tensor) and a.requires_grad]
            found = iter(torch.autograd.grad(out, leaves, grad, create_graph=True))
            grads = []
            for i, a in enumerate(inputs):
                g = next(found) if isinstance(a, torch.Tensor) and a.requires_grad else None
                grads.append(None if g is None or i == skip_input else g * scale_grad)
            return tuple(grads)

        @staticmethod
        def jvp(ctx, *tangents):
            primals = tuple(a for a in ctx.inputs)
            return torch.func.jvp(op, primals, tuple(tangents))[1] * scale_tangent

    class Planted:
        _schema = op._schema  # what the checks read of an overload

        def __call__(self, *args, **kwargs):
            return Wrong.apply(*args) if not kwargs else op(*args, **kwargs)

    return Planted()


PLANTED = {
    "mul_Tensor": {"scale_grad": 1.01},  # a gradient 1% off
    "exp": {"scale_grad": 0.5},
    "mm": {"skip_input": 1},  # mat2's gradient forgotten
    "softmax_int": {"scale_grad": 1.001},
}


@pytest.mark.parametrize("op", PLANTED)
def test_the_gradient_check_passes_unplanted(specs, op):
    CHECKS["gradients"].run(specs[op], "cpu", "float64")


@pytest.mark.parametrize("op", PLANTED)
def test_a_planted_derivative_bug_is_caught(specs, op, monkeypatch):
    real = functional(specs[op])
    monkeypatch.setattr(gradients, "functional", lambda spec: _planted(real, **PLANTED[op]))
    with pytest.raises((AssertionError, GradcheckError)):
        CHECKS["gradients"].run(specs[op], "cpu", "float64")


def test_a_planted_tangent_bug_is_caught(specs, monkeypatch):
    spec = specs["mul_Tensor"]
    real = functional(spec)
    CHECKS["forward_ad"].run(spec, "cpu", "float64")
    monkeypatch.setattr(gradients, "functional", lambda spec: _planted(real, scale_tangent=1.01))
    with pytest.raises(AssertionError):
        CHECKS["forward_ad"].run(spec, "cpu", "float64")
