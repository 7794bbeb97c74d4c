"""structops.vmap: which batched form a call takes, and the rules' registration (the values of
every op under vmap are checked by the conformance suite's vmap check)."""

from __future__ import annotations

import pytest
import structops
import torch
from structops import _rules
from structops.vmap import plan


def test_a_dim_argument_moves_past_the_batch():
    p = plan("sum", {("self", None)}, 4, torch.ones(3, 5), [0])
    assert (p.kind, dict(p.shifted)) == ("prepend", {"dim": [1]})
    p = plan("sum", {("self", None)}, 4, torch.ones(3, 5), None)
    assert (p.kind, dict(p.shifted)) == ("prepend", {"dim": [1, 2]})  # every dim of the element
    assert dict(plan("softmax", {("self", None)}, 4, torch.ones(3, 5), -1).shifted) == {"dim": -1}


def test_a_lower_rank_broadcast_input_is_padded():
    p = plan("add", {("other", None)}, 4, torch.ones(3, 5), torch.ones(5))
    assert (p.kind, p.pad) == ("prepend", 2)


def test_mm_folds_the_batch_into_n_and_loops_when_both_operands_are_batched():
    p = plan("mm", {("self", None)}, 4, torch.ones(3, 5), torch.ones(5, 2))
    assert (p.kind, p.dim) == ("fold", "n")
    p = plan("mm", {("self", None), ("mat2", None)}, 4, torch.ones(3, 5), torch.ones(5, 2))
    assert p.kind == "loop" and "no parallel dim" in p.why


def test_every_functional_and_inplace_overload_has_a_batching_rule():
    missing = []
    for qualified, rule_name in _rules.OVERLOADS.items():
        packet = qualified.split(".")[0]
        if qualified == _rules.RULES[rule_name]["functional"] or packet.endswith("_"):
            name = f"structops::{qualified.removesuffix('.default')}"
            if not torch._C._dispatch_has_kernel_for_dispatch_key(name, "FuncTorchBatched"):
                missing.append(qualified)
    assert not missing


def test_an_inplace_op_refuses_an_unbatched_self():
    with pytest.raises(RuntimeError, match="structops.add_: self is not batched but other is"):
        torch.func.vmap(structops.add_, in_dims=(None, 0))(torch.ones(3), torch.ones(4, 3))


def test_gather_expands_an_unbatched_index_and_folds_only_equal_sizes():
    """gather's index must have self's rank: with self alone batched, the index gets the batch
    axis too (expanded); with the index alone batched, self's longer dim 0 cannot be repeated in
    step with the index's, so no fold over it."""
    x, index = torch.randn(3, 4), torch.tensor([[1], [3]])
    p = plan("gather", {("self", None)}, 5, x, 1, index)
    assert (p.kind, p.expand, dict(p.shifted)) == ("prepend", True, {"dim": 2})
    batch = torch.randn(5, 3, 4)
    got = torch.func.vmap(structops.gather, in_dims=(0, None, None))(batch, 1, index)
    assert torch.equal(got, torch.stack([torch.gather(b, 1, index) for b in batch]))
    p = plan("gather", {("index", None)}, 5, x, -1, index)
    assert p.kind != "fold" or p.dim != "d0"
