"""The foundation's ops against torch: values, dtypes, shapes and strides, on real and meta tensors."""

import math
import re

import pytest
import torch

import structops

DTYPES = [torch.float32, torch.float64, torch.int64]


def make(shape, dtype, *, layout="contiguous", low=-5, high=5, seed=0):
    """A tensor of ``shape`` laid out as asked: contiguous, transposed, strided or expanded."""
    g = torch.Generator().manual_seed(seed)

    def rand(s):
        if dtype.is_floating_point:
            return torch.rand(s, generator=g, dtype=dtype) * (high - low) + low
        if dtype == torch.bool:
            return torch.randint(0, 2, s, generator=g).bool()
        return torch.randint(low, high, s, generator=g, dtype=dtype)

    if layout == "contiguous" or len(shape) == 0:
        return rand(shape)
    if layout == "transposed":
        return rand(shape[::-1]).permute(*reversed(range(len(shape))))
    if layout == "strided":  # every other element of the last dim
        return rand((*shape[:-1], shape[-1] * 2))[..., ::2]
    if layout == "expanded":  # broadcast along the first dim
        return rand((1, *shape[1:])).expand(shape)
    if layout == "channels_last":
        return rand(shape).to(memory_format=torch.channels_last)
    raise ValueError(layout)


BINARY_SHAPES = [
    ((2, 3), (2, 3)),
    ((2, 3), (3,)),
    ((4, 1, 3), (2, 1)),
    ((), (2, 3)),
    ((2, 3), ()),
    ((0, 3), (3,)),
    ((2, 0), (1, 0)),
    ((5, 7, 9), (5, 7, 9)),
]
LAYOUTS = ["contiguous", "transposed", "strided", "expanded"]

BINARY = {
    "add": (structops.add, torch.add, {}),
    "add_alpha": (structops.add, torch.add, {"alpha": 3}),
    "mul": (structops.mul, torch.mul, {}),
}


def assert_same(actual, expected):
    """Values, dtype, shape and strides equal to torch's result."""
    assert actual.dtype == expected.dtype
    assert actual.shape == expected.shape
    torch.testing.assert_close(actual, expected)
    if actual.numel() > 1:
        assert actual.stride() == expected.stride()


def assert_meta_matches(fn, args, kwargs, real):
    meta_args = [a.to("meta") if isinstance(a, torch.Tensor) else a for a in args]
    m = fn(*meta_args, **kwargs)
    assert m.device.type == "meta"
    assert (m.shape, m.dtype) == (real.shape, real.dtype)
    if real.numel() > 1:
        assert m.stride() == real.stride()


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shapes", BINARY_SHAPES, ids=str)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_binary_matches_torch(op, dtype, shapes, layout):
    fn, ref, kwargs = BINARY[op]
    a = make(shapes[0], dtype, layout=layout, seed=1)
    b = make(shapes[1], dtype, seed=2)
    expected = ref(a, b, **kwargs)
    actual = fn(a, b, **kwargs)
    assert_same(actual, expected)
    assert_meta_matches(fn, (a, b), kwargs, actual)


@pytest.mark.parametrize("op", sorted(BINARY))
@pytest.mark.parametrize(
    "dtypes",
    [
        (torch.int64, torch.float32),
        (torch.float32, torch.float64),
        (torch.bool, torch.int64),
        (torch.int8, torch.int64),
    ],
    ids=str,
)
def test_binary_type_promotion(op, dtypes):
    fn, ref, kwargs = BINARY[op]
    a = make((3, 4), dtypes[0], seed=3)
    b = make((4,), dtypes[1], seed=4)
    assert_same(fn(a, b, **kwargs), ref(a, b, **kwargs))
    # A 0-dim tensor of the same kind does not promote: int8 + tensor(1000) stays int8.
    s = torch.tensor(1000, dtype=dtypes[1])
    assert_same(fn(a, s, **kwargs), ref(a, s, **kwargs))


