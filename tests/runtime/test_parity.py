"""Drop-in parity with torch (issue 23): the calls of ordinary code give torch's result, dtype
and shape, eagerly, on meta tensors and under torch.compile.

Python numbers take part in type promotion as torch's wrapped numbers (a float with a float16
tensor stays float16, an int with a uint8 tensor stays uint8 and wraps around); composite
overloads (sum(x), var(x, unbiased), all(x, dim)) are torch's; a name of several overloads picks
the one torch's Python layer would (var(x, False) is unbiased=False, not dim=0).
"""

import pytest
import torch

import structops

F16 = torch.tensor([1.0, 2.0, -3.5], dtype=torch.float16)
U8 = torch.tensor([1, 2, 250], dtype=torch.uint8)
I64 = torch.tensor([1, -2, 3])
B = torch.tensor([True, False, True])
F64 = torch.tensor([0.5, -1.25, 3.0], dtype=torch.float64)
C64 = torch.tensor([1 + 2j, -1j, 3], dtype=torch.complex64)
ZERO_DIM_I32 = torch.tensor(5, dtype=torch.int32)
ZERO_DIM_F16 = torch.tensor(1.5, dtype=torch.float16)

# (name, arguments): each is called as structops.<name>(*args) and torch.<name>(*args).
NUMBER_CALLS = [
    ("add", (F16, 2.5)),
    ("add", (U8, 300)),  # wraps around in uint8, as torch
    ("add", (I64, 2.5)),  # int tensor and a float: the default float dtype
    ("add", (B, 1)),
    ("add", (B, True)),
    ("add", (ZERO_DIM_I32, 3)),  # a 0-dim tensor still wins over a number of its category
    ("add", (ZERO_DIM_F16, 2.5)),
    ("add", (F64, 0.1)),  # the number keeps double precision
    ("add", (I64, 1j)),
    ("sub", (F16, 1.5)),
    ("mul", (U8, 2.5)),
    ("mul", (C64, 2)),
    ("mul", (I64, True)),
    ("div", (I64, 2)),
    ("div", (F16, 3)),
    ("eq", (I64, 2.5)),
    ("eq", (U8, 300)),
    ("ne", (F16, 2)),
    ("lt", (I64, 0.5)),
    ("le", (U8, 2)),
    ("gt", (F64, 0)),
    ("ge", (B, 0)),
    ("bitwise_and", (I64, 6)),
    ("bitwise_and", (B, True)),
    ("bitwise_and", (6, I64)),
    ("pow", (2, F16)),
    ("pow", (2.5, I64)),
    ("pow", (F64, 2)),
    ("where", (B, F16, 0.5)),
    ("where", (B, 7, U8)),
    ("where", (B, I64, 2.5)),
    ("add", (2, F16)),  # a number first: add/sub/mul/div only, as torch's Python layer allows
    ("add", (0.1, F16)),
    ("sub", (300, U8)),
    ("mul", (2.5, I64)),
    ("mul", (True, B)),
    ("add", (3, ZERO_DIM_I32)),
    ("div", (3, ZERO_DIM_I32)),
    ("sub", (1j, I64)),
    ("where", (B, 1.0, 0.0)),  # two numbers: the default dtype of the wider kind
    ("where", (B, 1, 2.5)),
    ("where", (B, 3, -1)),
    ("where", (B, True, False)),
    ("where", (B, True, 2)),
    ("where", (B, 1j, 0)),
    ("where", (ZERO_DIM_I32 > 0, 300, 0.5)),
]


def _same(got, expected):
    assert got.dtype == expected.dtype
    assert got.shape == expected.shape
    torch.testing.assert_close(got, expected, equal_nan=True)


@pytest.mark.parametrize("name, args", NUMBER_CALLS, ids=lambda x: x if isinstance(x, str) else "")
def test_python_numbers_promote_as_torch(name, args):
    _same(getattr(structops, name)(*args), getattr(torch, name)(*args))
    meta = tuple(a.to("meta") if isinstance(a, torch.Tensor) else a for a in args)
    got = getattr(structops, name)(*meta)
    expected = getattr(torch, name)(*args)
    assert (got.dtype, got.shape) == (expected.dtype, expected.shape)


