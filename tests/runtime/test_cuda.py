"""Generated CUDA pointwise kernels against torch's CUDA ops, where the conformance suite's small
samples do not reach: the vectorised path's tails and alignment, large sizes, every layout the
offset calculator handles, out= into views, and 64-bit indexing. Skipped without a GPU."""

import pytest
import structops
import torch

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")

# (ours, torch's, number of tensor inputs, keyword arguments)
OPS = {
    "add": (structops.add, torch.add, 2, {"alpha": 2}),
    "mul": (structops.mul, torch.mul, 2, {}),
    "exp": (structops.exp, torch.exp, 1, {}),
    "gelu_tanh": (structops.gelu, torch.nn.functional.gelu, 1, {"approximate": "tanh"}),
    "maximum": (structops.maximum, torch.maximum, 2, {}),
    "lt": (structops.lt, torch.lt, 2, {}),
    "addcmul": (structops.addcmul, torch.addcmul, 3, {"value": 0.5}),
    # Fused: x + b is not rounded to half/bfloat16 before gelu, so the reference computes in float.
    "bias_gelu": (structops.bias_gelu, lambda x, b: torch.nn.functional.gelu(x.float() + b.float()).to(x.dtype), 2, {}),
}
DTYPES = [torch.float32, torch.float16, torch.bfloat16]


def inputs(n, shape, dtype, layout, seed=0):
    """``n`` CUDA tensors of ``shape`` laid out as asked; the first one carries the layout."""
    g = torch.Generator(device="cuda").manual_seed(seed)

    def rand(s):
        return torch.randn(s, generator=g, device="cuda").to(dtype)

    first = {
        "contiguous": lambda: rand(shape),
        # One element in: still dense, but not 16-byte aligned, so the vector path must not run.
        "misaligned": lambda: rand((shape[0] * shape[1] + 1,))[1:].view(shape),
        "transposed": lambda: rand(shape[::-1]).t(),
        "sliced": lambda: rand((shape[0], shape[1] * 2))[:, ::2],
        "channels_last": lambda: rand((2, shape[1], 3, shape[0])).contiguous(memory_format=torch.channels_last),
    }[layout]()
    rest_shape = first.shape
    return [first] + [rand(rest_shape) for _ in range(n - 1)]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "misaligned", "transposed", "sliced", "channels_last"])
@pytest.mark.parametrize("shape", [(1, 1), (3, 5), (257, 1031)], ids=str)
@pytest.mark.parametrize("name", sorted(OPS))
def test_layouts_match_torch_cuda(name, shape, layout, dtype):
    ours, theirs, n, kwargs = OPS[name]
    xs = inputs(n, shape, dtype, layout)
    expected = theirs(*xs, **kwargs)
    actual = ours(*xs, **kwargs)
    assert actual.device == expected.device and actual.dtype == expected.dtype
    assert actual.shape == expected.shape and actual.stride() == expected.stride()
    torch.testing.assert_close(actual, expected)


@pytest.mark.parametrize("name", sorted(OPS))
def test_broadcast_operands_match_torch_cuda(name):
    ours, theirs, n, kwargs = OPS[name]
    if n == 1:
        pytest.skip("one input: nothing to broadcast")
    g = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(64, 33, 17, generator=g, device="cuda")
    for other in (torch.randn(17, generator=g, device="cuda"), torch.randn(64, 1, 1, generator=g, device="cuda"),
                  torch.tensor(1.5), torch.tensor(2.0, device="cuda")):  # a CPU 0-dim tensor mixes in too
        xs = [x] * (n - 1) + [other]  # one broadcast operand, last (where torch takes a CPU scalar)
        torch.testing.assert_close(ours(*xs, **kwargs), theirs(*xs, **kwargs))


@pytest.mark.parametrize("numel", [1, 7, 8, 9, 4095, 4096, 4097, 3 * 2**20 + 5])
def test_vector_tails_match_torch_cuda(numel):
    g = torch.Generator(device="cuda").manual_seed(numel)
    for dtype in (torch.float32, torch.bfloat16, torch.int8):
        x = torch.randint(-50, 50, (numel,), generator=g, device="cuda").to(dtype)
        y = torch.randint(-50, 50, (numel,), generator=g, device="cuda").to(dtype)
        assert torch.equal(structops.add(x, y), torch.add(x, y))
        assert torch.equal(structops.lt(x, y), torch.lt(x, y))  # bool out, wider input


def test_out_into_views_and_mixed_dtypes():
    g = torch.Generator(device="cuda").manual_seed(2)
    x = torch.randn(300, 200, generator=g, device="cuda")
    y = torch.randn(300, 200, generator=g, device="cuda", dtype=torch.float64)  # promotes to float64
    buf = torch.zeros(200, 600, device="cuda", dtype=torch.float64)
    out = buf.t()[:, ::2]  # transposed and sliced view
    assert structops.mul(x, y, out=out) is out
    torch.testing.assert_close(out, torch.mul(x, y))
    assert torch.count_nonzero(buf.t()[:, 1::2]) == 0  # nothing written between the view's elements
    z = x.clone()
    structops.add_(z, y.float(), alpha=-1)
    torch.testing.assert_close(z, x - y.float())


def test_cpu_and_cuda_tensors_do_not_mix():
    with pytest.raises(RuntimeError, match="expected all tensors on cuda:0, but 'other' is on cpu"):
        structops.add(torch.ones(3, device="cuda"), torch.ones(3))


def test_current_stream_is_used():
    s = torch.cuda.Stream()
    x = torch.randn(1 << 22, device="cuda")
    with torch.cuda.stream(s):
        y = structops.exp(x)
        z = structops.mul(y, y)
    s.synchronize()
    torch.testing.assert_close(z, torch.exp(x) ** 2)


@pytest.mark.skipif(torch.cuda.is_available() and torch.cuda.get_device_properties(0).total_memory < 24 * 2**30,
                    reason="needs about 16 GiB of GPU memory")
def test_over_2_pow_31_elements_use_64_bit_indexing():
    n = 2**31 + 100
    x = torch.zeros(n, dtype=torch.int8, device="cuda")
    x[-7:] = torch.arange(1, 8, dtype=torch.int8, device="cuda")
    y = structops.add(x, x)  # contiguous, vectorised, 64-bit index
    assert torch.equal(y[-8:], torch.tensor([0, 2, 4, 6, 8, 10, 12, 14], dtype=torch.int8, device="cuda"))
    assert int(y.sum()) == 2 * 28
    del y
    strided = torch.zeros(2 * n, dtype=torch.int8, device="cuda")[::2]  # offsets up to 2^32: strided, 64-bit
    strided[-3:] = 5
    z = structops.mul(strided, torch.tensor(3, dtype=torch.int8))
    assert z.is_contiguous() and int(z[-3:].sum()) == 45 and int(z.sum()) == 45