def test_channels_last_in_gives_channels_last_out():
    a = make((2, 3, 4, 5), torch.float32, layout="channels_last")
    b = make((2, 3, 4, 5), torch.float32, layout="channels_last", seed=5)
    out = structops.add(a, b)
    assert out.is_contiguous(memory_format=torch.channels_last)
    assert_same(out, torch.add(a, b))
    bias = make((3, 1, 1), torch.float32)
    assert_same(structops.mul(a, bias), torch.mul(a, bias))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(), (0,), (3, 4), (2, 3, 4)], ids=str)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_neg_matches_torch(dtype, shape, layout):
    a = make(shape, dtype, layout=layout)
    out = structops.neg(a)
    assert_same(out, torch.neg(a))
    assert_meta_matches(structops.neg, (a,), {}, out)


def test_neg_of_bool_raises():
    expected = (
        "neg: 'self' has dtype Bool, which neg does not support (supported: float16, bfloat16, float32, "
        "float64, complex64, complex128, uint8, int8, int16, int32, int64)"
    )
    with pytest.raises(RuntimeError, match=re.escape(expected)):
        structops.neg(torch.ones(2, dtype=torch.bool))


SUM_ARGS = [
    ((2, 3, 4), None, False),
    ((2, 3, 4), [], False),
    ((2, 3, 4), [0], False),
    ((2, 3, 4), [-1], True),
    ((2, 3, 4), [0, 2], False),
    ((2, 3, 4), [2, 0], True),
    ((5, 0, 3), [1], False),
    ((5, 0, 3), [0], True),
    ((), [0], False),
    ((), None, True),
    ((7,), [0], False),
]


@pytest.mark.parametrize("dtype", DTYPES + [torch.bool, torch.int32], ids=str)
@pytest.mark.parametrize("shape, dim, keepdim", SUM_ARGS, ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "strided"])
def test_sum_matches_torch(dtype, shape, dim, keepdim, layout):
    a = make(shape, dtype, layout=layout)
    out = structops.sum(a, dim, keepdim)
    assert_same(out, torch.sum(a, dim, keepdim))
    assert_meta_matches(structops.sum, (a, dim, keepdim), {}, out)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.int32], ids=str)
def test_sum_dtype_argument(dtype):
    a = make((3, 4), torch.int64)
    assert_same(structops.sum(a, [1], dtype=dtype), torch.sum(a, [1], dtype=dtype))


def test_sum_large_float_accuracy():
    a = torch.rand(1000, 4099, dtype=torch.float32)
    torch.testing.assert_close(structops.sum(a, [1]), torch.sum(a.double(), [1]).float())
    torch.testing.assert_close(structops.sum(a, [0]), torch.sum(a.double(), [0]).float())


@pytest.mark.parametrize(
    "dim, error, message",
    [
        ([0, 0], RuntimeError, r"sum: dim 0 appears multiple times in the list of dims"),
        ([1, -1], RuntimeError, r"sum: dim 1 appears multiple times in the list of dims"),
        # IndexError, as torch.sum raises for a bad dim.
        (
            [3],
            IndexError,
            r"sum: dim 3 is out of range for 'self' with 2 dims \(expected to be in range of \[-2, 1\]\)",
        ),
    ],
)
def test_sum_bad_dims(dim, error, message):
    with pytest.raises(error, match=message):
        structops.sum(torch.ones(2, 3), dim)
    with pytest.raises(error, match=message):
        structops.sum(torch.ones(2, 3, device="meta"), dim)


def test_broadcast_error_names_arguments():
    with pytest.raises(
        RuntimeError,
        match=r"add: the size of 'other' \(4\) must match the size of 'self' \(3\) "
        r"at non-singleton dimension -1",
    ):
        structops.add(torch.ones(2, 3), torch.ones(4))
    with pytest.raises(RuntimeError, match=r"mul: the size of 'other' \(4\)"):
        structops.mul(torch.ones(2, 3, device="meta"), torch.ones(4, device="meta"))


