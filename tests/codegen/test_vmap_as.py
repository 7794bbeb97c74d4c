"""meta.vmap_as: the op that batches another when every tensor is batched (mm's bmm). What a
bad one says, what the rule module gets from a good one, and what vmap does with mm's."""

import pytest
import structops
import torch
from structops import _rules, vmap

from codegen.dest.rules_data import all_rule_data
from codegen.manifest import load_manifest
from tests.codegen.manifest_helpers import load_error, write_manifest

MM = "mymm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)"


def manifest(vmap_as: str, second: str = "mat2") -> str:
    """mymm with ``vmap_as``, and mybmm, whose second operand is named ``second``."""
    return (
        f"- func: {MM}\n  structured: True\n  dispatch: {{CPU: mymm_out_cpu}}\n  meta:\n"
        '    shape: {self: "[n, k]", mat2: "[k, m]", out: "[n, m]"}\n'
        "    combine: add\n"
        f"    vmap_as: {vmap_as}\n"
        "- func: mymm(Tensor self, Tensor mat2) -> Tensor\n  structured_delegate: mymm.out\n"
        "  derivatives: not_differentiable\n"
        f"- func: mybmm.out(Tensor self, Tensor {second}, *, Tensor(a!) out) -> Tensor(a!)\n"
        "  structured: True\n  dispatch: {CPU: mybmm_out_cpu}\n  meta:\n"
        f'    shape: {{self: "[b, n, k]", {second}: "[b, k, m]", out: "[b, n, m]"}}\n'
        "    combine: add\n"
        f"- func: mybmm(Tensor self, Tensor {second}) -> Tensor\n  structured_delegate: mybmm.out\n"
        "  derivatives: not_differentiable\n"
    )


def at(problem: str) -> str:
    return f"native_functions.yaml:7: {MM}: {problem}"


CASES = {
    "not_a_name": (
        "[mybmm]",
        at(
            "meta.vmap_as must name a structured op, got ['mybmm'] — write the op that computes a batch of "
            "these calls, e.g. 'vmap_as: bmm' on mm"
        ),
    ),
    "unknown_op": (
        "mybm",
        at(
            "meta.vmap_as: 'mybm' is not a structured op with a meta rule and a functional variant — name "
            "one declared in this manifest (did you mean 'mybmm'?)"
        ),
    ),
    "other_arguments": (
        "mybmm",
        at(
            "meta.vmap_as: 'mybmm' takes (self: tensor, other: tensor), this op (self: tensor, mat2: tensor) "
            "— name an op that takes the same arguments (vmap passes them on, each tensor batched)"
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_vmap_as_message(tmp_path, name):
    vmap_as, expected = CASES[name]
    text = manifest(vmap_as, "other" if name == "other_arguments" else "mat2")
    assert str(load_error(tmp_path, text)) == expected


def test_vmap_as_reaches_the_rule_module(tmp_path):
    mm, bmm = all_rule_data(load_manifest(write_manifest(tmp_path, manifest("mybmm"))))
    assert (mm.vmap_as, bmm.vmap_as) == ("mybmm.default", None)
    assert _rules.RULES["mm"]["vmap_as"] == "bmm.default"


@pytest.mark.parametrize("in_dims", [(0, 0), (2, 1)])
def test_mm_with_both_operands_batched_runs_one_bmm(in_dims, monkeypatch):
    """Per-example weights (model ensembling): one bmm, proven by describe(), equal to a loop."""
    g = torch.Generator().manual_seed(0)
    x, w = torch.randn(4, 3, 5, generator=g), torch.randn(4, 5, 2, generator=g)
    plan = vmap.plan("mm.default", {("self", None), ("mat2", None)}, 4, x[0], w[0])
    assert (plan.kind, plan.sibling) == ("prepend", "bmm.default")
    calls, looked_up = [], vmap._functional_op
    monkeypatch.setattr(vmap, "_PLANS", {})
    monkeypatch.setattr(
        vmap, "_functional_op", lambda rule: calls.append(rule["functional"]) or looked_up(rule)
    )
    args = (x.movedim(0, in_dims[0]), w.movedim(0, in_dims[1]))
    got = torch.func.vmap(structops.mm, in_dims=in_dims)(*args)
    torch.testing.assert_close(got, torch.stack([x[b] @ w[b] for b in range(4)]))
    assert "bmm.default" in calls