def test_where_of_two_numbers_follows_the_default_dtype_and_compiles():
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        _same(structops.where(B, 1, 2.5), torch.where(B, 1, 2.5))
    finally:
        torch.set_default_dtype(previous)
    compiled = torch.compile(lambda c: structops.where(c, 1.0, 0.0) * 2, fullgraph=True)
    _same(compiled(B), torch.where(B, 1.0, 0.0) * 2)


def test_a_number_first_compiles_and_is_refused_where_torch_refuses_it():
    compiled = torch.compile(lambda t: structops.add(2, t, alpha=3) * structops.div(1, t), fullgraph=True)
    _same(compiled(F64), torch.add(2, F64, alpha=3) * torch.div(1, F64))
    o = torch.empty(3)
    assert structops.mul(2, F64, out=o) is o
    # torch lists eq's overloads; both take a Tensor first, so structops names the argument.
    with pytest.raises(TypeError, match=r"eq\(\): argument 'self' \(position 1\) must be Tensor, not int"):
        structops.eq(2, I64)


def test_alpha_with_a_number():
    """alpha by keyword, as torch.add takes it (positionally, torch.add reads the deprecated
    add(input, alpha, other))."""
    _same(structops.add(F16, 2, alpha=3), torch.add(F16, 2, alpha=3))
    _same(structops.sub(I64, 2, alpha=-3), torch.sub(I64, 2, alpha=-3))


def test_div_by_a_number_with_rounding_modes():
    for mode in (None, "trunc", "floor"):
        _same(structops.div(I64, -2, rounding_mode=mode), torch.div(I64, -2, rounding_mode=mode))


def test_inplace_and_out_with_a_number():
    x, y = F16.clone(), F16.clone()
    structops.add_(x, 2.5)
    y.add_(2.5)
    _same(x, y)
    out = torch.empty(3, dtype=torch.bool)
    structops.lt(I64, 2, out=out)
    _same(out, torch.lt(I64, 2))


def test_errors_are_torchs():
    with pytest.raises(RuntimeError, match="alpha must not be a floating point number"):
        structops.add(I64, 2, 1.5)
    with pytest.raises(RuntimeError, match="'other' has dtype Bool"):
        structops.sub(F16, True)
    with pytest.raises(RuntimeError, match="bitwise_and: .*Float"):
        structops.bitwise_and(I64, 2.5)


def test_schema_semantics_of_torch_ops():
    """torch.ops.structops.* resolves by schema (the JIT's rules), as torch.ops.aten.* does."""
    _same(torch.ops.structops.add(F16, 2.5), torch.ops.aten.add(F16, 2.5))
    _same(torch.ops.structops.add.Scalar(F16, 2.5, 2), torch.ops.aten.add.Scalar(F16, 2.5, 2))
    _same(torch.ops.structops.where.ScalarOther(B, I64, 2.5), torch.ops.aten.where.ScalarOther(B, I64, 2.5))


X = torch.randn(3, 4, dtype=torch.float64)
XB = X > 0
COMPOSITE_CALLS = [
    ("sum", (X,), {}),
    ("sum", (XB,), {}),
    ("sum", (X,), {"dtype": torch.float32}),
    ("mean", (X,), {}),
    ("mean", (X.float(),), {"dtype": torch.float64}),
    ("prod", (X,), {}),
    ("prod", (X, 1), {}),
    ("prod", (X, -1, True), {}),
    ("all", (XB,), {}),
    ("all", (XB, 1), {}),
    ("any", (XB,), {}),
    ("any", (XB, 0, True), {}),
    ("var", (X,), {}),
    ("var", (X, False), {}),
    ("var", (X, 1), {}),
    ("var", (X, [0], False, True), {}),
    ("std", (X, True), {}),
    ("std", (X, 1, False), {}),
    ("std", (X,), {"dim": 0, "correction": 0}),
    ("norm", (X,), {}),
    ("norm", (X, 3), {}),
]