@pytest.mark.parametrize(
    "alpha, message",
    [
        (1.5, r"add: for integral inputs alpha must not be a floating point number, got alpha=1.5"),
        (True, r"add: a boolean alpha is only supported for bool results"),
    ],
)
def test_add_alpha_rules(alpha, message):
    with pytest.raises(RuntimeError, match=message):
        structops.add(torch.ones(2, dtype=torch.int64), torch.ones(2, dtype=torch.int64), alpha=alpha)


def test_cpu_scalar_tensor_mixes_with_meta():
    a = torch.ones(2, 3, device="meta")
    assert structops.add(a, torch.tensor(2.0)).device.type == "meta"


def test_torch_ops_namespace():
    a, b = torch.ones(2), torch.full((2,), 2.0)
    assert torch.equal(torch.ops.structops.add.Tensor(a, b, alpha=2), torch.full((2,), 5.0))
    out = torch.empty(2)
    assert torch.ops.structops.add.out(a, b, out=out) is out
    assert torch.equal(out, torch.full((2,), 3.0))


# --- pointwise formulas: what the generated conformance suite cannot state -----------------------


@pytest.mark.parametrize("mode", ["trunc", "floor"])
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8])
def test_integer_division_by_zero_raises_like_torch(mode, dtype):
    a, b = torch.ones(70000, dtype=dtype), torch.ones(70000, dtype=dtype)
    b[-3] = 0  # one zero deep in a multithreaded range
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        torch.div(a, b, rounding_mode=mode)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        structops.div(a, b, rounding_mode=mode)
    # ...and the error does not leak into the next call on this thread.
    assert torch.equal(structops.div(a, a, rounding_mode=mode), torch.div(a, a, rounding_mode=mode))


def test_floor_division_of_floats_matches_torch_at_rounding_edges():
    a = torch.tensor([-7.0, 7.0, -0.0, 5.0, 1e30, -1e-30, 0.3, 1.0])
    b = torch.tensor([2.0, -2.0, 3.0, 0.0, 3.0, 7.0, 0.1, float("inf")])
    torch.testing.assert_close(
        structops.div(a, b, rounding_mode="floor"), torch.div(a, b, rounding_mode="floor"), equal_nan=True
    )


def test_formula_result_for_half_is_computed_in_float():
    x = torch.full((4,), 2049.0, dtype=torch.float16)  # 2049 is not a float16: rounds to 2048
    y = torch.ones(4, dtype=torch.float16)
    # (x*1 + 1) in float is 2049 -> rounds once at the end: 2048; torch's unfused chain agrees here,
    # but mul_add must not round its intermediate product to half.
    torch.testing.assert_close(structops.mul_add(x, y, y), (x.float() * y.float() + y.float()).half())


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128, torch.float32, torch.int64])
def test_pow_scalar_zero_is_one_as_torch(dtype):
    """x ** 0 == 1 for every x (complex 0 ** 0 through exp(log 0) would be NaN); a tensor
    exponent keeps torch's complex NaN."""
    x = torch.tensor([0, 1, -2, 3], dtype=dtype)
    if dtype.is_floating_point or dtype.is_complex:
        x = torch.cat([x, torch.tensor([float("nan"), float("inf")], dtype=dtype)])
    for exponent in (0, 0.0, False):
        expected = torch.pow(x, exponent)
        torch.testing.assert_close(structops.pow(x, exponent), expected, equal_nan=True)
        if expected.dtype == dtype:  # else torch's pow_ refuses the cast, as ours does
            y = x.clone()
            structops.pow_(y, exponent)
            torch.testing.assert_close(y, expected, equal_nan=True)
    zeros = torch.zeros(2, dtype=dtype)
    torch.testing.assert_close(structops.pow(zeros, zeros), torch.pow(zeros, zeros), equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.uint16, torch.uint32, torch.uint64])
