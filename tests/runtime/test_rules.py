"""The rule language at run time: C++ meta vs Python mirror vs torch, IPFs, describe() and sharding."""

import json
import os
import re

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from structgen import rules
from structgen.sharding import run_sharded

import structops

# ---------------------------------------------------------------------------------------------
# Run-time rule errors: exact messages, the same from C++ and from the Python mirror

ERRORS = [
    (
        "matmul",
        (torch.ones(2, 3), torch.ones(4, 5)),
        "matmul: self.size(-1)=3 must equal other.size(-2)=4 (dim k)",
    ),
    ("matmul", (torch.ones(3), torch.ones(4)), "matmul: self.size(-1)=3 must equal other.size(-1)=4 (dim k)"),
    (
        "matmul",
        (torch.ones(2, 2, 3), torch.ones(3, 3, 4)),
        (
            "matmul: the size of 'other' (3) must match the size of 'self' (2) at non-singleton dimension -1;"
            " shapes: self=[2], other=[3]"
        ),
    ),
    (
        "bmm",
        (torch.ones(2, 3, 4), torch.ones(2, 5, 6)),
        "bmm: self.size(2)=4 must equal mat2.size(1)=5 (dim k)",
    ),
    (
        "bmm",
        (torch.ones(3, 4), torch.ones(2, 4, 6)),
        "bmm: 'self' must have 3 dims to match [b, n, k], got 2",
    ),
    (
        "bmm",
        (torch.ones(2, 3, 4), torch.ones(2, 4, 5, dtype=torch.float64)),
        "bmm: 'mat2' has dtype Double but 'self' has Float; they must have the same dtype",
    ),
    (
        "add",
        (torch.ones(2, 3), torch.ones(4)),
        (
            "add: the size of 'other' (4) must match the size of 'self' (3) at non-singleton dimension -1; "
            "shapes: self=[2, 3], other=[4]"
        ),
    ),
    (  # the size a later input clashes with was set by tensor1, not by self (size 1 there)
        "addcmul",
        (torch.ones(1, 1), torch.ones(2, 1), torch.ones(5, 3)),
        (
            "addcmul: the size of 'tensor2' (5) must match the size of 'tensor1' (2) at non-singleton "
            "dimension -2; shapes: self=[1, 1], tensor1=[2, 1], tensor2=[5, 3]"
        ),
    ),
    (
        "add",
        (torch.ones(2, dtype=torch.int64), torch.ones(2, dtype=torch.int64), {"alpha": 1.5}),
        (
            "add: for integral inputs alpha must not be a floating point number, got alpha=1.5 with result"
            " type Long"
        ),
    ),
    (
        "neg",
        (torch.ones(2, dtype=torch.bool),),
        (
            "neg: 'self' has dtype Bool, which neg does not support (supported: float16, bfloat16, float32,"
            " float64, complex64, complex128, uint8, int8, int16, int32, int64)"
        ),
    ),
    ("sum", (torch.ones(2, 3), [0, -2]), "sum: dim 0 appears multiple times in the list of dims"),
    (
        "cat",
        ([torch.ones(2, 3), torch.ones(2, 4)],),
        "cat: tensors[0].size(1)=3 must equal tensors[1].size(1)=4 (dim that is not the cat dim)",
    ),
    (
        "stack",
        ([torch.ones(2, 3), torch.ones(3, 2)],),
        "stack: tensors[0].shape[0:2]=[2, 3] must equal tensors[1].shape[0:2]=[3, 2] (group *(every dim))",
    ),
    (
        "embedding",
        (torch.ones(5, 3), torch.tensor([1.0])),
        "embedding: 'indices' has dtype Float, which embedding does not support (supported: int32, int64)",
    ),
    (
        "embedding",
        (torch.ones(5), torch.tensor([1])),
        "embedding: 'weight' must have 2 dims to match [v, d], got 1",
    ),
    # An int[] argument as a pattern group; Tensor? patterns and same_dtype checked only when given.
    (
        "layer_norm",
        (torch.ones(2, 3), [4]),
        "layer_norm: normalized_shape=[4] must equal input.shape[-1:]=[3] (group *normalized_shape)",
    ),
    (
        "layer_norm",
        (torch.ones(2, 3), [2, 3, 1]),
        "layer_norm: 'input' must have at least 3 dims to match [*batch, *normalized_shape], got 2",
    ),
    (
        "layer_norm",
        (torch.ones(2, 4), [4], None, torch.ones(3)),
        "layer_norm: normalized_shape=[4] must equal bias.shape[0:1]=[3] (group *normalized_shape)",
    ),
    (
        "layer_norm",
        (torch.ones(2, 4), [4], None, torch.ones(2, 4)),
        "layer_norm: 'bias' must have 1 dims to match [*normalized_shape], got 2",
    ),
    (
        "layer_norm",
        (torch.ones(2, 4), [4], None, torch.ones(4, dtype=torch.float64)),
        "layer_norm: 'bias' has dtype Double but 'input' has Float; they must have the same dtype",
    ),
    (
        "layer_norm",
        (torch.ones(2, 4), [4], torch.ones(4, dtype=torch.int64)),
        (
            "layer_norm: 'weight' has dtype Long, which layer_norm does not support (supported: float16,"
            " bfloat16, float32, float64)"
        ),
    ),
]


