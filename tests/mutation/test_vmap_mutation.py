"""The vmap check must be able to fail: a batching plan that skips its proof is caught.

Each case patches structops.vmap or structgen.vmap_plan for one run of the conformance suite's
vmap check on a real op, so the planted bug reaches torch.func.vmap exactly as a wrong plan would.
"""

import dataclasses

import pytest
from structgen import vmap, vmap_plan
from structgen.conformance.checks import CHECKS
from structgen.conformance.spec import load_specs


@pytest.fixture(scope="module")
def specs():
    return {spec.name: spec for spec in load_specs()}


def _prepend_unproven(monkeypatch):
    """Every call takes the batch as a leading axis, dim arguments unchanged: softmax(x, 0) then
    normalises over the batch, cumsum(x, 0) sums along it."""
    monkeypatch.setattr(vmap, "_PLANS", {})  # plans the unplanted run cached
    monkeypatch.setattr(vmap_plan, "_prepends", lambda *args: True)
    monkeypatch.setattr(vmap_plan, "_shift", lambda value, rank, empty: value)


def _fold_any_dim(monkeypatch):
    """The batch joins the first index dim however the tensors read it (mm with both operands
    batched: n, which mat2 does not have)."""
    monkeypatch.setattr(vmap, "_PLANS", {})
    monkeypatch.setattr(vmap_plan, "_prepends", lambda *args: False)
    monkeypatch.setattr(vmap_plan, "_foldable", lambda single, j, batched: True)


def _no_sibling(monkeypatch):
    """mm's meta.vmap_as (bmm) ignored: with both operands batched the call loops, which the check
    refuses for an op whose tests.vmap_loops does not say so."""
    monkeypatch.setattr(vmap, "_PLANS", {})
    monkeypatch.setattr(vmap_plan, "_sibling", lambda *args: None)


def _sibling_unproven(monkeypatch):
    """A sibling taken without describe()'s proof: index_select's batch handed to index_select
    itself, every tensor with the batch prepended and the dim argument not moved."""
    monkeypatch.setattr(vmap, "_PLANS", {})
    monkeypatch.setattr(vmap_plan, "_prepends", lambda *args: False)
    monkeypatch.setattr(
        vmap_plan,
        "_sibling",
        lambda rule, *args: vmap_plan.Plan(
            "prepend", expand=True, sibling=rule["functional"], passed=tuple((n, n) for n, _ in rule["args"])
        ),
    )


def _positions_not_moved(monkeypatch):
    """The batch merged into the indexed axis but the positions left as they are: every element
    reads element 0's rows (index_select, embedding and take with every tensor batched)."""
    monkeypatch.setattr(vmap, "_PLANS", {})
    monkeypatch.setattr(vmap, "_offset_positions", lambda positions, size, count: positions.long())


def _affine_aligned_in_front(monkeypatch):
    """layer_norm's per-example weight and bias padded after their axes instead of before: they
    meet the output's leading axes, not the normalised ones."""
    monkeypatch.setattr(vmap, "_PLANS", {})
    planned = vmap_plan._affine

    def misaligned(*args):
        p = planned(*args)
        if p is None:
            return None
        moved = tuple(
            (n, tuple(d for d in s if d != 1) + tuple(d for d in s if d == 1)) for n, s in p.aligned
        )
        return dataclasses.replace(p, aligned=moved)

    monkeypatch.setattr(vmap_plan, "_affine", misaligned)


def _unit_not_squeezed(monkeypatch):
    """matmul's batched vector read as a matrix, and the output's size-1 axis left in place."""
    monkeypatch.setattr(vmap, "_PLANS", {})
    found = vmap_plan._unit_axes
    monkeypatch.setattr(vmap_plan, "_unit_axes", lambda *args: found(*args) and (None,))


PLANTED = [
    ("softmax_int", _prepend_unproven),
    ("log_softmax_int", _prepend_unproven),
    ("cumsum", _prepend_unproven),
    ("index_select", _prepend_unproven),
    ("mm", _fold_any_dim),
    ("mm", _no_sibling),
    ("index_select", _sibling_unproven),
    ("index_select", _positions_not_moved),
    ("embedding", _positions_not_moved),
    ("take", _positions_not_moved),
    ("layer_norm", _affine_aligned_in_front),
    ("matmul", _unit_not_squeezed),
]
IDS = [f"{op}-{plant.__name__.strip('_')}" for op, plant in PLANTED]


@pytest.mark.parametrize("op", sorted({op for op, _ in PLANTED}))
def test_the_vmap_check_passes_unplanted(specs, op):
    CHECKS["vmap"].run(specs[op], "cpu", "float32")


@pytest.mark.parametrize("op, plant", PLANTED, ids=IDS)
def test_a_planted_batching_bug_is_caught(specs, op, plant, monkeypatch):
    plant(monkeypatch)
    with pytest.raises((AssertionError, RuntimeError, IndexError, pytest.fail.Exception)):
        CHECKS["vmap"].run(specs[op], "cpu", "float32")