def test_wide_unsigned_inputs_are_computed_or_rejected_by_name(dtype):
    """torch has few kernels for uint16/32/64; a structops op computes them as torch does or says
    it has no kernel for the dtype, never an internal assert."""
    x = torch.arange(3).to(dtype)
    for name, call in (
        ("sin", lambda: structops.sin(x)),
        ("mul", lambda: structops.mul(x, x)),
        ("add", lambda: structops.add(x, x)),
        ("sum", lambda: structops.sum(x, [0])),
    ):
        try:
            call()
        except RuntimeError as e:
            assert "INTERNAL ASSERT" not in str(e) and str(dtype).split(".")[1].replace(
                "uint", "UInt"
            ) in str(e), (name, e)


def test_a_packet_tries_the_out_overloads_last():
    """torch.ops.structops.add(x, y) tries the overloads in registration order and pays for each
    schema that does not match: out= overloads come after the others, as aten's."""
    for name in dir(torch.ops.structops):
        packet = getattr(torch.ops.structops, name)
        if not isinstance(packet, torch._ops.OpOverloadPacket):
            continue
        kinds = [
            any(
                a.kwarg_only and a.alias_info is not None and a.alias_info.is_write
                for a in o._schema.arguments
            )
            for o in (getattr(packet, n) for n in packet.overloads())
        ]
        assert kinds == sorted(kinds), f"{name}: {packet.overloads()}"
    x = torch.ones(3)
    assert torch.equal(torch.ops.structops.add(x, x), x + x)


def test_a_pick_with_a_list_is_cached_by_its_elements_types():
    """structops.sum(x, [0]) caches its overload per the list's element types, so a list of
    floats after it is still refused as torch refuses it."""
    x = torch.randn(2, 3)
    assert torch.equal(structops.sum(x, [0]), x.sum([0]))
    assert torch.equal(structops.sum(x, [1]), x.sum([1]))
    with pytest.raises(
        TypeError, match=r"argument 'dim' \(position 2\) must be tuple of ints, not list of \[float\]"
    ):
        structops.sum(x, [0.5])
    assert torch.equal(structops.cat([x, x]), torch.cat([x, x]))


def test_the_common_call_keeps_what_the_general_path_does():
    """The resolved call still warns on an out= resize (the warnings bridge), leaves tensor
    subclasses (Parameter) and numbers to the general path, and gives the same values."""
    a, b, out = torch.randn(2, 3), torch.randn(2, 3), torch.empty(3)
    with pytest.warns(UserWarning, match="was resized"):
        structops.add(a, b, out=out)
    assert torch.equal(out, a + b)
    w = torch.nn.Parameter(torch.randn(2, 3))
    assert torch.equal(structops.mul(w, b), w * b)
    assert torch.equal(structops.add(a, 2), a + 2)
    assert torch.equal(structops.add(a, b, out=None), a + b)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_gelu_is_as_accurate_as_torch(dtype):
    """gelu's Phi is a rational fit of erf for float on the CPU (pointwise/math.h normcdf): over
    [-8, 8] it stays within torch's own CPU gelu error (oneDNN's, 1.3e-6) of the float64 value,
    and float64 takes erfc, exact to rounding. Both approximate modes and NaN as torch."""
    x = torch.linspace(-8, 8, 1_000_001, dtype=torch.float64)
    exact = torch.nn.functional.gelu(x)
    bound = 1.3e-6 if dtype == torch.float32 else 1e-15
    for ours in (structops.gelu(x.to(dtype)), structops.bias_gelu(x.to(dtype), torch.zeros((), dtype=dtype))):
        assert (ours.double() - exact).abs().max().item() <= bound
    tanh = torch.nn.functional.gelu(x.to(dtype), approximate="tanh")
    torch.testing.assert_close(structops.gelu(x.to(dtype), approximate="tanh"), tanh)
    special = torch.tensor([float("nan"), 0.0, -0.0, 3.9, -3.9], dtype=dtype)
    torch.testing.assert_close(structops.gelu(special), torch.nn.functional.gelu(special), equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64])
