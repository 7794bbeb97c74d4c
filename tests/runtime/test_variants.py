"""Functional, inplace and out= variants derived from one structured kernel, with PyTorch's rules."""

import warnings

import pytest
import torch
from structgen.conformance.checks import opcheck
from structgen.conformance.spec import load_specs

import structops

RESIZE_WARNING = (
    r"An output with one or more elements was resized since it had shape \[3\], which does not "
    r"match the required output shape \[2, 3\]"
)


def ab():
    return torch.arange(6.0).reshape(2, 3), torch.tensor([10.0, 20.0, 30.0])


# --- out= ------------------------------------------------------------------------------------


def test_out_returns_out_itself_and_matches_functional():
    a, b = ab()
    out = torch.empty(2, 3)
    assert structops.add(a, b, alpha=2, out=out) is out
    assert torch.equal(out, structops.add(a, b, alpha=2))


def test_out_wrong_shape_with_elements_is_resized_with_warning():
    a, b = ab()
    out = torch.empty(3)
    with pytest.warns(UserWarning, match=RESIZE_WARNING):
        structops.add(a, b, out=out)
    assert out.shape == (2, 3)
    assert torch.equal(out, torch.add(a, b))


def test_strided_out_of_the_wrong_shape_is_resized_as_torch_resizes_it():
    """A non-dense out view (its overlap with the inputs too hard to tell) on its own storage is
    no input: resized with the warning, as torch does, not refused as if it were one."""
    a, b = ab()
    ours, theirs = torch.zeros(4, 6).t()[::2], torch.zeros(4, 6).t()[::2]  # [3, 4], strides (2, 6)
    with pytest.warns(UserWarning, match="was resized"):
        structops.add(a, b, out=ours)
    with pytest.warns(UserWarning, match="was resized"):
        torch.add(a, b, out=theirs)
    assert ours.shape == theirs.shape == (2, 3) and torch.equal(ours, theirs)


