"""structops.vmap: which batched form a call takes, and the rules' registration (the values of
every op under vmap are checked by the conformance suite's vmap check)."""

from __future__ import annotations

import pytest
import torch
from structgen.vmap import plan

import structops
from structops import _rules


def test_a_dim_argument_moves_past_the_batch():
    p = plan("sum", {("self", None)}, 4, torch.ones(3, 5), [0])
    assert (p.kind, dict(p.shifted)) == ("prepend", {"dim": [1]})
    p = plan("sum", {("self", None)}, 4, torch.ones(3, 5), None)
    assert (p.kind, dict(p.shifted)) == ("prepend", {"dim": [1, 2]})  # every dim of the element
    assert dict(plan("softmax", {("self", None)}, 4, torch.ones(3, 5), -1).shifted) == {"dim": -1}


def test_a_lower_rank_broadcast_input_is_padded():
    p = plan("add", {("other", None)}, 4, torch.ones(3, 5), torch.ones(5))
    assert (p.kind, p.pad) == ("prepend", 2)


def test_mm_folds_the_batch_into_n_and_runs_bmm_when_both_operands_are_batched():
    p = plan("mm", {("self", None)}, 4, torch.ones(3, 5), torch.ones(5, 2))
    assert (p.kind, p.dim) == ("fold", "n")
    p = plan("mm", {("self", None), ("mat2", None)}, 4, torch.ones(3, 5), torch.ones(5, 2))
    assert (p.kind, p.sibling, p.expand) == ("prepend", "structops::bmm.default", False)


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


@pytest.mark.parametrize("keepdim", [False, True])
def test_argmax_of_every_dim_flattens_each_element(keepdim):
    """dim=None: positions over the flattened element, so the batch is viewed as [B, numel]."""
    p = plan("argmax", {("self", None)}, 4, torch.ones(3, 5), None, keepdim)
    assert (p.kind, p.flat, p.out_shapes) == ("flatten", ("self", "dim"), ((1, 1) if keepdim else (),))
    x = torch.randn(4, 3, 5)
    got = torch.func.vmap(lambda t: structops.argmax(t, keepdim=keepdim))(x)
    assert torch.equal(got, torch.stack([torch.argmax(t, keepdim=keepdim) for t in x]))


@pytest.mark.parametrize(("reduction", "combine"), [(1, "mean"), (2, "add")])
def test_a_reduced_loss_runs_unreduced_and_reduces_every_dim_but_the_batch(reduction, combine):
    self, target = torch.rand(3, 4), torch.rand(4)
    p = plan("mse_loss", {("self", None)}, 5, self, target, reduction)
    assert (p.kind, p.unreduced, p.inner.kind) == ("unreduced", ("reduction", 0, combine), "prepend")
    batch = torch.rand(5, 3, 4)
    got = torch.func.vmap(structops.mse_loss, in_dims=(0, None, None))(batch, target, reduction)
    want = torch.stack([torch.ops.aten.mse_loss(b, target, reduction) for b in batch])
    torch.testing.assert_close(got, want)


def test_batch_norm_folds_the_batch_into_its_channels_and_writes_batched_running_stats():
    """Batched running statistics (here batched at their last dim, so the fold copies them) are
    written back as a loop of calls writes them; unbatched ones loop: each element writes them."""
    x, mean, var = torch.randn(4, 5, 3, 2), torch.randn(3, 4), torch.rand(3, 4)
    batched = {("input", None), ("running_mean", None), ("running_var", None)}
    assert (
        plan("batch_norm", batched, 4, x[0], None, None, mean[:, 0], var[:, 0], True, 0.1, 1e-5).kind
        == "fold"
    )
    want_mean, want_var = mean.clone(), var.clone()
    want = [
        torch.ops.aten.native_batch_norm(x[b], None, None, want_mean[:, b], want_var[:, b], True, 0.1, 1e-5)
        for b in range(4)
    ]
    got = torch.func.vmap(structops.native_batch_norm, in_dims=(0, None, None, 1, 1, None, None, None))(
        x, None, None, mean, var, True, 0.1, 1e-5
    )
    for g, w in zip(got, zip(*want, strict=True), strict=True):
        torch.testing.assert_close(g, torch.stack(w))
    torch.testing.assert_close((mean, var), (want_mean, want_var))
    p = plan("batch_norm", {("input", None)}, 4, x[0], None, None, mean[:, 0], var[:, 0], True, 0.1, 1e-5)
    assert p.kind == "loop" and "writes an unbatched input" in p.why