def test_floor_division_of_floats_is_torchs_bit_for_bit(dtype):
    """div(rounding_mode="floor") of floats takes torch's steps with the remainder from double
    arithmetic (pointwise/math.h floor_div_float), not fmod: every bit pattern class (random
    bits, so NaN, infinities, subnormals and huge quotients; scaled normals; integers; zeros)
    gives torch's result bit for bit, NaN where torch's is NaN. bfloat16 computes in float and
    rounds once, as the float32 result: torch's own bfloat16 kernel rounds the quotient to
    bfloat16 before the floor (5.37e-12 // -5.38e-15, -997.6: torch -996, float -998 -> -1000)."""
    g = torch.Generator().manual_seed(0)
    n = 2_000_000
    bits = torch.randint(-(2**31), 2**31, (2, n), generator=g, dtype=torch.int64).to(torch.int32)
    scale = torch.exp2(torch.randint(-30, 30, (2, n), generator=g).float())
    normals = torch.randn(2, n, generator=g) * scale
    specials = torch.tensor(
        [0.0, -0.0, float("inf"), -float("inf"), float("nan"), 1.0, -3.0, 2.0**24, 2.0**26]
    )
    grid = torch.stack(torch.meshgrid(specials, specials, indexing="ij")).reshape(2, -1)
    for a, b in (bits.view(torch.float32), normals, normals.round(), grid):
        a, b = a.to(dtype), b.to(dtype)
        ours = structops.div(a, b, rounding_mode="floor")
        if dtype == torch.bfloat16:
            theirs = torch.div(a.float(), b.float(), rounding_mode="floor").to(dtype)
        else:
            theirs = torch.div(a, b, rounding_mode="floor")
        equal = (ours == theirs) & (torch.signbit(ours) == torch.signbit(theirs)) | (
            ours.isnan() & theirs.isnan()
        )
        assert bool(equal.all()), (a[~equal][:5], b[~equal][:5], ours[~equal][:5], theirs[~equal][:5])