@pytest.mark.parametrize(
    "op, args, message", ERRORS, ids=lambda x: x if isinstance(x, str) and len(x) < 12 else ""
)
@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_rule_error_message(op, args, message, device):
    kwargs = args[-1] if isinstance(args[-1], dict) else {}
    args = args[:-1] if kwargs else args
    moved = [_meta(a) if device == "meta" else a for a in args]
    with pytest.raises(RuntimeError, match=f"^{re.escape(message)}$"):
        getattr(structops, op)(*moved, **kwargs)
    with pytest.raises(RuntimeError, match=f"^{re.escape(message)}$"):
        rules.describe(op, *args, **kwargs)


def test_index_errors_are_index_errors():
    with pytest.raises(IndexError, match=r"^sum: dim 2 is out of range for 'self' with 2 dims"):
        structops.sum(torch.ones(2, 3), [2])
    with pytest.raises(IndexError, match=r"^cat: dim 2 is out of range for 'tensors\[0\]' with 2 dims"):
        structops.cat([torch.ones(2, 3)], 2)


def test_embedding_index_out_of_range_is_checked_by_the_kernel():
    # Data-dependent: the meta function cannot see it; the CPU kernel raises IndexError.
    with pytest.raises(IndexError, match=r"^embedding: index 5 is out of range for 'weight' with 5 rows"):
        structops.embedding(torch.ones(5, 3), torch.tensor([0, 5]))
    assert structops.embedding(
        torch.ones(5, 3, device="meta"), torch.tensor([0, 5], device="meta")
    ).shape == (2, 3)


# ---------------------------------------------------------------------------------------------
# describe(): index space and IPFs


def test_describe_matmul_batch_broadcast():
    d = structops.describe("matmul", torch.ones(2, 1, 3, 4), torch.ones(5, 4, 6))
    assert d.outputs == (("out", (2, 5, 3, 6), "float32", (90, 18, 6, 1)),)
    assert [(i.name, i.size, i.kind) for i in d.index_space] == [
        ("d0", 2, "parallel"),
        ("d1", 5, "parallel"),
        ("n", 3, "parallel"),
        ("m", 6, "parallel"),
        ("k", 4, "reduction"),
    ]
    self_ipf, other_ipf, out_ipf = d.ipfs
    # self [2, 1, 3, 4]: d0, broadcast (row 0, the one element), n, k
    assert self_ipf.matrix == ((1, 0, 0, 0, 0), (0, 0, 0, 0, 0), (0, 0, 1, 0, 0), (0, 0, 0, 0, 1))
    assert self_ipf.tile == (1, 1, 1, 1)
    assert other_ipf.matrix == ((0, 1, 0, 0, 0), (0, 0, 0, 0, 1), (0, 0, 0, 1, 0))
    assert out_ipf.tensor == "out" and out_ipf.shape == (2, 5, 3, 6)
    # A tile of the index space maps to exactly the slices that tile needs.
    assert other_ipf.region([0, 1, 0, 2, 1], [2, 3, 3, 5, 3]) == (slice(1, 3), slice(1, 3), slice(2, 5))
    text = str(d)
    assert "index space: [d0=2, d1=5, n=3, m=6, k=4 (reduced)]" in text
    assert "self [2, 1, 3, 4]: [d0, 0, n, k]" in text
    assert json.loads(d.json()) == d.to_json()


