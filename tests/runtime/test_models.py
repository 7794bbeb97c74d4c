"""Unmodified models on structops' kernels (issue 58): a Llama-style and a GPT-style transformer
written in plain torch (tests/runtime/models.py) train a few steps under structops.patch() as
they do on torch, eagerly and compiled, and every call structops mirrors is routed to it."""

from __future__ import annotations

import copy

import pytest
import torch
from structops.nn import functional

import structops
from structops import _patch
from tests.runtime.models import MODELS, batch

STEPS = 3


def _train(model: torch.nn.Module, steps: int = STEPS) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """Losses of ``steps`` SGD steps, and the gradients of the last. (Not Adam: it scales a
    gradient that is 0 but for rounding, as the keys' bias's is, up to a full step of either
    sign, on torch's kernels as on any other summation order.)"""
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for step in range(steps):
        ids, targets = batch(seed=step)
        optimizer.zero_grad()
        loss = model(ids, targets)
        loss.backward()
        losses.append(loss.detach())
        optimizer.step()
    return losses, [p.grad for p in model.parameters()]


def _pair(name: str) -> tuple[torch.nn.Module, torch.nn.Module]:
    torch.manual_seed(0)
    model = MODELS[name]()
    return model, copy.deepcopy(model)


@pytest.mark.parametrize("name", MODELS)
def test_a_patched_model_trains_as_on_torch(name):
    reference, ours = _pair(name)
    want_losses, want_grads = _train(reference)
    with structops.patch():
        got_losses, got_grads = _train(ours)
    # float32 kernels summing in another order: a few units in the last place, over three steps
    torch.testing.assert_close(torch.stack(got_losses), torch.stack(want_losses), rtol=1e-5, atol=1e-5)
    for (param, _), got, want in zip(ours.named_parameters(), got_grads, want_grads, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-6, msg=lambda m, p=param: f"{p}: {m}")
    for got, want in zip(ours.parameters(), reference.parameters(), strict=True):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("name", MODELS)
def test_every_mirrored_call_of_a_model_is_routed(name):
    """What stays torch's is what structops does not mirror (views, factories, attention for
    now), never a function it has: the routes miss nothing the model calls."""
    _, model = _pair(name)
    with structops.patch() as routed:
        model(*batch()).backward()
    mirrored = set(_patch.TORCH_NAMES) | set(functional.__all__)
    missed = {n for n in routed.torch if n.removesuffix("_") in mirrored}
    assert not missed, f"called on torch, though structops mirrors them: {missed}"
    for expected in ("F.linear", "F.embedding", "F.cross_entropy"):
        assert routed.structops[expected] > 0, routed


@pytest.mark.parametrize("name", MODELS)
def test_a_patched_model_compiles_and_trains_as_on_torch(name):
    reference, ours = _pair(name)
    want_losses, want_grads = _train(reference, steps=2)
    torch._dynamo.reset()
    with structops.patch() as routed:  # one graph: a break in the mode ran every step eagerly
        got_losses, got_grads = _train(torch.compile(ours, fullgraph=True), steps=2)
    torch.testing.assert_close(torch.stack(got_losses), torch.stack(want_losses), rtol=1e-5, atol=1e-5)
    for got, want in zip(got_grads, want_grads, strict=True):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-6)
    assert routed.structops["F.linear"] > 0  # counted while Dynamo traced the mode


def test_the_patch_leaves_torchs_forms_it_does_not_mirror():
    """Where a torch name's form is not structops' (x.where(c, y) is where(c, x, y); where(c)
    gives indices; torch.embedding takes padding_idx; x == None is False; a meta tensor), the
    call stays torch's and its result is torch's."""
    x, y = torch.randn(4), torch.zeros(4)
    c = x > 0
    weight, ids = torch.randn(5, 2), torch.tensor([0, 4])
    with structops.patch() as routed:
        results = (
            x.where(c, y),
            torch.where(c),
            torch.embedding(weight, ids, 0),
            x == None,
            torch.exp(torch.empty(3, device="meta")).shape,
            torch.where(c, x, y),
        )
    expected = (
        torch.where(c, x, y),
        torch.where(c),
        torch.embedding(weight, ids, 0),
        False,
        torch.Size([3]),
        torch.where(c, x, y),
    )
    for got, want in zip(results, expected, strict=True):
        assert type(got) is type(want)
        if isinstance(want, torch.Tensor | tuple):
            torch.testing.assert_close(got, want)
        else:
            assert got == want
    assert routed.structops == {"torch.where": 1}


def test_dropout_in_training_keeps_what_torchs_keeps_eager_and_compiled():
    """Dropout active (p = 0.2, twice per step): under structops.patch() the dropout op draws
    torch's CPU bits in torch's order, so eager and compiled training (the op an extern kernel
    reading the default generator, never recomputed in backward: it is tagged
    nondeterministic_seeded) take torch's eager losses and gradients from the same seed."""

    def mlp() -> torch.nn.Module:
        torch.manual_seed(0)
        return torch.nn.Sequential(
            torch.nn.Linear(16, 32),
            torch.nn.ReLU(),
            torch.nn.Dropout(0.2),
            torch.nn.Linear(32, 32),
            torch.nn.Dropout(0.2),
            torch.nn.Linear(32, 1),
        )

    def train(model) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        data = torch.Generator().manual_seed(1)
        x, y = torch.randn(64, 16, generator=data), torch.randn(64, 1, generator=data)
        torch.manual_seed(5)
        losses = []
        for _ in range(STEPS):
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            losses.append(loss.detach())
            optimizer.step()
        return losses, [p.grad for p in model.parameters()]

    want_losses, want_grads = train(mlp())
    for compiled in (False, True):
        torch._dynamo.reset()
        with structops.patch() as routed:
            model = mlp()
            got_losses, got_grads = train(torch.compile(model) if compiled else model)
        assert routed.structops["F.dropout"] > 0, routed
        torch.testing.assert_close(torch.stack(got_losses), torch.stack(want_losses), rtol=1e-5, atol=1e-6)
        for got, want in zip(got_grads, want_grads, strict=True):
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-6)