@pytest.mark.parametrize("inner", [1, 3, 10, 15])
def test_short_strided_inner_dims_match_torch(inner):
    """A short innermost dim that an operand strides through is walked second (runtime/pointwise.cpp
    make_geometry): functional, out= into a transposed tensor and inplace, against torch."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(300, inner, generator=g).t()  # [inner, 300], strides (1, inner)
    y = torch.randn(inner, 600, generator=g)[:, ::2]
    torch.testing.assert_close(structops.mul(x, y), x * y)
    torch.testing.assert_close(structops.mul_add(x, y, x), x * y + x)
    out = torch.empty(300, inner).t()
    structops.add(x, y, alpha=2, out=out)
    torch.testing.assert_close(out, torch.add(x, y, alpha=2))
    z = x.clone()  # keeps x's strides
    structops.mul_(z, y)
    torch.testing.assert_close(z, x * y)


@pytest.mark.parametrize("length", [65536, 1000, 37])
@pytest.mark.parametrize("scale", [0.7, 3.0, 2.0**-100, 1e-38])
def test_bfloat16_results_round_as_torch(length, scale):
    """A float result stored as bfloat16 rounds to nearest even as torch's conversion does, on every
    bfloat16 input, denormal results (which vcvtneps2bf16 alone flushes to zero) and NaNs included;
    rows of 64-element blocks and of a partial block (runtime rows.h store_row)."""
    every = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16).view(torch.bfloat16)
    a = every[:: 2**16 // length][:length].contiguous()
    b = torch.full_like(a, scale)
    ours, theirs = structops.mul(a, b), (a.float() * b.float()).to(torch.bfloat16)
    nan = theirs.isnan()
    assert torch.equal(ours.isnan(), nan)
    assert torch.equal(ours[~nan].view(torch.int16), theirs[~nan].view(torch.int16))
    denormal = (theirs.abs() < torch.finfo(torch.bfloat16).tiny) & (theirs != 0)
    assert bool(denormal.any()) or length < 2**16  # the case the instruction alone gets wrong


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_where_moves_values_unchanged(dtype):
    """where(condition, self, other) computes in the storage dtype (Lowered.selects): every bit
    pattern comes through as torch's where gives it, NaN payloads included, which a round trip
    through float would make the canonical NaN."""
    bits = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16)
    a, b = bits.view(dtype), bits.flip(0).view(dtype)
    c = torch.arange(bits.numel()) % 3 == 0
    assert torch.equal(structops.where(c, a, b).view(torch.int16), torch.where(c, a, b).view(torch.int16))


@pytest.mark.parametrize("inner", [2, 3, 10, 15])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32, torch.complex64])
def test_blocks_of_short_rows_match_torch(inner, dtype):
    """Short rows whose output rows follow each other run as one contiguous run (rows.h
    block_of_short_rows): a broadcast row repeated, a sliced and a transposed input gathered, in
    chunks that end mid-tensor; functional, out= and inplace against torch. Complex keeps the row
    by row loop."""
    g = torch.Generator().manual_seed(inner)

    def make(*shape):
        return (torch.randn(*shape, generator=g) * 10).to(dtype)

    rows = 1001
    x = make(rows, inner)
    row = make(inner)
    sliced = make(rows, 2 * inner)[:, ::2]
    transposed = make(inner, rows).t()
    torch.testing.assert_close(structops.add(x, row), x + row)
    torch.testing.assert_close(structops.mul(sliced, row), sliced * row)
    torch.testing.assert_close(structops.sub(x, transposed), x - transposed)
    out = torch.empty(rows, inner, dtype=dtype)
    structops.mul(transposed, sliced, out=out)
    torch.testing.assert_close(out, transposed * sliced)
    z = x.clone()
    structops.add_(z, row)
    torch.testing.assert_close(z, x + row)
    if dtype.is_floating_point:  # computed in float, rounded once (as test_formula_result_for_half...)
        fused = (sliced.float() * row.float() + transposed.float()).to(dtype)
        torch.testing.assert_close(structops.mul_add(sliced, row, transposed), fused)


@pytest.mark.parametrize("out_layout", ["contiguous", "transposed", "sliced", "channels_last"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
def test_pointwise_out_is_written_in_its_own_layout(out_layout, dtype):
    """A generated pointwise kernel writes an out= of any strides directly, as TensorIterator does
    (structured.h OutputTarget any_strides): torch's values, the out's own strides and storage."""
    g = torch.Generator().manual_seed(1)
    shape = (6, 5, 7, 3)

    def make(*s):
        return (torch.randn(*s, generator=g) * 5).to(dtype)

    x = make(*reversed(shape)).permute(3, 2, 1, 0)  # every dim strided the other way
    y = make(shape[0], shape[1], shape[2], 2 * shape[3])[..., ::2]
    if out_layout == "contiguous":
        out = torch.empty(shape, dtype=dtype)
    elif out_layout == "transposed":
        out = torch.empty(tuple(reversed(shape)), dtype=dtype).permute(3, 2, 1, 0)
    elif out_layout == "sliced":
        out = torch.empty(shape[0], 2 * shape[1], shape[2], shape[3], dtype=dtype)[:, ::2]
    else:
        out = torch.empty(shape, dtype=dtype).contiguous(memory_format=torch.channels_last)
    strides, pointer = out.stride(), out.data_ptr()
    structops.sub(x, y, alpha=2, out=out)
    torch.testing.assert_close(out, torch.sub(x, y, alpha=2))
    structops.where(x > y, x, y, out=out)
    torch.testing.assert_close(out, torch.where(x > y, x, y))
    assert out.stride() == strides and out.data_ptr() == pointer
    self = out.clone() if out_layout != "sliced" else out  # clone keeps a dense layout's strides
    expected = self * y
    structops.mul_(self, y)
    torch.testing.assert_close(self, expected)
    z = x.clone()  # out= is also an input, in the input's permuted layout: full overlap, allowed
    structops.add(z, y, out=z)
    torch.testing.assert_close(z, x + y)


def _ulps(ours: torch.Tensor, exact: torch.Tensor) -> float:
    """The largest error of float32 results in units of the last place of the exact values."""
    rounded = exact.float()
    ulp = (torch.nextafter(rounded, torch.tensor(float("inf"))) - rounded).double()
    return ((ours.double() - exact).abs() / ulp).max().item()


@pytest.mark.parametrize("op", ["exp", "log"])
def test_exp_and_log_are_within_one_ulp(op):
    """exp and log of float32 are structops' own vectorised arithmetic (pointwise/math.h
    exp_float, log_float): within 1 ulp of the exact value over a sweep of every 1,999th float,
    denormal results and inputs included."""
    every = torch.arange(0, 2**32, 1999, dtype=torch.int64).to(torch.int32).view(torch.float32)
    x = (
        every[(every > -103.9) & (every < 88.7)]
        if op == "exp"
        else every[torch.isfinite(every) & (every > 0)]
    )
    assert _ulps(getattr(structops, op)(x), getattr(torch, op)(x.double())) < 1


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("op", ["exp", "log", "sigmoid"])
def test_exp_log_sigmoid_of_special_values_match_torch(op, dtype):
    """Infinities, NaN, zeros of both signs, negatives, results that overflow or are denormal or
    zero: as torch gives them, in every lane of a vector and at the row's tail."""
    special = [0.0, -0.0, -1.0, 1e-45, 1e-40, 1e-38, 1.0, 88.72, 88.73, -87.5, -103.9, -104.0, -150.0]
    special += [1e30, -1e30, 3.4e38, float("inf"), -float("inf"), float("nan"), 20.0, -20.0, 0.5]
    x = torch.tensor(special * 7, dtype=dtype)  # 154 elements: vectors of every width and a tail
    torch.testing.assert_close(getattr(structops, op)(x), getattr(torch, op)(x), equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("op", ["neg", "abs"])
def test_16_bit_neg_and_abs_change_the_sign_bit_alone(op, dtype):
    """neg and abs compute in the storage dtype (codegen Lowered.in_storage, pw::neg / pw::abs on
    bit 15), not through float: on every bit pattern, NaN payloads included, the bits of torch's
    contiguous kernel. torch's strided kernel goes through float and quiets signalling NaNs; ours
    keeps them, so strided inputs compare as values (NaN as NaN)."""
    every = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16).view(dtype)
    ours, theirs = getattr(structops, op), getattr(torch, op)
    assert torch.equal(ours(every).view(torch.int16), theirs(every).view(torch.int16))
    strided = every.view(256, 256).t()
    torch.testing.assert_close(ours(strided), theirs(strided), rtol=0, atol=0, equal_nan=True)
    out = torch.empty(256, 512, dtype=dtype)[:, ::2]
    assert ours(every.view(256, 256), out=out) is out
    assert torch.equal(out.view(torch.int16), theirs(every).view(256, 256).view(torch.int16))