def test_describe_cat_offsets_and_stack_selection():
    d = structops.describe("cat", [torch.ones(2, 3), torch.ones(4, 3)])
    first, second, _ = d.ipfs
    assert (first.offset, second.offset) == ((0, 0), (-2, 0))
    assert second.region([0, 0], [3, 3]) == (slice(0, 1), slice(0, 3))  # rows 2..3 of the output
    assert first.region([4, 0], [6, 3]) is None  # not read by that tile
    s = structops.describe("stack", [torch.ones(2, 3), torch.ones(2, 3)], 1)
    assert [i.select for i in s.ipfs[:2]] == [(1, 0), (1, 1)]


def test_describe_tensor_list_output_reads_each_piece_at_its_offset():
    """split_with_sizes_copy: the index space is self's axes; the split axis is whole (a tile of
    it would need other split sizes); run_sharded tiles the others and returns a list."""
    d = structops.describe("split_with_sizes_copy", torch.ones(2, 7, 3), [3, 3, 1], 1)
    assert [(i.name, i.kind) for i in d.index_space] == [
        ("self0", "parallel"),
        ("self1", "whole"),
        ("self2", "parallel"),
    ]
    pieces = [i for i in d.ipfs if i.tensor.startswith("out[")]
    assert [(i.tensor, i.offset) for i in pieces] == [
        ("out[0]", (0, 0, 0)),
        ("out[1]", (0, -3, 0)),
        ("out[2]", (0, -6, 0)),
    ]
    x = torch.randn(2, 7, 3)
    got = run_sharded("split_with_sizes_copy", x, [3, 3, 1], 1, splits={"self0": 2, "self2": 3})
    assert isinstance(got, list) and all(
        torch.equal(a, b) for a, b in zip(got, x.split([3, 3, 1], 1), strict=True)
    )
    with pytest.raises(ValueError, match="index dim 'self1' is whole"):
        run_sharded("split_with_sizes_copy", x, [3, 3, 1], 1, splits={"self1": 2})


def test_describe_reduction_and_gather():
    d = structops.describe("sum", torch.ones(3, 4, 5), [1], True)
    assert [(i.size, i.kind) for i in d.index_space] == [
        (3, "parallel"),
        (1, "parallel"),
        (5, "parallel"),
        (4, "reduction"),
    ]
    assert d.combine == "add"
    e = structops.describe("embedding", torch.ones(7, 3), torch.ones(2, 5, dtype=torch.int64))
    weight = e.ipfs[0]
    assert weight.tile == (7, 1)  # any row may be read: the gathered dim is not projected
    assert [i.kind for i in e.index_space] == ["parallel"] * 3


def test_describe_optional_tensors():
    """A Tensor? argument gets an IPF only when given; ones() gives the stats' size-1 dims, and
    every output has an IPF: the stats' batch axis is the index dim of the input's."""
    x = torch.ones(2, 3, 8)
    bare = rules.describe("layer_norm", x, [3, 8])
    assert [o[1] for o in bare.outputs] == [(2, 3, 8), (2, 1, 1), (2, 1, 1)]
    assert {i.tensor for i in bare.ipfs} == {"input", "out", "mean", "rstd"}
    mean = next(i for i in bare.ipfs if i.tensor == "mean")
    assert mean.matrix == ((1, 0, 0), (0, 0, 0), (0, 0, 0)) and mean.tile == (1, 1, 1)
    assert mean.region([1, 0, 0], [2, 3, 8]) == (slice(1, 2), slice(0, 1), slice(0, 1))
    assert [d.kind for d in bare.index_space] == ["parallel", "whole", "whole"]  # meta.index: trailing()
    for got, expected in zip(
        run_sharded("layer_norm", x, [3, 8], splits={"d0": 2}), structops.native_layer_norm(x, [3, 8])
    ):
        torch.testing.assert_close(got, expected)
    with pytest.raises(ValueError, match="layer_norm: index dim 'd1' is whole"):
        run_sharded("layer_norm", x, [3, 8], splits={"d1": 2})
    full = rules.describe("layer_norm", x, [3, 8], torch.ones(3, 8), torch.ones(3, 8))
    assert {i.tensor for i in full.ipfs} == {"input", "weight", "bias", "out", "mean", "rstd"}
    weight = next(i for i in full.ipfs if i.tensor == "weight")
    assert weight.shape == (3, 8)


