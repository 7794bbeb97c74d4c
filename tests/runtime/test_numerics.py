"""The values models produce (issue 56's findings), each next to torch: numbers past float16's
range, masked rows, large offsets, signed zeros, overflowing statistics. The CPU impl, and the
CUDA kernels run by the emulator where the finding was on CUDA. The hostile check
(structgen/conformance/hostile.py, docs/numerics.md) runs every op on such values; these are the
cases a user reported, kept as they were written."""

import math

import pytest
import torch
from structgen.conformance.emulation import emulated_library
from structgen.conformance.spec import op

import structops

no_gpu = pytest.mark.skipif(
    torch.cuda.is_available(), reason="a GPU is present: tests/runtime/test_cuda.py runs these kernels"
)


def emu(name: str):
    emulated_library()
    return op("structops_emu", name)


def test_float16_numbers_compute_in_float():
    x = torch.tensor([60000.0, 3.0], dtype=torch.float16)
    torch.testing.assert_close(structops.div(x, 65536.0), torch.div(x, 65536.0), atol=0, rtol=0)
    y = torch.tensor([1e-3], dtype=torch.float16)
    torch.testing.assert_close(structops.mul(y, 1e5), torch.mul(y, 1e5), atol=0, rtol=0)
    assert math.isfinite(structops.mul(y, 1e5).item())
    z = torch.tensor([3.0, -2.5], dtype=torch.bfloat16)
    for number in (1 / 3, 1e5, 1e-8):
        torch.testing.assert_close(structops.mul(z, number), torch.mul(z, number), atol=0, rtol=0)
        zero_dim = torch.tensor(number, dtype=torch.float64)  # a 0-dim operand acts as a number
        torch.testing.assert_close(structops.mul(z, zero_dim), torch.mul(z, zero_dim), atol=0, rtol=0)


@no_gpu
def test_float16_numbers_compute_in_float_on_cuda():
    x = torch.tensor([60000.0, 3.0], dtype=torch.float16)
    torch.testing.assert_close(
        emu("div.Tensor")(x, torch.tensor(65536.0)), torch.div(x, 65536.0), atol=0, rtol=0
    )
    y = torch.tensor([1e-3], dtype=torch.float16)
    torch.testing.assert_close(emu("mul.Tensor")(y, torch.tensor(1e5)), torch.mul(y, 1e5), atol=0, rtol=0)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.where(torch.tensor([True, False]), torch.tensor([1, 2], dtype=torch.int8), 1000),
        lambda m: m.add(torch.ones(2, dtype=torch.float16), torch.ones(2, dtype=torch.float16), alpha=1e5),
        lambda m: (
            torch.ones(2, dtype=torch.float16).pow_(2**63 - 1)
            if m is torch
            else m.pow_(torch.ones(2, dtype=torch.float16), 2**63 - 1)
        ),
        lambda m: (
            m.nn.functional.binary_cross_entropy(torch.full((5, 1), 0.5), torch.ones(5, 7))
            if m is torch
            else m.binary_cross_entropy(torch.full((5, 1), 0.5), torch.ones(5, 7))
        ),
    ],
    ids=["where_int8_1000", "add_alpha_1e5_float16", "pow_float16_int64_max", "bce_5x1_5x7"],
)
def test_numbers_and_shapes_torch_refuses_are_refused(call):
    with pytest.raises((RuntimeError, ValueError)) as theirs:
        call(torch)
    with pytest.raises(RuntimeError) as ours:  # torch.nn.functional's ValueError is its Python check
        call(structops)
    assert type(ours.value) is RuntimeError and theirs.value is not None


def test_a_bool_result_takes_any_alpha():
    t = torch.tensor([True, False])
    assert torch.equal(structops.add(t, t, alpha=2), torch.add(t, t, alpha=2))


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=no_gpu)])
def test_log_softmax_keeps_the_log_term_of_a_masked_row(device):
    fn = emu("log_softmax.int") if device == "cuda" else structops.log_softmax
    masked = torch.full((1, 3), -1e9)
    torch.testing.assert_close(fn(masked, 1), torch.log_softmax(masked, 1), atol=0, rtol=0)
    x = torch.randn(2, 3, generator=torch.Generator().manual_seed(0)) * 5 + 1e4
    torch.testing.assert_close(fn(x, 1), torch.log_softmax(x.double(), 1).float(), atol=2e-6, rtol=0)


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=no_gpu)])
def test_cross_entropy_of_a_masked_row(device):
    fn = emu("cross_entropy_loss") if device == "cuda" else structops.cross_entropy_loss
    logits = torch.randn(4, 5, generator=torch.Generator().manual_seed(1))
    logits[0] = -1e9  # a fully masked row: uniform over the classes
    target = torch.tensor([1, 0, 3, 2])
    expected = torch.nn.functional.cross_entropy(logits, target)
    torch.testing.assert_close(fn(logits, target), expected, atol=0, rtol=2e-7)