def assert_within_ulps(got, expected, ulps):
    """NaN where torch has NaN, zeros (with their sign) and infinities exactly, finite values
    within ``ulps`` units in the last place of torch's."""
    assert torch.equal(got.isnan(), expected.isnan())
    exact = ~torch.isfinite(expected) | (expected == 0)
    torch.testing.assert_close(got[exact], expected[exact], rtol=0, atol=0, equal_nan=True)
    zero = expected == 0
    assert torch.equal(torch.signbit(got[zero]), torch.signbit(expected[zero]))
    bits = torch.int64 if got.dtype == torch.float64 else torch.int32
    distance = (got[~exact].view(bits).long() - expected[~exact].view(bits).long()).abs()
    assert distance.max() <= ulps


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_pow_of_special_values_is_torch_within_ulps(dtype):
    """float and float64 pow run glibc's vector pow (structgen/cpu/rows.h): C's special cases
    (pow(x, 0) = 1, pow(1, NaN) = 1, negative bases with integer and other exponents, signed zeros,
    infinities, denormals) as torch's, other values within 2 ulp; Tensor and Scalar exponents.
    The reference is torch's float64 pow rounded: torch's float pow with a Scalar exponent is
    itself 31 ulp off for pow(11.9, 33.3)."""
    inf, nan = float("inf"), float("nan")
    tiny = torch.finfo(dtype).tiny / 8  # a denormal
    bases = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, inf, -inf, nan, tiny, -tiny, 3.7, -3.7, 1e30, 0.999]
    exponents = [0.0, -0.0, 1.0, -1.0, 2.0, 3.0, -3.0, 0.5, -0.5, 2.5, -2.5, inf, -inf, nan, 1e10, -1e10]
    exponents += [0.1, 7.0, -7.0, 1e-3, 33.3, -33.3]
    base = torch.tensor(bases, dtype=dtype).repeat_interleave(len(exponents))
    exponent = torch.tensor(exponents, dtype=dtype).repeat(len(bases))
    g = torch.Generator().manual_seed(6)
    base = torch.cat([base, torch.rand(3000, generator=g, dtype=dtype) * 20])
    exponent = torch.cat([exponent, torch.randn(3000, generator=g, dtype=dtype) * 8])
    expected = torch.pow(base.double(), exponent.double()).to(dtype)
    assert_within_ulps(structops.pow(base, exponent), expected, 2)
    for e in exponents:
        e = torch.tensor(e, dtype=dtype).item()  # the exponent the float kernel computes with
        assert_within_ulps(structops.pow(base, e), torch.pow(base.double(), e).to(dtype), 2)