def test_a_checked_shape_equality_links_a_broadcast_input():
    """addmm's bias is tied to [n, m] only by `checks: broadcast(self, [n, m]) == [n, m]`: its axes
    are the output's, so a tile reads the bias columns of its own m range."""
    bias, a, b = torch.randn(5), torch.randn(3, 4), torch.randn(4, 5)
    d = rules.describe("addmm", bias, a, b)
    assert str(d).splitlines()[3] == "  self [5]: [m]"
    torch.testing.assert_close(
        run_sharded("addmm", bias, a, b, splits={"n": 2, "m": 3}), structops.addmm(bias, a, b)
    )


def test_describe_unknown_op():
    with pytest.raises(ValueError, match=r"'nope'; ops with a meta rule: abs, add, add_relu, addcmul,"):
        structops.describe("nope", torch.ones(2))


def test_an_op_with_a_hand_written_meta_is_described_whole():
    """meta: custom says nothing of which input axes an output axis stands for: every input axis
    is a whole index dim of its own, so no split is made; the outputs are the meta function's
    (masked_select's size is data: the symbol FakeTensorMode gives it)."""
    x, mask = torch.randn(3, 4), torch.tensor([True, False, True, True])
    d = structops.describe("masked_select", x, mask)
    assert str(d).splitlines() == [
        "masked_select:",
        "  output out: shape [u0], float32, strides [1]",
        "  index space: [self0=3 (whole), self1=4 (whole), mask0=4 (whole)]",
        "  self [3, 4]: [self0, self1]",
        "  mask [4]: [mask0]",
    ]
    torch.testing.assert_close(run_sharded("masked_select", x, mask, splits={}), torch.masked_select(x, mask))
    with pytest.raises(ValueError, match="index dim 'mask0' is whole"):
        run_sharded("masked_select", x, mask, splits={"mask0": 2})
    logits, target, weight = torch.randn(4, 5), torch.tensor([0, 4, 1, 2]), torch.rand(5)
    d = structops.describe("cross_entropy_loss", logits, target, weight, 0)
    assert d.outputs == (("out", (4,), "float32", (1,)),)
    assert [(i.name, i.size, i.kind) for i in d.index_space] == [
        ("self0", 4, "whole"),
        ("self1", 5, "whole"),
        ("target0", 4, "whole"),
        ("weight0", 5, "whole"),
    ]
    with pytest.raises(RuntimeError, match="cross_entropy_loss: class-index 'target' must have shape"):
        structops.describe("cross_entropy_loss", logits, target[:3])


# ---------------------------------------------------------------------------------------------
# run_sharded(): the IPFs are right if the tiles reassemble the unsharded result

SHARDED = [
    ("add", (torch.randn(3, 1, 5), torch.randn(4, 1)), {"d0": 2, "d1": 3, "d2": 2}),
    ("add", (torch.randn(6, 7), torch.randn(7)), {"d0": 4, "d1": 3}),
    ("mul", (torch.randn(5, 1), torch.randn(1, 6)), {"d0": 3, "d1": 4}),
    ("neg", (torch.randn(9, 2).t(),), {"d0": 2, "d1": 5}),
    ("sum", (torch.randn(4, 6, 5), [1]), {"d0": 3, "d1": 2}),
    ("sum", (torch.randn(4, 6, 5), [1]), {"d0": 2, "r2": 3}),
    ("sum", (torch.randint(-9, 9, (4, 6)), None), {"r0": 3, "r1": 4}),
    ("sum", (torch.randn(4, 6, 5), [0, 2], True), {"d1": 3, "r3": 2, "r4": 2}),
    ("matmul", (torch.randn(2, 1, 3, 8), torch.randn(5, 8, 6)), {"d0": 2, "d1": 3, "n": 2, "m": 4, "k": 3}),
    ("matmul", (torch.randn(8), torch.randn(8, 5)), {"k": 4, "m": 2}),
    ("matmul", (torch.randn(3, 8), torch.randn(8)), {"n": 3, "k": 2}),
    ("bmm", (torch.randn(4, 3, 6), torch.randn(4, 6, 5)), {"b": 2, "n": 3, "m": 2, "k": 3}),
    ("cat", ([torch.randn(2, 3), torch.randn(5, 3), torch.randn(1, 3)],), {"d0": 3, "d1": 2}),
    ("cat", ([torch.randn(2, 3), torch.randn(2, 4)], 1), {"d0": 2, "d1": 4}),
    ("cat", ([torch.randn(0), torch.randn(4, 3)],), {"d0": 3}),
    ("stack", ([torch.randn(2, 3), torch.randn(2, 3), torch.randn(2, 3)], 1), {"d0": 2, "d1": 2, "d2": 3}),
    ("embedding", (torch.randn(7, 4), torch.tensor([[1, 6, 0], [2, 2, 5]])), {"d0": 2, "d1": 3, "d": 2}),
    # bias's dims are the features' (out's shape broadcasts them): each feature tile takes its slice
    ("linear", (torch.randn(6, 4), torch.randn(5, 4), torch.randn(5)), {"d0": 2, "d1": 3}),
    ("linear", (torch.randn(6, 4), torch.randn(5, 4), torch.randn(1)), {"d0": 2, "d1": 3}),
    ("linear", (torch.randn(2, 3, 4), torch.randn(5, 4), torch.randn(())), {"d1": 2, "d2": 2}),
]