def _eager_and_meta_as_torch(name, args, kwargs):
    """structops.<name> gives torch.<name>'s result, and its dtype and shape on meta tensors."""
    expected = getattr(torch, name)(*args, **kwargs)
    _same(getattr(structops, name)(*args, **kwargs), expected)
    meta = tuple(a.to("meta") if isinstance(a, torch.Tensor) else a for a in args)
    got = getattr(structops, name)(*meta, **kwargs)
    assert (got.dtype, got.shape) == (expected.dtype, expected.shape)
    return expected


@pytest.mark.parametrize("name, args, kwargs", COMPOSITE_CALLS, ids=lambda x: x if isinstance(x, str) else "")
def test_composite_overloads_are_torchs(name, args, kwargs):
    _eager_and_meta_as_torch(name, args, kwargs)


def test_composite_out_overloads():
    out = torch.empty((), dtype=torch.float64)
    _same(structops.mean(X, out=out), torch.mean(X))
    out = torch.empty(3, dtype=torch.bool)
    _same(structops.all(XB, 1, out=out), torch.all(XB, 1))
    out = torch.empty(4, dtype=torch.float64)
    _same(structops.var(X, 0, False, out=out), torch.var(X, 0, False))
    out = torch.empty(3, dtype=torch.float64)
    _same(structops.prod(X, 1, out=out), torch.prod(X, 1))


def test_composites_differentiate_through_their_target():
    x = X.clone().requires_grad_()
    y = X.clone().requires_grad_()
    structops.var(x, False).backward()
    torch.var(y, False).backward()
    _same(x.grad, y.grad)


def test_vmap_runs_the_composites_target_batched():
    got = torch.func.vmap(structops.sum)(X)
    _same(got, X.sum(1))


def test_compile_keeps_the_overload_the_python_layer_picked():
    """A structops.* call leaves an OpOverload in the graph: var(t, False) stays unbiased=False
    next to other ops (a packet in the graph was resolved to var.correction with dim=0 there)."""

    def f(t):
        return structops.mean(t) + structops.var(t, False) + structops.add(t, 2.5).sum()

    torch._dynamo.reset()
    got = torch.compile(f, backend="inductor")(X)
    _same(got, torch.mean(X) + torch.var(X, False) + (X + 2.5).sum())


def test_the_pick_depends_on_keyword_values_not_only_their_names():
    """The same keywords with an int, then a tuple, then None pick three overloads (the eager
    pick is cached per call shape: the cache must tell these apart)."""
    _same(structops.all(XB, dim=0), torch.all(XB, dim=0))
    _same(structops.all(XB, dim=(0, 1)), torch.all(XB, dim=(0, 1)))
    _same(structops.all(XB, dim=0), torch.all(XB, dim=0))
    _same(structops.var(X, dim=None, correction=0), torch.var(X, dim=None, correction=0))
    _same(structops.var(X, dim=1, correction=0), torch.var(X, dim=1, correction=0))


def test_a_call_no_overload_takes_names_them_all():
    with pytest.raises(TypeError, match=r"var\(\) received an invalid combination of arguments"):
        structops.var(X, "0")


# torch's Python layer takes texts for some numbers (the manifest's `spellings:`).
SPELLED_CALLS = [
    ("norm", (X.float(), "fro"), {}),
    ("norm", (X.float(),), {"p": "fro", "dim": 1}),
    ("norm", (X.float(), "fro", (0, 1), True), {}),
    ("cdist", (X.float(), X.float()[:2]), {"compute_mode": "use_mm_for_euclid_dist_if_necessary"}),
    # Rows apart from each other: through the matrix product, a distance of 0 is the square root
    # of a difference of rounded sums, and a GEMM's rounding (its blocking, its thread count, set
    # by earlier tests) moved it by 7e-4 in one full run against torch's 0.
    ("cdist", (X.float(), X.float()[:2] + 1, 2.0, "use_mm_for_euclid_dist"), {}),
    ("cdist", (X.float(), X.float()[:2]), {"compute_mode": "donot_use_mm_for_euclid_dist"}),
]