def test_out_empty_is_resized_silently():
    a, b = ab()
    out = torch.empty(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        structops.mul(a, b, out=out)
    assert torch.equal(out, torch.mul(a, b))


def test_resize_warning_is_a_python_warning_only_through_structops(capfd):
    """torch.ops.* calls print TORCH_WARN to stderr; structops.* makes it a Python warning."""
    a, b = ab()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.ops.structops.add.out(a, b, out=torch.empty(3))
    assert not [w for w in caught if "resized" in str(w.message)]
    assert "was resized" in capfd.readouterr().err
    with pytest.warns(UserWarning, match="was resized"):
        structops.add(a, b, out=torch.empty(3))


def test_warning_filter_error_raises():
    a, b = ab()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(UserWarning, match="was resized"):
            structops.add(a, b, out=torch.empty(3))


def test_out_non_castable_dtype_raises():
    a, b = ab()
    with pytest.raises(
        RuntimeError,
        match=r"add.out: result type Float can't be cast to the desired output "
        r"type Long of 'out'",
    ):
        structops.add(a, b, out=torch.empty(2, 3, dtype=torch.int64))


def test_out_wider_dtype_is_allowed():
    a, b = ab()
    out = torch.empty(2, 3, dtype=torch.float64)
    structops.add(a, b, out=out)
    assert torch.equal(out, torch.add(a, b).double())
    ints = torch.arange(6).reshape(2, 3)
    out = torch.empty(2, dtype=torch.float32)
    structops.sum(ints, [1], out=out)
    assert torch.equal(out, torch.sum(ints, [1]).float())


def test_out_on_another_device_raises():
    a, b = ab()
    with pytest.raises(RuntimeError, match=r"add.out: expected all tensors on meta, but 'self' is on cpu"):
        structops.add(a, b, out=torch.empty(2, 3, device="meta"))


def meta(*shape, dtype=torch.float32):
    return torch.ones(*shape, dtype=dtype, device="meta")


@pytest.mark.parametrize(
    "name, call",
    [
        ("weight", lambda: structops.native_layer_norm(meta(2, 3), [3], torch.ones(3))),
        ("bias", lambda: structops.native_layer_norm(meta(2, 3), [3], meta(3), torch.ones(3))),
        (
            "running_mean",
            lambda: structops.native_batch_norm(
                meta(4, 3), None, None, torch.ones(3), meta(3), False, 0.1, 1e-5
            ),
        ),
        (
            "weight",
            lambda: structops.cross_entropy_loss(meta(4, 3), meta(4, dtype=torch.long), torch.ones(3)),
        ),
        (
            "per_sample_weights",
            lambda: structops.embedding_bag(
                meta(5, 3),
                meta(2, dtype=torch.long),
                meta(1, dtype=torch.long),
                per_sample_weights=torch.ones(2),
            ),
        ),
        ("tensors", lambda: structops.cat([meta(2), torch.ones(2)])),
    ],
)
def test_every_tensor_argument_is_device_checked(name, call):
    """Tensor? and Tensor[] arguments too: a tensor of another device never reaches a kernel (on
    CUDA it would be read as device memory)."""
    with pytest.raises(RuntimeError, match=rf"expected all tensors on meta, but '{name}' is on cpu"):
        call()


def test_cpu_scalars_are_taken_by_pointwise_ops_only():
    """A 0-dim CPU tensor stands for a scalar in pointwise ops (TensorIterator), as in torch; other
    ops (index_select here, on meta tensors) reject it rather than read it as device memory."""
    x = torch.ones(3, device="meta")
    assert structops.add(x, torch.tensor(2.0)).device.type == "meta"
    assert structops.add(torch.tensor(2.0), x).device.type == "meta"  # the device is not the first tensor's
    with pytest.raises(RuntimeError, match=r"'index' is on cpu \(only pointwise ops take a 0-dim CPU tensor"):
        structops.index_select(x, 0, torch.tensor(0))


def test_out_partially_overlapping_an_input_raises():
    x = torch.arange(10.0)
    with pytest.raises(
        RuntimeError,
        match="unsupported operation: some elements of the input tensor and the "
        "written-to tensor refer to a single memory location",
    ):
        structops.add(x[:5], x[:5], out=x[2:7])


def test_out_fully_overlapping_an_input_is_allowed_for_pointwise():
    a, b = ab()
    expected = torch.add(a, b)
    assert structops.add(a, b, out=a) is a
    assert torch.equal(a, expected)


def test_out_fully_overlapping_the_input_of_a_reduction_raises():
    x = torch.ones(3, 1)
    with pytest.raises(RuntimeError, match="unsupported operation"):
        structops.sum(x, [1], True, out=x)


def test_out_with_internal_overlap_raises():
    a, b = ab()
    with pytest.raises(
        RuntimeError,
        match="unsupported operation: more than one element of the written-to "
        "tensor refers to a single memory location",
    ):
        structops.add(a, b, out=torch.empty(1, 3).expand(2, 3))


def test_out_requiring_grad_raises():
    a, b = ab()
    with pytest.raises(
        RuntimeError,
        match=r"add.out: the out=... arguments don't support automatic "
        r"differentiation, but one of the arguments requires grad",
    ):
        structops.add(a, b, out=torch.empty(2, 3, requires_grad=True))


def test_out_prefilled_with_nan_is_fully_overwritten():
    a, b = ab()
    out = torch.full((2, 3), float("nan"))
    structops.add(a, b, out=out)
    assert torch.equal(out, torch.add(a, b))
    ints = torch.arange(24).reshape(2, 3, 4)
    iout = torch.full((2, 4), torch.iinfo(torch.int64).max)
    structops.sum(ints, [1], out=iout)
    assert torch.equal(iout, torch.sum(ints, [1]))


def test_correctly_sized_noncontiguous_out_keeps_strides_and_storage():
    a, b = ab()
    out = torch.empty(3, 2).t()
    strides, ptr = out.stride(), out.data_ptr()
    structops.add(a, b, out=out)
    assert (out.stride(), out.data_ptr()) == (strides, ptr)
    assert torch.equal(out, torch.add(a, b))


def test_resized_out_takes_the_meta_layout():
    a = torch.randn(4, 3).t()  # transposed input: torch gives a transposed result
    out = torch.empty(0)
    structops.neg(a, out=out)
    assert out.stride() == torch.neg(a).stride()


# --- inplace -----------------------------------------------------------------------------------


def test_inplace_matches_torch_and_keeps_storage():
    a, b = ab()
    expected = a.clone().add_(b, alpha=3)
    ptr = a.data_ptr()
    assert structops.add_(a, b, alpha=3) is a
    assert a.data_ptr() == ptr
    assert torch.equal(a, expected)


def test_inplace_on_noncontiguous_self():
    base = torch.randn(4, 6)
    view = base[:, ::2]
    expected = view.clone().mul_(2.5 * torch.ones(3))
    structops.mul_(view, 2.5 * torch.ones(3))
    assert torch.equal(view, expected)


def test_inplace_broadcast_changing_shape_raises():
    with pytest.raises(
        RuntimeError,
        match=r"add_.Tensor: output with shape \[3\] doesn't match the broadcast "
        r"shape \[2, 3\]",
    ):
        structops.add_(torch.ones(3), torch.ones(2, 3))


def test_inplace_non_castable_result_raises():
    with pytest.raises(
        RuntimeError,
        match=r"add_.Tensor: result type Float can't be cast to the desired output "
        r"type Long",
    ):
        structops.add_(torch.ones(3, dtype=torch.int64), torch.ones(3))


def test_inplace_int8_with_large_scalar_tensor_wraps_like_torch():
    a = torch.tensor([100, 120], dtype=torch.int8)
    expected = a.clone().add_(torch.tensor(1000))
    structops.add_(a, torch.tensor(1000))
    assert torch.equal(a, expected)


def test_inplace_on_meta_checks_too():
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        structops.mul_(torch.ones(3, device="meta"), torch.ones(2, 3, device="meta"))


def test_inplace_partial_self_overlap_raises():
    x = torch.arange(10.0)
    with pytest.raises(RuntimeError, match="unsupported operation"):
        structops.add_(x[1:], x[:-1])


# --- opcheck and torch.compile --------------------------------------------------------------------


def samples():
    return _structured_samples() + pointwise_samples() + composite_samples()


def _structured_samples():
    a, b = ab()
    ints = torch.arange(12).reshape(3, 4)
    return [
        ("add.Tensor", (a, b), {"alpha": 2}),
        ("add_.Tensor", (a.clone(), b), {}),
        ("add.out", (a, b), {"out": torch.empty(2, 3)}),
        ("mul.Tensor", (a.t(), torch.randn(3, 1)), {}),
        ("mul_.Tensor", (a.clone(), b), {}),
        ("mul.out", (ints, b[:1]), {"out": torch.empty(0)}),
        ("neg.default", (a,), {}),
        ("neg_.default", (a.clone(),), {}),
        ("neg.out", (ints,), {"out": torch.empty(3, 4, dtype=torch.int64)}),
        ("sum.dim_IntList", (a, [1], True), {}),
        ("sum.dim_IntList", (ints, None), {"dtype": torch.float64}),
        ("sum.IntList_out", (a, [0]), {"out": torch.empty(3)}),
        ("mean.dim", (a, [0, 1], True), {}),
        ("mean.out", (ints, None), {"dtype": torch.float64, "out": torch.empty((), dtype=torch.float64)}),
        ("amax.default", (a, [1]), {}),
        ("amax.out", (ints, [0], True), {"out": torch.empty(1, 3, dtype=ints.dtype)}),
        ("amin.default", (a,), {}),
        ("amin.out", (a, [-1]), {"out": torch.empty(2)}),
        ("matmul.default", (a, b.t()), {}),
        ("matmul.out", (torch.randn(2, 3, 4), torch.randn(4)), {"out": torch.empty(0)}),
        ("bmm.default", (torch.randn(2, 3, 4), torch.randn(2, 4, 5)), {}),
        ("bmm.out", (torch.randn(2, 3, 4), torch.randn(2, 4, 5)), {"out": torch.empty(2, 3, 5)}),
        ("cat.default", ([a, a], 1), {}),
        ("cat.out", ([a, ints[:, :3].float()],), {"out": torch.empty(5, 3)}),
        ("stack.default", ([a, a.t().t()], -1), {}),
        ("stack.out", ([a, a.clone()],), {"out": torch.empty(2, 2, 3)}),
        ("embedding.default", (a, torch.tensor([[1, 0], [1, 1]])), {}),
        ("embedding.out", (ints.float(), torch.tensor([2])), {"out": torch.empty(1, 4)}),
        ("prod.dims", (a, [1]), {}),
        ("prod.dims_out", (ints, None), {"out": torch.empty((), dtype=torch.int64)}),
        ("all.dims", (ints, [0]), {}),
        ("all.dims_out", (a > 0,), {"out": torch.empty(0, dtype=torch.bool)}),
        ("any.dims", (a, []), {}),
        ("any.dims_out", (ints, [1], True), {"out": torch.empty(3, 1, dtype=torch.bool)}),
        ("argmax.default", (a, 1), {}),
        ("argmax.out", (ints,), {"out": torch.empty((), dtype=torch.int64)}),
        ("argmin.default", (a.t(),), {}),
        ("argmin.out", (a, 0, True), {"out": torch.empty(0, dtype=torch.int64)}),
        ("var.correction", (a, [1]), {"correction": 0}),
        ("var.correction_out", (a,), {"out": torch.empty(())}),
        ("std.correction", (a, None), {"keepdim": True}),
        ("std.correction_out", (a, [0]), {"correction": 0, "out": torch.empty(3)}),
        ("logsumexp.default", (a, [1]), {}),
        ("logsumexp.out", (ints, [0, 1]), {"out": torch.empty(())}),
        ("norm.ScalarOpt_dim", (a, 3, [1]), {}),
        ("norm.out", (a, None, [0], True), {"out": torch.empty(1, 3)}),
        ("cumsum.default", (a, 1), {}),
        ("cumsum.out", (ints, 0), {"out": torch.empty(0, dtype=torch.int64)}),
        ("cumsum_.default", (a.clone(), -1), {}),
        (
            "batch_norm.default",
            (torch.randn(4, 3, 2), torch.randn(3), None, torch.zeros(3), torch.ones(3), True, 0.1, 1e-5),
            {},
        ),
        (
            "batch_norm.out",
            (torch.randn(4, 3), None, None, torch.zeros(3), torch.ones(3), False, 0.1, 1e-5),
            {"out": torch.empty(0), "save_mean": torch.empty(0), "save_invstd": torch.empty(0)},
        ),
        ("cdist.default", (torch.randn(2, 4, 3), torch.randn(5, 3)), {}),
        ("cdist.out", (a, torch.randn(4, 3), 1.0), {"out": torch.empty(0)}),
        (
            "cross_entropy_loss.default",
            (torch.randn(4, 5), torch.tensor([0, 4, -100, 2])),
            {"label_smoothing": 0.1},
        ),
        (
            "cross_entropy_loss.out",
            (torch.randn(4, 5), torch.softmax(torch.randn(4, 5), 1), None, 0),
            {"out": torch.empty(0)},
        ),
        ("index_select.default", (a, 1, torch.tensor([2, 0])), {}),
        ("index_select.out", (ints, 0, torch.tensor([2, 2])), {"out": torch.empty(0, dtype=torch.int64)}),
        ("gather.default", (a, 1, torch.tensor([[2, 0], [1, 1]])), {}),
        ("gather.out", (ints, 0, torch.tensor([[2, 0, 1, 0]])), {"out": torch.empty(0, dtype=torch.int64)}),
        ("take.default", (a.t(), torch.tensor([[5, -1]])), {}),
        ("take.out", (ints, torch.tensor([11, 0])), {"out": torch.empty(0, dtype=torch.int64)}),
        ("masked_select.default", (a, a > 0), {}),
        ("masked_select.out", (a, torch.tensor([True, False, True])), {"out": torch.empty(0)}),
        (
            "embedding_bag.default",
            (torch.randn(5, 3), torch.tensor([1, 4, 0]), torch.tensor([0, 2]), False, 1),
            {},
        ),
        (
            "embedding_bag.out",
            (torch.randn(5, 3), torch.tensor([1, 4, 0]), torch.tensor([0, 1])),
            {"out": torch.empty(0)},
        ),
        ("split_with_sizes_copy.default", (ints, [1, 3], 1), {}),
        (
            "split_with_sizes_copy.out",
            (ints, [2, 1]),
            {"out": [torch.empty(0, dtype=torch.int64), torch.empty(0, dtype=torch.int64)]},
        ),
        ("softmax.int", (a, 0), {}),
        ("softmax.int_out", (a, -1), {"dtype": torch.float64, "out": torch.empty(2, 3, dtype=torch.float64)}),
        ("log_softmax.int", (a.t(), 1), {}),
        ("log_softmax.int_out", (a, 1), {"out": torch.empty(0)}),
        ("layer_norm.default", (torch.randn(2, 3, 4), [3, 4], torch.randn(3, 4), None), {}),
        (
            "layer_norm.out",
            (a, [3], None, torch.randn(3)),
            {"out": torch.empty(0), "mean": torch.empty(0), "rstd": torch.empty(2, 1)},
        ),
        ("mm.default", (a, torch.randn(3, 4)), {}),
        ("mm.out", (a.t().contiguous().t(), torch.randn(3, 40)), {"out": torch.empty(0)}),
        ("addmm.default", (torch.randn(4), a, torch.randn(3, 4)), {"beta": 0.5, "alpha": 2}),
        ("addmm.out", (torch.randn(2, 1), a, torch.randn(3, 4)), {"out": torch.empty(0)}),
        ("addmm_.default", (torch.randn(2, 4), a, torch.randn(3, 4)), {"beta": 0}),
        ("linear.default", (torch.randn(2, 5, 3), torch.randn(4, 3), torch.randn(4)), {}),
        ("linear.out", (a, torch.randn(4, 3)), {"out": torch.empty(0)}),
        ("max_pool2d_with_indices.default", (torch.randn(2, 3, 6, 7), [3, 2], [2], [1, 0]), {}),
        (
            "max_pool2d_with_indices.out",
            (torch.randn(3, 6, 7), [2]),
            {"out": torch.empty(0), "indices": torch.empty(0, dtype=torch.int64)},
        ),
        ("avg_pool2d.default", (torch.randn(2, 3, 6, 7), [3, 3], [2, 2], [1, 1], True, False), {}),
        ("avg_pool2d.out", (torch.randn(3, 6, 7), [2]), {"divisor_override": 3, "out": torch.empty(0)}),
        ("max_pool3d_with_indices.default", (torch.randn(2, 2, 5, 6, 7), [2, 3, 2]), {}),
        (
            "max_pool3d_with_indices.out",
            (torch.randn(2, 5, 6, 7), [2], [1], [1]),
            {"out": torch.empty(0), "indices": torch.empty(0, dtype=torch.int64)},
        ),
        ("mse_loss.default", (a, torch.randn(3)), {}),
        ("mse_loss.out", (a, torch.randn(2, 3), 0), {"out": torch.empty(0)}),
        ("binary_cross_entropy.default", (torch.rand(2, 3), torch.rand(2, 3), torch.rand(3)), {}),
        ("binary_cross_entropy.out", (torch.rand(2, 3), torch.rand(2, 3), None, 0), {"out": torch.empty(0)}),
    ]


# Overloads that are calls of others (`composite:` in the manifest): the suite's specs are the
# structured ops', so their samples are here.
def composite_samples():
    x = torch.rand(2, 3) + 0.5
    b = x > 1
    result = [
        ("sum.default", (x,), {"dtype": torch.float64}),
        ("mean.default", (x,), {}),
        ("mean.dtype_out", (x,), {"out": torch.empty(0)}),
        ("prod.default", (x,), {}),
        ("prod.dim_int", (x, 1), {"keepdim": True}),
        ("prod.int_out", (x, 1), {"out": torch.empty(0)}),
        ("norm.Scalar", (x, 3), {}),
        ("norm.Scalar_out", (x, 3), {"out": torch.empty(0)}),
        ("sum.out", (x,), {"out": torch.empty(0)}),
        ("prod.out", (x,), {"dtype": torch.float64, "out": torch.empty(0, dtype=torch.float64)}),
        ("where.Scalar", (b, 1, 2.5), {}),
        ("clamp.Tensor", (x, x[0] - 0.2, x[:, :1] + 0.1), {}),
        ("clamp.Tensor", (x,), {"max": x[0]}),
        ("clamp.Tensor_out", (x, x[0]), {"out": torch.empty(0)}),
        ("clamp_.Tensor", (x.clone(), None, x[0]), {}),
    ]
    for name in ("all", "any"):
        result += [
            (f"{name}.default", (b,), {}),
            (f"{name}.dim", (b, 1), {}),
            (f"{name}.out", (b, 0), {"out": torch.empty(0, dtype=torch.bool)}),
            (f"{name}.all_out", (b,), {"out": torch.empty(0, dtype=torch.bool)}),
        ]
    for name in ("var", "std"):
        result += [
            (f"{name}.default", (x, False), {}),
            (f"{name}.dim", (x, [1], True, True), {}),
            (f"{name}.out", (x, [0], False), {"out": torch.empty(0)}),
        ]
    return result


# Formula ops: (functional, inplace or None, out overload) -> arguments of the functional.
def pointwise_samples():
    x, y = torch.rand(2, 3) + 0.5, torch.rand(3) + 0.5
    i, j = torch.arange(6).reshape(2, 3), torch.tensor([1, 2, 3])
    unary = [
        "exp",
        "log",
        "log1p",
        "sqrt",
        "rsqrt",
        "sin",
        "cos",
        "tanh",
        "sigmoid",
        "erf",
        "abs",
        "relu",
        "silu",
    ]
    table = [((f"{n}.default", f"{n}_.default", f"{n}.out"), (x.t(),), {}) for n in unary]
    table += [
        (("gelu.default", "gelu_.default", "gelu.out"), (x,), {"approximate": "tanh"}),
        (("sub.Tensor", "sub_.Tensor", "sub.out"), (x, y), {"alpha": 2}),
        (("div.Tensor", "div_.Tensor", "div.out"), (x, y), {}),
        (("div.Tensor_mode", "div_.Tensor_mode", "div.out_mode"), (i, j), {"rounding_mode": "floor"}),
        (("pow.Tensor_Tensor", "pow_.Tensor", "pow.Tensor_Tensor_out"), (x, y), {}),
        (("pow.Tensor_Scalar", "pow_.Scalar", "pow.Tensor_Scalar_out"), (x, 2.5), {}),
        (("maximum.default", None, "maximum.out"), (x, y), {}),
        (("minimum.default", None, "minimum.out"), (i, j), {}),
        (("clamp.default", "clamp_.default", "clamp.out"), (x, 0.7), {"max": 1.2}),
        (("where.self", None, "where.self_out"), (x > 1, x, y), {}),
        (("lerp.Tensor", "lerp_.Tensor", "lerp.Tensor_out"), (x, y.expand(2, 3), torch.rand(2, 3)), {}),
        (("lerp.Scalar", "lerp_.Scalar", "lerp.Scalar_out"), (x, y.expand(2, 3), 0.25), {}),
        (("addcmul.default", "addcmul_.default", "addcmul.out"), (x, y, x), {"value": 3}),
        (("add_relu.default", "add_relu_.default", "add_relu.out"), (x, -y), {"alpha": 2}),
        (("bias_gelu.default", None, "bias_gelu.out"), (x, y), {}),
        (("mul_add.default", None, "mul_add.out"), (x, y, x), {}),
        (("bitwise_and.Tensor", "bitwise_and_.Tensor", "bitwise_and.Tensor_out"), (i, j), {}),
        (("logical_not.default", "logical_not_.default", "logical_not.out"), (i,), {}),
    ]
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        table.append(((f"{name}.Tensor", f"{name}_.Tensor", f"{name}.Tensor_out"), (x, y), {}))
    for name in ("logical_and", "logical_or"):
        table.append(((f"{name}.default", f"{name}_.default", f"{name}.out"), (i, x), {}))
    result = []
    for (functional, inplace, out), args, kwargs in table:
        packet, overload = functional.split(".")
        expected = getattr(getattr(torch.ops.structops, packet), overload)(*args, **kwargs)
        result.append((functional, args, kwargs))
        if inplace is not None:
            result.append((inplace, (args[0].clone().to(expected.dtype),) + args[1:], kwargs))
        result.append((out, args, {**kwargs, "out": torch.empty(0, dtype=expected.dtype)}))
    return result


@pytest.mark.parametrize("name, args, kwargs", samples(), ids=lambda x: x if isinstance(x, str) else "")
def test_opcheck(name, args, kwargs):
    packet, overload = name.split(".")
    op = getattr(getattr(torch.ops.structops, packet), overload)
    result = opcheck(op, args, kwargs)
    assert set(result.values()) == {"SUCCESS"}, result


def test_every_overload_is_opchecked():
    """By the conformance suite (check_opcheck: each structured op's functional, out= and
    inplace overloads, on generated samples) or by a sample here (what the suite does not
    reach: ops without a functional overload, and cases worth their own sample). A new op
    added as the README says needs nothing here."""
    covered = {name for name, _, _ in samples()}
    for spec in load_specs():
        names = (spec.functional, spec.out, spec.inplace)
        covered |= {n if "." in n else f"{n}.default" for n in names if n}
    registered = {  # every operator the library registers (a Python name may differ: python_name)
        n.removeprefix("structops::") if "." in n else n.removeprefix("structops::") + ".default"
        for n in torch._C._dispatch_get_all_op_names()
        if n.startswith("structops::")
    }
    assert registered <= covered, f"never opchecked: {sorted(registered - covered)}"


# out= overloads whose out is also an input and would have to grow: (overload, torch function,
# arguments given the aliased tensor). torch raises; resizing first would make the kernel read the
# resized (uninitialised or stale) input.
ALIASED_GROWING_OUT = [
    ("add.out", torch.add, lambda a, big: (a, big)),
    ("sub.out", torch.sub, lambda a, big: (big, a)),
    ("mul.out", torch.mul, lambda a, big: (a, big)),
    ("div.out", torch.div, lambda a, big: (big, a)),
    ("eq.Tensor_out", torch.eq, lambda a, big: (a, big)),
    ("lt.Tensor_out", torch.lt, lambda a, big: (big, a)),
    ("minimum.out", torch.minimum, lambda a, big: (a, big)),
    ("maximum.out", torch.maximum, lambda a, big: (big, a)),
    ("logical_or.out", torch.logical_or, lambda a, big: (a, big)),
    ("addcmul.out", torch.addcmul, lambda a, big: (a, big, big)),
    ("where.self_out", torch.where, lambda a, big: (big > 2, a, big)),
]


@pytest.mark.parametrize(
    "name, reference, make_args", ALIASED_GROWING_OUT, ids=[c[0] for c in ALIASED_GROWING_OUT]
)
@pytest.mark.parametrize("shape", [(), (1, 3)], ids=["0-dim", "1x3"])
def test_out_that_is_an_input_and_must_grow_raises_as_torch(name, reference, make_args, shape):
    packet, overload = name.split(".")
    op = getattr(getattr(torch.ops.structops, packet), overload)
    big = torch.arange(6.0).reshape(2, 3)
    for call in (lambda a: reference(*make_args(a, big), out=a), lambda a: op(*make_args(a, big), out=a)):
        a = torch.full(shape, 3.0)
        with pytest.raises(
            RuntimeError, match=r"output with shape \[(1, 3)?\] doesn't match the broadcast shape \[2, 3\]"
        ):
            call(a)
        assert a.shape == shape and bool((a == 3.0).all())  # left as it was