@pytest.mark.parametrize("op, args, splits", SHARDED, ids=lambda x: x if isinstance(x, str) else "")
def test_run_sharded_equals_unsharded(op, args, splits):
    expected = getattr(structops, op)(*args)
    got = run_sharded(op, *args, splits=splits)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)


def test_run_sharded_rejects_unknown_and_uncombinable_dims():
    with pytest.raises(ValueError, match=r"add: no index dim \['k'\]; the index space is \['d0', 'd1'\]"):
        run_sharded("add", torch.ones(2, 3), torch.ones(3), splits={"k": 2})


# ---------------------------------------------------------------------------------------------
# Property: C++ meta == Python mirror == torch, over random shapes and dtypes

DTYPES = [torch.float32, torch.float64, torch.float16, torch.int64, torch.int32, torch.bool]


def _hypothesis_settings():
    fuzz = os.environ.get("STRUCTGEN_HYPOTHESIS") == "fuzz"
    return settings(
        max_examples=400 if fuzz else 60,
        deadline=None,
        derandomize=not fuzz,
        suppress_health_check=[HealthCheck.too_slow],
    )


def _meta(x):
    if isinstance(x, list):
        return [_meta(t) for t in x]
    return x.to("meta") if isinstance(x, torch.Tensor) else x


def _agree(op, reference, args, **kwargs):
    """The C++ meta function, the Python mirror and torch agree: same result or all raise."""
    try:
        expected = reference(*_meta(list(args)), **kwargs)
    except (RuntimeError, IndexError, ValueError):
        expected = None
    if expected is None:
        with pytest.raises((RuntimeError, IndexError)) as cpp_error:
            getattr(structops, op)(*_meta(list(args)), **kwargs)
        with pytest.raises((RuntimeError, IndexError)) as mirror_error:
            rules.describe(op, *args, **kwargs)
        assert str(mirror_error.value) == str(cpp_error.value).split("\n")[0]
        return
    actual = getattr(structops, op)(*_meta(list(args)), **kwargs)
    ((_, shape, dtype, strides),) = rules.describe(op, *args, **kwargs).outputs
    assert (tuple(actual.shape), actual.dtype) == (tuple(expected.shape), expected.dtype)
    assert (shape, dtype) == (tuple(expected.shape), str(expected.dtype).removeprefix("torch."))
    assert tuple(actual.stride()) == strides
    if actual.numel() > 1 and op in ("add", "mul", "neg"):
        # Strides of size-1 dims do not address anything; torch's meta functions differ there.
        assert _significant(actual) == _significant(expected)


def _significant(t):
    return tuple(s for n, s in zip(t.shape, t.stride()) if n != 1)


shapes = st.lists(st.integers(0, 4), min_size=0, max_size=4)


def _tensor(shape, dtype, layout):
    t = torch.zeros(shape, dtype=dtype, device="meta")
    if layout == "transposed" and len(shape) >= 2:
        t = torch.zeros(tuple(reversed(shape)), dtype=dtype, device="meta").permute(
            *reversed(range(len(shape)))
        )
    if layout == "channels_last" and len(shape) == 4:
        t = t.contiguous(memory_format=torch.channels_last)
    return t


layouts = st.sampled_from(["contiguous", "transposed", "channels_last"])