@pytest.mark.parametrize("name, args, kwargs", SPELLED_CALLS, ids=lambda x: x if isinstance(x, str) else "")
def test_texts_torchs_python_layer_takes_for_numbers(name, args, kwargs):
    expected = _eager_and_meta_as_torch(name, args, kwargs)
    torch._dynamo.reset()
    compiled = torch.compile(lambda *a: getattr(structops, name)(*a, **kwargs), backend="inductor")
    _same(compiled(*args), expected)


def test_an_unknown_text_is_a_value_error_naming_the_accepted_ones():
    with pytest.raises(ValueError, match="is not a valid value for compute_mode"):
        torch.cdist(X.float(), X.float(), compute_mode="fast")
    with pytest.raises(ValueError, match=r"cdist\(\): 'fast' is not a valid value for compute_mode: "):
        structops.cdist(X.float(), X.float(), compute_mode="fast")
    with pytest.raises(
        ValueError, match=r"norm\(\): 'nuc' is not a valid value for p: expected one of 'fro'$"
    ):
        structops.norm(X.float(), "nuc")
    # torch.ops keeps the schema: a text is no number there.
    with pytest.raises(RuntimeError, match="Expected a value of type"):
        torch.ops.structops.cdist(X.float(), X.float(), 2.0, "use_mm_for_euclid_dist")


# clamp with tensor bounds (clamp.Tensor: the call of _clamp_tensors, clamp_min.Tensor or
# clamp_max.Tensor for the bounds given).
LO = torch.tensor([-0.5, 0.0, 0.25, -2.0], dtype=torch.float64)
HI = torch.tensor([[0.5], [1.0], [0.0]], dtype=torch.float64)  # 0.0 < LO[2]: max wins there
CLAMP_CALLS = [
    ((X, LO, HI), {}),
    ((X,), {"min": LO}),
    ((X,), {"max": HI}),
    ((X, None, HI), {}),
    ((X.to(torch.int32), LO.float(), None), {}),  # an int tensor with float bounds: float32
    ((X.to(torch.int64), torch.tensor(1), torch.tensor([3], dtype=torch.int16)), {}),
    ((torch.tensor([1.0, float("nan"), 3.0]), torch.tensor([2.0, 2.0, float("nan")]), None), {}),
    ((torch.tensor([1.0, float("nan"), 3.0]), torch.tensor(0.0), torch.tensor([float("nan"), 1, 1])), {}),
    ((torch.empty(0, 4), LO, None), {}),
]


@pytest.mark.parametrize("args, kwargs", CLAMP_CALLS)
def test_clamp_with_tensor_bounds_is_torchs(args, kwargs):
    expected = torch.clamp(*args, **kwargs)
    _same(structops.clamp(*args, **kwargs), expected)
    meta = tuple(a.to("meta") if isinstance(a, torch.Tensor) else a for a in args)
    meta_kwargs = {k: v.to("meta") for k, v in kwargs.items()}
    got = structops.clamp(*meta, **meta_kwargs)
    assert (got.dtype, got.shape) == (expected.dtype, expected.shape)
    out = torch.empty(expected.shape, dtype=expected.dtype)
    assert structops.clamp(*args, **kwargs, out=out) is out
    _same(out, expected)


def test_clamp_with_tensor_bounds_inplace_compile_and_errors():
    y = X.clone()
    assert structops.clamp_(y, LO, HI) is y
    _same(y, torch.clamp(X, LO, HI))
    torch._dynamo.reset()
    compiled = torch.compile(lambda a, b, c: structops.clamp(a, b, c) * 2, backend="inductor")
    _same(compiled(X, LO, HI), torch.clamp(X, LO, HI) * 2)
    with pytest.raises(RuntimeError, match="clamp: at least one of 'min' or 'max' must not be None"):
        structops.clamp(X, None, None)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        torch.clamp_(torch.tensor([1, 2]), torch.tensor([1.5]))
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        structops.clamp_(torch.tensor([1, 2]), torch.tensor([1.5]))


