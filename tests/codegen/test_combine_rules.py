"""meta.combine chosen by an int argument (a loss's reduction) and the reduce_all() builtin: what
a bad one says, and what the generated rule module and describe() make of a good one."""

import pytest
import torch
from structgen import rules
from structgen.codegen.dest.rules_data import all_rule_data
from structgen.codegen.manifest import load_manifest

import structops
from structops import _rules
from tests.codegen.manifest_helpers import load_error, write_manifest

LOSS = (
    "myloss.out(Tensor self, Tensor target, int reduction=1, float beta=1.0, *, Tensor(a!) out) -> Tensor(a!)"
)


def entry(combine: str) -> str:
    return (
        f"- func: {LOSS}\n  structured: True\n  dispatch: {{CPU: kernel_out_cpu}}\n  meta:\n"
        '    shape: {out: "broadcast(self, target) if reduction == 0 else '
        'reduce_all(broadcast(self, target))"}\n'
        f"    combine: {combine}\n"
    )


def at(problem: str) -> str:
    return f"native_functions.yaml:6: {LOSS}: {problem}"


CASES = {
    "not_an_int_argument": (
        "{beta: {1: mean}}",
        at(
            "meta.combine: {'beta': {1: 'mean'}} must map one int argument to a combine per value — write "
            "e.g. {reduction: {1: mean, 2: add}}; int arguments: reduction"
        ),
    ),
    "two_arguments": (
        "{reduction: {1: mean}, beta: {1: add}}",
        at(
            "meta.combine: {'reduction': {1: 'mean'}, 'beta': {1: 'add'}} must map one int argument to a "
            "combine per value — write e.g. {reduction: {1: mean, 2: add}}; int arguments: reduction"
        ),
    ),
    "cases_not_keyed_by_values": (
        "{reduction: {mean: 1}}",
        at(
            "meta.combine.reduction: {'mean': 1} must map values of 'reduction' to combines — write e.g. "
            "{reduction: {1: mean, 2: add}}"
        ),
    ),
    "unknown_combine_in_a_case": (
        "{reduction: {1: average}}",
        at(
            "meta.combine: unknown combine 'average' — use one of: add, mul, max, min, and, or, logaddexp, "
            "mean, argmax, argmin"
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_combine_message(tmp_path, name):
    combine, expected = CASES[name]
    assert str(load_error(tmp_path, entry(combine))) == expected


def test_a_combine_per_value_reaches_the_rule_module(tmp_path):
    manifest = load_manifest(write_manifest(tmp_path, entry("{reduction: {1: mean, 2: add}}")))
    (data,) = all_rule_data(manifest)
    assert data.combine == {"by": "reduction", "cases": {1: "mean", 2: "add"}}
    assert _rules.RULES["mse_loss"]["combine"] == {"by": "reduction", "cases": {1: "mean", 2: "add"}}


@pytest.mark.parametrize(("reduction", "combine"), [(0, None), (1, "mean"), (2, "add")])
def test_a_loss_reduces_the_broadcast_dims_with_the_combine_its_reduction_picks(reduction, combine):
    """reduce_all(broadcast(self, target)) links target's axis to self's last: one reduced dim."""
    self, target = torch.empty(2, 3, 4, device="meta"), torch.empty(4, device="meta")
    d = rules.describe("mse_loss", self, target, reduction)
    assert d.combine == combine
    kinds = ["parallel"] * 3 if reduction == 0 else ["reduction"] * 3
    assert [(x.size, x.kind) for x in d.index_space] == list(zip((2, 3, 4), kinds, strict=True))
    ipf = next(i for i in d.ipfs if i.tensor == "target")
    assert ipf.matrix == ((0, 0, 1),)


def test_reduce_all_still_checks_its_argument():
    with pytest.raises(RuntimeError, match="mse_loss"):
        structops.mse_loss(torch.ones(2, 3), torch.ones(4), 1)