@_hypothesis_settings()
@given(
    a=shapes,
    b=shapes,
    da=st.sampled_from(DTYPES),
    db=st.sampled_from(DTYPES),
    la=layouts,
    lb=layouts,
    drop=st.lists(st.booleans(), min_size=4, max_size=4),
)
def test_property_pointwise(a, b, da, db, la, lb, drop):
    # b: a suffix of a with some dims set to 1 (broadcastable), or unrelated sizes (must raise).
    b = [1 if d else s for s, d in zip(a[len(a) - len(b) :], drop)] if len(b) <= len(a) else b
    x, y = _tensor(a, da, la), _tensor(b, db, lb)
    _agree("add", torch.add, (x, y))
    _agree("mul", torch.mul, (x, y))
    _agree("neg", torch.neg, (x,))


@_hypothesis_settings()
@given(
    shape=shapes,
    dtype=st.sampled_from(DTYPES),
    dims=st.one_of(st.none(), st.lists(st.integers(-4, 3), max_size=3)),
    keepdim=st.booleans(),
    out_dtype=st.sampled_from([None, torch.float64, torch.int32]),
)
def test_property_sum(shape, dtype, dims, keepdim, out_dtype):
    x = _tensor(shape, dtype, "contiguous")
    _agree(
        "sum",
        lambda t, d, k, **kw: (
            torch.sum(t, d, k, **kw) if d is not None else torch.sum(t, tuple(range(t.dim())), k, **kw)
        ),
        (x, dims, keepdim),
    )
    if out_dtype is not None and dims is not None:
        _agree(
            "sum",
            lambda t, d, k, **kw: torch.sum(t, d or tuple(range(t.dim())), k, **kw),
            (x, dims, keepdim),
            dtype=out_dtype,
        )


@_hypothesis_settings()
@given(
    a=st.lists(st.integers(1, 3), min_size=1, max_size=4),
    b=st.lists(st.integers(1, 3), min_size=1, max_size=4),
    dtype=st.sampled_from([torch.float32, torch.float64, torch.int64]),
)
def test_property_matmul(a, b, dtype):
    _agree("matmul", torch.matmul, (_tensor(a, dtype, "contiguous"), _tensor(b, dtype, "contiguous")))


@_hypothesis_settings()
@given(
    base=st.lists(st.integers(0, 3), min_size=1, max_size=3),
    sizes=st.lists(st.integers(0, 3), min_size=1, max_size=3),
    dim=st.integers(-3, 2),
    dtypes=st.lists(st.sampled_from(DTYPES), min_size=3, max_size=3),
    bad=st.booleans(),
)
def test_property_cat_and_stack(base, sizes, dim, dtypes, bad):
    d = dim % len(base) if -len(base) <= dim < len(base) else 0
    tensors = []
    for i, n in enumerate(sizes):
        shape = list(base)
        shape[d] = n
        if bad and i == 1:
            shape.append(2)
        tensors.append(_tensor(shape, dtypes[i], "contiguous"))
    _agree("cat", torch.cat, (tensors, dim))
    same = [_tensor(base, dtypes[i], "contiguous") for i in range(len(sizes))]
    _agree("stack", torch.stack, (same, dim))


@pytest.mark.parametrize("mode", [None, "trunc", "floor"])
@pytest.mark.parametrize(
    "da, db",
    [
        (torch.int64, torch.int64),
        (torch.int32, torch.uint8),
        (torch.int64, torch.float16),
        (torch.float32, torch.float64),
        (torch.bfloat16, torch.bfloat16),
    ],
)
def test_conditional_dtype_rule(mode, da, db):
    # div's rule: 'promote(self, other) if given(rounding_mode) else promote(..., kind=INT_TO_FLOAT)'.
    x, y = torch.ones(2, dtype=da, device="meta"), torch.ones(3, 1, dtype=db, device="meta")
    expected = torch.div(x, y, rounding_mode=mode)
    actual = structops.div(x, y, rounding_mode=mode)
    ((_, shape, dtype, _),) = rules.describe("div.Tensor_mode", x, y, rounding_mode=mode).outputs
    assert (actual.dtype, tuple(actual.shape)) == (expected.dtype, tuple(expected.shape))
    assert (dtype, shape) == (str(expected.dtype).removeprefix("torch."), (3, 2))