@pytest.mark.parametrize(
    ("op", "batched_dims", "inner"),
    [
        ("index_select", (0, None, 0), "fold"),  # the index is 1-D: its batch folds into it
        ("index_select", (1, None, 0), "fold"),  # self batched at its dim 1
        ("embedding", (0, 0), "prepend"),
        ("take", (0, 0), "prepend"),
        ("take", (2, None), "prepend"),
    ],
)
def test_a_tensor_read_at_positions_takes_the_batch_in_its_indexed_axis(op, batched_dims, inner):
    """meta.positions says which axes an index addresses: the batch merges into them (batch-major)
    and element b's positions move by b times their range, so one call serves every element."""
    g = torch.Generator().manual_seed(0)
    size = 4
    if op == "index_select":
        element = (torch.randn(5, 3, generator=g), 1, torch.tensor([2, 0, 2, 1]))
        batch = [torch.randn(size, 5, 3, generator=g), 1, torch.randint(0, 3, (size, 4), generator=g)]
        if batched_dims[0] == 1:
            batch[0] = torch.randn(5, size, 3, generator=g)
    elif op == "embedding":
        element = (torch.randn(7, 3, generator=g), torch.tensor([[6, 0], [3, 3]]))
        batch = [torch.randn(size, 7, 3, generator=g), torch.randint(0, 7, (size, 2, 2), generator=g)]
    else:
        element = (torch.randn(3, 4, generator=g), torch.tensor([[0, 11], [-1, -12]]))
        batch = [torch.randn(size, 3, 4, generator=g), torch.randint(-12, 12, (size, 2, 2), generator=g)]
        if batched_dims[0] == 2:
            batch[0] = torch.randn(3, 4, size, generator=g)
    names = [a.name for a in getattr(torch.ops.structops, op).default._schema.arguments]
    batched = {(n, None) for n, d in zip(names, batched_dims, strict=False) if d is not None}
    p = plan(op, batched, size, *element)
    assert (p.kind, p.inner.kind) == ("offset", inner), p
    fn = getattr(structops, op)
    got = torch.func.vmap(fn, in_dims=batched_dims)(*batch)
    loop = [
        fn(*[a.select(d, b) if d is not None else a for a, d in zip(batch, batched_dims, strict=True)])
        for b in range(size)
    ]
    assert torch.equal(got, torch.stack(loop))


@pytest.mark.parametrize(
    ("op", "bad"), [("embedding", 5), ("embedding", -1), ("take", 10), ("take", -11), ("take", 21)]
)
def test_a_position_out_of_range_still_raises_rather_than_read_another_element(op, bad):
    """Element 0's row 5 of 5 would be element 1's row 0 once the batch merged into the axis: it
    stays out of the merged range, and the op refuses it as a loop would (take counts from the
    end: -10 <= p < 10 is in range for 10 elements)."""
    weights, rows = torch.randn(3, 5, 2), torch.tensor([[0, 1], [bad, 2], [4, 4]])
    with pytest.raises(IndexError):
        getattr(structops, op)(weights[1], rows[1])
    with pytest.raises(IndexError):
        torch.func.vmap(getattr(structops, op))(weights, rows)


def test_a_batched_0d_index_is_read_as_one_of_shape_1():
    """index_select keeps the dim for a 0-d index, as for one of shape [1]: a batch of 0-d indices
    is a [B, 1] index folded into the dim, one call instead of B."""
    x, index = torch.randn(5, 3), torch.tensor([2, 0, 1, 2])
    p = plan("index_select", {("index", None)}, 4, x, 1, index[0])
    assert (p.kind, p.offsets, p.inner.kind) == ("offset", (("index", None, 0, 0, True),), "fold")
    got = torch.func.vmap(structops.index_select, in_dims=(None, None, 0))(x, 1, index)
    assert torch.equal(got, torch.stack([structops.index_select(x, 1, i) for i in index]))