def test_clamp_gradients_at_ties_are_torchs():
    """A bound gets the gradient only where it wins strictly; a tie goes to self (the a == lo
    and a == lo == hi elements), and min == max gives the bound none (torch's clamp_backward).
    Forward AD is torch's too, which takes a tie's tangent from the one bound given."""
    values = (
        torch.tensor([0.0, 1.0, 2.0, 3.0, 5.0]),
        torch.tensor([1.0, 1.0, 1.0, 3.0, 4.0]),
        torch.tensor([2.0, 2.0, 2.0, 3.0, 4.0]),
    )
    for given in ((0, 1, 2), (0, 1), (0, 2)):
        mine = [v.clone().requires_grad_() for v in values]
        theirs = [v.clone().requires_grad_() for v in values]
        args = [mine[i] if i in given else None for i in range(3)]
        structops.clamp(*args).sum().backward()
        torch.clamp(*[theirs[i] if i in given else None for i in range(3)]).sum().backward()
        for i in given:
            _same(mine[i].grad, theirs[i].grad)
        primals = tuple(values[i] for i in given)
        tangents = tuple(torch.full_like(values[i], 10.0**i) for i in given)  # which input it came from

        def call(module, *given_values, given=given):
            args = dict(zip(given, given_values))
            return module.clamp(*[args.get(i) for i in range(3)])

        got = torch.func.jvp(lambda *a: call(structops, *a), primals, tangents)[1]
        _same(got, torch.func.jvp(lambda *a: call(torch, *a), primals, tangents)[1])


def test_clamp_min_and_clamp_max_with_numbers():
    u8 = torch.tensor([1, 5], dtype=torch.uint8)
    _same(structops.clamp_min(u8, 3), torch.clamp_min(u8, 3))
    _same(structops.clamp_min(I64, 2.5), torch.clamp_min(I64, 2.5))  # float32, as torch
    _same(structops.clamp_max(F16, 1.0), torch.clamp_max(F16, 1.0))
    for call in (lambda m: m.clamp_min(u8, 300), lambda m: m.clamp_max(F16, 1e6)):
        with pytest.raises(RuntimeError, match="overflow"):
            call(torch)
        with pytest.raises(RuntimeError, match="overflow"):
            call(structops)


def test_a_bad_argument_is_named_as_torch_names_it():
    """A value no overload takes, or a keyword none has, is a TypeError naming the argument, as
    torch's; numpy's names of dim and keepdim are taken, as torch takes them."""
    import numpy as np

    x = torch.ones(2, 3)
    with pytest.raises(
        TypeError, match=r"^add\(\): argument 'self' \(position 1\) must be Tensor, not numpy.ndarray$"
    ):
        structops.add(np.ones((2, 3)), x)
    with pytest.raises(
        TypeError, match=r"^add\(\): argument 'self' \(position 1\) must be Tensor, not list of \[float\]$"
    ):
        structops.add([1.0, 2.0], x)
    with pytest.raises(TypeError, match=r"^add\(\) got an unexpected keyword argument 'alpah'$"):
        structops.add(x, x, alpah=2)
    with pytest.raises(TypeError, match=r"^amax\(\) got an unexpected keyword argument 'axes'$"):
        structops.amax(x, axes=1)
    for ours, theirs in (
        (structops.sum(x, axis=1), torch.sum(x, axis=1)),  # several overloads: pick() renames
        (structops.sum(x, 1, keepdims=True), torch.sum(x, 1, keepdims=True)),
        (structops.amax(x, axis=0, keepdims=True), torch.amax(x, axis=0, keepdims=True)),  # one
    ):
        _same(ours, theirs)
    compiled = torch.compile(lambda t: structops.sum(t, axis=0) + structops.amax(t, axis=0), fullgraph=True)
    _same(compiled(x), torch.sum(x, 0) + torch.amax(x, 0))