@no_gpu
def test_cuda_batch_norm_in_evaluation_does_not_cancel():
    g = torch.Generator().manual_seed(2)
    x = 1000 + 1e-3 * torch.randn(8, 3, 4, generator=g)
    mean, var = torch.full((3,), 1000.0), torch.zeros(3)
    w, b = torch.ones(3), torch.zeros(3)
    got = emu("batch_norm")(x, w, b, mean, var, False, 0.1, 1e-5)[0]
    exact = torch.nn.functional.batch_norm(x.double(), mean.double(), var.double(), w.double(), b.double())
    assert (got.double() - exact).abs().max() < 1e-5 * exact.abs().max()


def test_layer_norm_of_one_element_and_of_constant_rows_is_the_bias():
    bias = torch.randn(1, generator=torch.Generator().manual_seed(3))
    x = torch.randn(4, 1, generator=torch.Generator().manual_seed(4)) * 100
    out = structops.native_layer_norm(x, [1], torch.ones(1), bias, 1e-5)[0]
    assert torch.equal(out, bias.expand(4, 1))
    constant = torch.full((3, 8), 7.25)
    assert torch.equal(structops.native_layer_norm(constant, [8], None, None, 1e-5)[0], torch.zeros(3, 8))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_layer_norm_of_a_row_whose_variance_overflows(dtype):
    top = torch.finfo(dtype).max
    x = torch.tensor([[0.9 * top, -0.9 * top, 0.3 * top, 0.0]], dtype=dtype)
    out = structops.native_layer_norm(x, [4], None, None, 1e-5)[0]
    scale = 2.0**-600 if dtype == torch.float64 else 2.0**-80  # layer_norm without eps is scale-free
    exact = torch.layer_norm((x * scale).double(), [4], eps=0.0)
    torch.testing.assert_close(out.double(), exact, atol=0, rtol=1e-5 if dtype == torch.float32 else 1e-12)


def test_batch_norm_with_eps_0_on_a_constant_channel():
    x = torch.full((4, 2, 3), 5.0)
    out = structops.native_batch_norm(x, None, None, None, None, True, 0.1, 0.0)[0]
    expected = torch.batch_norm(x, None, None, None, None, True, 0.1, 0.0, False)
    assert torch.equal(out, expected)


@pytest.mark.parametrize("p", [2, 2.5, 3])
def test_norm_of_large_and_tiny_values_is_scaled(p):
    for value in (1e20, 3e-30):
        x = torch.tensor([[value, value / 2]])
        expected = torch.linalg.vector_norm(x.double(), p, [1]).float()
        torch.testing.assert_close(structops.norm(x, p, [1]), expected, atol=0, rtol=2e-6)
    single = torch.tensor([[1e20]])
    assert torch.equal(structops.norm(single, p, [1]), torch.tensor([1e20]))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_relu_and_clamp_keep_negative_zero(dtype):
    x = torch.tensor([-0.0, 0.0, -1.0], dtype=dtype)
    for ours, theirs in (
        (structops.relu(x), torch.relu(x)),
        (structops.clamp_min(x, 0), torch.clamp_min(x, 0)),
    ):
        assert torch.equal(ours.signbit(), theirs.signbit()) and torch.equal(ours, theirs)


@no_gpu
def test_cuda_cdist_p0_propagates_nan():
    x1 = torch.tensor([[0.0, float("nan")], [1.0, 2.0]])
    x2 = torch.tensor([[0.0, 1.0]])
    torch.testing.assert_close(emu("cdist")(x1, x2, 0.0), torch.cdist(x1, x2, 0.0), equal_nan=True)


def test_vmap_over_a_batch_of_none():
    x = torch.randn(0, 3, 4)
    got = torch.func.vmap(lambda t: structops.sum(t, [1]))(x)
    assert got.shape == torch.func.vmap(lambda t: torch.sum(t, [1]))(x).shape == (0, 3)