@pytest.mark.parametrize("self_shape", [(3, 1), (1, 5), (5,), ()])
def test_a_batched_input_that_broadcasts_is_expanded_to_the_output_to_fold(self_shape):
    """baddbmm with every tensor batched: no 4-d sibling, and self [3, 1] has no b to fold the
    batch into; expanded to the output's [b, n, m] (describe() shows it read where the output is
    written), the batch folds into b: one call."""
    g = torch.Generator().manual_seed(2)
    s, b1, b2 = (torch.randn(4, *shape, generator=g) for shape in (self_shape, (2, 3, 4), (2, 4, 5)))
    p = plan("baddbmm", {("self", None), ("batch1", None), ("batch2", None)}, 4, s[0], b1[0], b2[0])
    assert (p.kind, p.expanded, p.inner.kind, p.inner.dim) == ("expanded", ("self", (2, 3, 5)), "fold", "b")
    got = torch.func.vmap(structops.baddbmm)(s, b1, b2, beta=0.5)
    want = torch.stack([torch.baddbmm(s[i], b1[i], b2[i], beta=0.5) for i in range(4)])
    torch.testing.assert_close(got, want)


@pytest.mark.parametrize("input_batched", [False, True])
@pytest.mark.parametrize("given", [("weight", "bias"), ("weight",), ("bias",)])
def test_per_example_layer_norm_weights_scale_and_shift_one_batched_call(input_batched, given):
    """Model ensembling: layer_norm's meta.affine (out * weight + bias) runs the op without its
    weights (once for a shared input), then one addcmul with them aligned to the output."""
    g = torch.Generator().manual_seed(4)
    x = torch.randn(*((3,) if input_batched else ()), 2, 5, 8, generator=g)
    w, b = (torch.randn(3, 5, 8, generator=g) if n in given else None for n in ("weight", "bias"))
    element = (x[0] if input_batched else x, [5, 8], None if w is None else w[0], None if b is None else b[0])
    batched = {(n, None) for n in given} | ({("input", None)} if input_batched else set())
    p = plan("layer_norm", batched, 3, *element)
    assert (p.kind, p.inner and p.inner.kind) == ("affine", "prepend" if input_batched else None)
    in_dims = (0 if input_batched else None, None, None if w is None else 0, None if b is None else 0)
    got = torch.func.vmap(structops.native_layer_norm, in_dims=in_dims)(x, [5, 8], w, b)
    loop = [
        torch.ops.aten.native_layer_norm(
            x[i] if input_batched else x,
            [5, 8],
            None if w is None else w[i],
            None if b is None else b[i],
            1e-5,
        )
        for i in range(3)
    ]
    for got_part, want in zip(got, zip(*loop, strict=True), strict=True):
        torch.testing.assert_close(got_part, torch.stack(want))


@pytest.mark.parametrize(
    ("shapes", "in_dims", "inner"),
    [
        (((3, 4), (4,)), (None, 0), "fold"),  # matrix times a batch of vectors: one [3, 4] @ [4, B]
        (((4,), (4,)), (0, 0), "unit"),  # a batch of dot products: both vectors get an axis
        (((4,), (2, 4, 5)), (0, None), "fold"),  # a vector on the left: [1, k], the batch as its rows
    ],
)
def test_a_batched_vector_is_read_as_a_matrix_and_the_unit_axis_squeezed(shapes, in_dims, inner):
    """matmul of a batch of vectors: [B, 4] is a matrix to matmul, not a batch of [4], so each
    vector gets a size-1 axis (describe() shows it adds only a size-1 dim) and one matmul runs;
    against an unbatched matrix the batch folds into that axis (one GEMM, not B products)."""
    g = torch.Generator().manual_seed(5)
    args = [
        torch.randn(*((3,) if d == 0 else ()), *s, generator=g) for s, d in zip(shapes, in_dims, strict=True)
    ]
    element = [a[0] if d == 0 else a for a, d in zip(args, in_dims, strict=True)]
    p = plan(
        "matmul", {(n, None) for n, d in zip(("self", "other"), in_dims, strict=True) if d == 0}, 3, *element
    )
    assert (p.kind, p.inner.kind) == ("unit", inner)
    got = torch.func.vmap(structops.matmul, in_dims=in_dims)(*args)
    loop = [
        torch.matmul(*(a[i] if d == 0 else a for a, d in zip(args, in_dims, strict=True))) for i in range(3)
    ]
    torch.testing.assert_close(got, torch.stack(loop))