def scalar_libm(op, v):
    try:
        return getattr(math, op)(v)
    except ValueError:  # math raises where libm returns NaN (log of a negative number)
        return math.nan


@pytest.mark.parametrize("op", ["sin", "cos", "tanh", "erf", "log1p", "exp", "log"])
def test_float64_vector_math_is_torch_within_ulps(op):
    """float64 sin, cos, tanh, erf, log1p, ... run glibc's vector variants (structgen/cpu/rows.h
    declares them `omp declare simd`): within 4 ulp of torch's scalar results, and the special
    values (signed zeros, infinities, NaN, denormals, huge arguments) exactly as torch's."""
    g = torch.Generator().manual_seed(4)
    special = [0.0, -0.0, float("inf"), -float("inf"), float("nan"), 5e-324, -5e-324, 2.2e-308, 1e-300]
    special += [1e300, -1e300, 1e22, -1e22, 709.8, -745.2, -1.0, -1.0 - 2**-52, 1.0, 2.0**-30, 40.0, -40.0]
    x = torch.cat(
        [torch.tensor(special, dtype=torch.float64), torch.randn(5000, generator=g, dtype=torch.float64)]
    )
    x = torch.cat([x, x * 30, torch.rand(2000, generator=g, dtype=torch.float64) * 1e6]).repeat(2)
    got, expected = getattr(structops, op)(x), getattr(torch, op)(x)
    # torch's vector log1p flushes denormal arguments (log1p(5e-324) = 0): those from libm's scalars
    denormal = (x != 0) & (x.abs() < torch.finfo(torch.float64).tiny)
    expected[denormal] = torch.tensor([scalar_libm(op, v) for v in x[denormal].tolist()], dtype=x.dtype)
    assert_within_ulps(got, expected, 4)


@pytest.mark.parametrize("scale", [1.0, 0.7, 3.0, 2.0**-10, 2.0**-24, 1e4])
def test_float16_values_widen_and_round_as_torch(scale):
    """float16 operands are widened to float 64 at a time by the vector instruction (cpu/float16.h;
    bit arithmetic where the CPU has none) and float results rounded by it: on every float16 bit
    pattern, denormals, infinities and NaN payloads included, the bits torch's mul gives; as a
    contiguous and a broadcast row, in whole blocks and with a tail."""
    every = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16).view(torch.float16)
    one = torch.tensor([scale], dtype=torch.float16)
    for a in (every, every[3:]):
        for b in (torch.full_like(a, scale), one):
            assert torch.equal(structops.mul(a, b).view(torch.int16), torch.mul(a, b).view(torch.int16))
