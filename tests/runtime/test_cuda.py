"""Generated CUDA pointwise kernels against torch's CUDA ops, where the conformance suite's small
samples do not reach: the vectorised path's tails and alignment, large sizes, every layout the
offset calculator handles, out= into views, and 64-bit indexing. Skipped without a GPU."""

import pytest
import torch

import structops

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
    "bias_gelu": (
        structops.bias_gelu,
        lambda x, b: torch.nn.functional.gelu(x.float() + b.float()).to(x.dtype),
        2,
        {},
    ),
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
        "channels_last": lambda: rand((2, shape[1], 3, shape[0])).contiguous(
            memory_format=torch.channels_last
        ),
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
    for other in (
        torch.randn(17, generator=g, device="cuda"),
        torch.randn(64, 1, 1, generator=g, device="cuda"),
        torch.tensor(1.5),
        torch.tensor(2.0, device="cuda"),
    ):  # a CPU 0-dim tensor mixes in too
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
    out = buf.t()[::2]  # transposed and sliced view, [300, 200]
    assert structops.mul(x, y, out=out) is out
    torch.testing.assert_close(out, torch.mul(x, y))
    assert torch.count_nonzero(buf.t()[1::2]) == 0  # nothing written between the view's elements
    z = x.clone()
    structops.add_(z, y.float(), alpha=-1)
    torch.testing.assert_close(z, x - y.float())


def test_cpu_and_cuda_tensors_do_not_mix():
    with pytest.raises(RuntimeError, match="expected all tensors on cuda:0, but 'other' is on cpu"):
        structops.add(torch.ones(3, device="cuda"), torch.ones(3))


def test_a_cpu_scalar_first_does_not_pick_the_device():
    y = structops.add(torch.tensor(2.0), torch.ones(3, device="cuda"))
    assert y.device.type == "cuda" and y.tolist() == [3.0, 3.0, 3.0]


@pytest.mark.parametrize(
    "name, call",
    [
        ("weight", lambda: structops.native_layer_norm(torch.ones(2, 3, device="cuda"), [3], torch.ones(3))),
        (
            "weight",
            lambda: structops.cross_entropy_loss(
                torch.ones(4, 3, device="cuda"),
                torch.zeros(4, dtype=torch.long, device="cuda"),
                torch.ones(3),
            ),
        ),
        ("index", lambda: structops.index_select(torch.ones(3, device="cuda"), 0, torch.tensor(0))),
        ("index", lambda: structops.take(torch.ones(3, device="cuda"), torch.tensor(0))),
    ],
)
def test_host_tensors_never_reach_a_kernel(name, call):
    with pytest.raises(RuntimeError, match=f"expected all tensors on cuda:0, but '{name}' is on cpu"):
        call()


@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_the_call_runs_on_its_tensors_device():
    x = torch.randn(1000, device="cuda:1")
    with torch.cuda.device(0):
        y = structops.exp(x)
        s = structops.sum(x, [0])
    assert y.device == x.device == s.device
    torch.testing.assert_close(y, torch.exp(x))
    torch.testing.assert_close(s, x.sum(0))


def graph_calls() -> dict:
    """Calls to capture; their device constants are made before the capture (a copy from the host
    cannot be captured)."""
    rows, take_at = torch.tensor([2, 0, 1], device="cuda"), torch.tensor([5, -1], device="cuda")
    bag_indices, bag_offsets = torch.tensor([0, 2, 1], device="cuda"), torch.tensor([0, 1], device="cuda")
    return {
        "add with a CPU scalar": lambda x: structops.add(x, torch.tensor(2.0)),
        "index_select": lambda x: structops.index_select(x, 0, rows),
        "take": lambda x: structops.take(x, take_at),
        "embedding_bag": lambda x: structops.embedding_bag(x, bag_indices, bag_offsets),
        "binary_cross_entropy": lambda x: structops.binary_cross_entropy(
            torch.sigmoid(x), torch.sigmoid(x) * 0.5
        ),
        "cross_entropy_loss": lambda x: structops.cross_entropy_loss(x, rows),
    }


@pytest.mark.parametrize(
    "call",
    [
        "add with a CPU scalar",
        "index_select",
        "take",
        "embedding_bag",
        "binary_cross_entropy",
        "cross_entropy_loss",
    ],
)
def test_calls_are_captured_in_cuda_graphs(call):
    """No host synchronisation and no pageable copy while capturing: the call records into a graph,
    and replaying it on new data computes what eager computes."""
    f = graph_calls()[call]
    x = torch.randn(3, 4, device="cuda")
    f(x)  # warm up outside the capture (autotuning, allocator)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = f(x)
    x.copy_(torch.randn(3, 4, device="cuda"))
    graph.replay()
    torch.cuda.synchronize()
    torch.testing.assert_close(y, f(x))


def test_current_stream_is_used():
    s = torch.cuda.Stream()
    x = torch.randn(1 << 22, device="cuda")
    s.wait_stream(torch.cuda.current_stream())  # x is written on the default stream
    with torch.cuda.stream(s):
        y = structops.exp(x)
        z = structops.mul(y, y)
    s.synchronize()
    torch.testing.assert_close(z, torch.exp(x) ** 2)


@pytest.mark.skipif(
    torch.cuda.is_available() and torch.cuda.get_device_properties(0).total_memory < 24 * 2**30,
    reason="needs about 16 GiB of GPU memory",
)
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


# ---------------------------------------------------------------------------------------------
# Hand-written CUDA kernels of issue 6 (csrc/ops/{scan,normalization,index,shape,cdist,pool,loss}/cuda.cu)
# on the paths the conformance suite's small samples do not reach, against torch's CUDA ops.

F = torch.nn.functional


def _randint(shape, dtype=torch.float32, seed=0, lo=-8, hi=8):
    """Small integers: sums of them are exact in float32, so scans compare exactly whatever the order."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randint(lo, hi, shape, generator=g, device="cuda").to(dtype)


def _randn(*shape, dtype=torch.float32, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    return torch.randn(*shape, generator=g, device="cuda").to(dtype)


# rows by a warp, rows by a block, few long rows (chunked), many columns and short columns in place,
# few long columns (moved last), tiny
@pytest.mark.parametrize(
    "shape, dim",
    [
        ((300, 77), 1),
        ((3000, 2048), 1),
        ((40, 5000), 1),
        ((2, 3_000_000), 1),
        ((300, 70_000), 0),
        ((5000, 3, 8), 1),
        ((100, 3), 0),
        ((1000, 4096), 0),
        ((7,), 0),
        ((), 0),
    ],
    ids=str,
)
def test_cumsum_paths_match_torch_cuda(shape, dim):
    for dtype in (torch.float32, torch.float64, torch.int32, torch.int64):
        x = _randint(shape, dtype)
        assert torch.equal(structops.cumsum(x, dim), torch.cumsum(x, dim))
    x = _randint(shape, torch.bool, lo=0, hi=2)
    assert torch.equal(structops.cumsum(x, dim), torch.cumsum(x, dim))


def test_cumsum_half_strided_inplace_and_out():
    x = _randn(64, 3000, dtype=torch.bfloat16)
    torch.testing.assert_close(
        structops.cumsum(x, 1), torch.cumsum(x.float(), 1).bfloat16(), rtol=2e-2, atol=0.5
    )
    xt = _randint((500, 300)).t()  # transposed: made contiguous by the glue
    assert torch.equal(structops.cumsum(xt, 1), torch.cumsum(xt, 1))
    y = _randint((50, 70))
    expected = torch.cumsum(y, 0)
    structops.cumsum_(y, 0)
    assert torch.equal(y, expected)
    out = torch.zeros(70, 100, device="cuda").t()[:50]  # a strided out= view
    structops.cumsum(_randint((50, 70)), 1, out=out)
    assert torch.equal(out, torch.cumsum(_randint((50, 70)), 1))
    assert structops.cumsum(_randint((4, 5), torch.int32), 1, dtype=torch.int16).dtype == torch.int16


@pytest.mark.parametrize("shape", [(64, 3, 32, 32), (4, 1000), (1, 2, 100_000), (256, 64, 7, 7)], ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16], ids=str)
def test_batch_norm_matches_torch_cuda(shape, dtype):
    c = shape[1]
    x = _randn(*shape, dtype=dtype) * 3 + 1
    w, b = _randn(c, dtype=dtype, seed=1), _randn(c, dtype=dtype, seed=2)
    tol = {"rtol": 1e-4, "atol": 1e-4} if dtype == torch.float32 else {"rtol": 1e-2, "atol": 1e-2}
    for training in (True, False):
        rm, rv = _randn(c, dtype=dtype, seed=3), _randn(c, dtype=dtype, seed=4).abs() + 0.5
        ours_rm, ours_rv = rm.clone(), rv.clone()
        got = structops.native_batch_norm(x, w, b, ours_rm, ours_rv, training, 0.3, 1e-5)
        want = torch.ops.aten.native_batch_norm(x, w, b, rm, rv, training, 0.3, 1e-5)
        torch.testing.assert_close(got[0], want[0], **tol)
        if training:  # torch's CUDA statistics are float32 for float16 input; ours, as its CPU's
            torch.testing.assert_close(got[1], want[1].to(dtype), **tol)
            torch.testing.assert_close(got[2], want[2].to(dtype), **tol)
            torch.testing.assert_close(ours_rm, rm, **tol)
            torch.testing.assert_close(ours_rv, rv, **tol)


def test_batch_norm_channels_last_and_strided_running_stats():
    x = _randn(8, 16, 9, 9).contiguous(memory_format=torch.channels_last)
    rm_buf, rv_buf = torch.zeros(32, device="cuda"), torch.ones(32, device="cuda")
    rm, rv = rm_buf[::2], rv_buf[::2]  # strided: updated in place through a copy
    ref_rm, ref_rv = torch.zeros(16, device="cuda"), torch.ones(16, device="cuda")
    got = structops.native_batch_norm(x, None, None, rm, rv, True, 0.1, 1e-5)
    want = torch.ops.aten.native_batch_norm(x, None, None, ref_rm, ref_rv, True, 0.1, 1e-5)
    torch.testing.assert_close(got[0], want[0], rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(rm, ref_rm)
    torch.testing.assert_close(rv, ref_rv)
    assert torch.count_nonzero(rm_buf[1::2]) == 0


@pytest.mark.parametrize(
    "dtype", [torch.float32, torch.float16, torch.complex64, torch.int8, torch.bool], ids=str
)
def test_index_ops_match_torch_cuda(dtype):
    x = _randint((40, 50, 30), torch.float32).to(dtype)
    for dim in (0, 1, 2, -1):
        idx = _randint((77,), torch.int64, lo=0, hi=x.shape[dim])
        assert torch.equal(structops.index_select(x, dim, idx), torch.index_select(x, dim, idx))
        xt, tidx = x.transpose(0, 2), (idx % x.transpose(0, 2).shape[dim]).int()  # strided self, int32 index
        assert torch.equal(structops.index_select(xt, dim, tidx), torch.index_select(xt, dim, tidx))
        gidx = _randint((20, 30, 10), torch.int64, lo=0, hi=x.shape[dim])
        assert torch.equal(structops.gather(x, dim, gidx), torch.gather(x, dim, gidx))
        xt = x.permute(2, 0, 1)  # gather reads self through its strides
        gidx = _randint((10, 20, 30), torch.int64, lo=0, hi=xt.shape[dim])
        assert torch.equal(structops.gather(xt, dim, gidx), torch.gather(xt, dim, gidx))
    tidx = _randint((123, 4), torch.int64, lo=-x.numel(), hi=x.numel())
    assert torch.equal(structops.take(x, tidx), torch.take(x, tidx))
    assert torch.equal(structops.take(x.transpose(0, 1), tidx), torch.take(x.transpose(0, 1), tidx))


def test_embedding_and_embedding_bag_match_torch_cuda():
    w = _randn(1000, 96)
    idx = _randint((64, 33), torch.int64, lo=0, hi=1000)
    torch.testing.assert_close(structops.embedding(w, idx), F.embedding(idx, w))
    torch.testing.assert_close(structops.embedding(w.half(), idx.int()), F.embedding(idx, w.half()))
    flat = idx.reshape(-1)
    offsets = torch.tensor([0, 0, 5, 100, 101, 900, 2000], device="cuda")
    # include_last_offset: the last offset is the number of indices (torch's documented input;
    # torch's own modes disagree on what a smaller one means).
    ends = torch.cat([offsets, torch.tensor([flat.numel()], device="cuda")])
    for mode, name in enumerate(("sum", "mean", "max")):
        for last, offs in ((False, offsets), (True, ends)):
            torch.testing.assert_close(
                structops.embedding_bag(w, flat, offs, False, mode, False, None, last),
                F.embedding_bag(flat, w, offs, mode=name, include_last_offset=last),
            )
    psw = _randn(flat.numel(), seed=5)
    torch.testing.assert_close(
        structops.embedding_bag(w, flat, offsets, False, 0, False, psw),
        F.embedding_bag(flat, w, offsets, mode="sum", per_sample_weights=psw),
        atol=1e-4,  # weighted sums of up to 1,900 rows, added in another order than torch's
        rtol=1e-5,
    )


def test_bad_indices_raise_and_leave_cuda_usable():
    x = torch.ones(5, 3, device="cuda")
    with pytest.raises(
        IndexError,
        match=r"^index_select: index 5 is out of range for dim 0 of 'self' with size 5 "
        r"\(at position 2 of 'index'; expected 0 <= index < 5\)$",
    ):
        structops.index_select(x, 0, torch.tensor([0, 1, 5, 7], device="cuda"))
    with pytest.raises(
        RuntimeError, match=r"^gather: index -1 is out of range for dim 1 of 'self' with size 3"
    ):
        structops.gather(x, 1, torch.tensor([[0, -1]], device="cuda"))
    with pytest.raises(IndexError, match=r"^take: index 15 is out of range for 'self' with 15 elements"):
        structops.take(x, torch.tensor([15], device="cuda"))
    with pytest.raises(
        IndexError,
        match=r"^embedding: index 9 is out of range for 'weight' with 5 rows "
        r"\(at position 1 of 'indices'\)$",
    ):
        structops.embedding(x, torch.tensor([1, 9], device="cuda"))
    with pytest.raises(IndexError, match=r"^embedding_bag: index 5 is out of range for 'weight' with 5 rows"):
        structops.embedding_bag(x, torch.tensor([1, 5], device="cuda"), torch.tensor([0], device="cuda"))
    with pytest.raises(RuntimeError, match=r"^embedding_bag: offsets\[0\] must be 0"):
        structops.embedding_bag(x, torch.tensor([1, 2], device="cuda"), torch.tensor([1], device="cuda"))
    with pytest.raises(
        IndexError,
        match=r"^cross_entropy_loss: target 7 is out of bounds for 3 classes "
        r"\(at flat position 1 of 'target'\)$",
    ):
        structops.cross_entropy_loss(
            torch.zeros(5, 3, device="cuda"), torch.tensor([0, 7, 9, 1, 1], device="cuda")
        )
    with pytest.raises(
        RuntimeError, match="binary_cross_entropy: all elements of input should be between 0 and 1"
    ):
        structops.binary_cross_entropy(torch.full((4,), 1.5, device="cuda"), torch.ones(4, device="cuda"))
    assert torch.equal(
        structops.index_select(x, 0, torch.tensor([4], device="cuda")), x[4:5]
    )  # context intact


@pytest.mark.parametrize("dtype", [torch.float32, torch.int8, torch.complex64], ids=str)
def test_split_with_sizes_copy_batched_pieces(dtype):
    x = _randint((7, 3 + 4 * 40, 5), torch.float32).to(dtype)
    sizes = [3] + [4] * 40  # 41 pieces: two launches of the batched kernel
    for dim, piece_sizes in ((1, sizes), (0, [2, 0, 5]), (2, [1, 3, 1])):
        want = torch.split_with_sizes(x, piece_sizes, dim)
        for src in (x, x.transpose(0, 2).contiguous().transpose(0, 2)):  # contiguous; strided (copy_)
            got = structops.split_with_sizes_copy(src, piece_sizes, dim)
            assert all(torch.equal(g, w) for g, w in zip(got, want, strict=True))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16], ids=str)
def test_bmm_matmul_match_torch_cuda(dtype):
    tol = {"rtol": 1e-3, "atol": 1e-3} if dtype != torch.float16 else {"rtol": 1e-2, "atol": 1e-2}
    a, b = _randn(6, 33, 17, dtype=dtype), _randn(6, 17, 29, dtype=dtype, seed=1)
    torch.testing.assert_close(structops.bmm(a, b), torch.bmm(a, b), **tol)
    torch.testing.assert_close(
        structops.bmm(a, b.transpose(1, 2).contiguous().transpose(1, 2)), torch.bmm(a, b), **tol
    )
    for x, y in ((a, b[0]), (a[0, 0], b), (_randn(2, 1, 33, 17, dtype=dtype), b), (a[0, 0], b[0, :, 0])):
        torch.testing.assert_close(structops.matmul(x, y), torch.matmul(x, y), **tol)
    with pytest.raises(RuntimeError, match="bmm: no CUDA kernel for integer dtypes"):
        structops.bmm(a.long(), b.long())


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.5, float("inf")])
def test_cdist_matches_torch_cuda(p):
    x1, x2 = _randn(3, 37, 70), _randn(3, 53, 70, seed=1)
    x1[0, 0, 0] = x2[0, 0, 0]  # a zero coordinate difference for p = 0
    reference = torch.ops.aten._cdist_forward  # takes compute_mode as an int, like structops
    for mode in (None, 1, 2):
        torch.testing.assert_close(
            structops.cdist(x1, x2, p, mode), reference(x1, x2, p, mode), rtol=1e-4, atol=1e-4
        )
    y1, y2 = x1[:, :5].transpose(0, 1), x2[0, :7]  # strided, batch dims broadcast
    torch.testing.assert_close(structops.cdist(y1, y2, p), reference(y1, y2, p, None), rtol=1e-4, atol=1e-4)


def test_pools_match_torch_cuda():
    A = torch.ops.aten
    x = _randn(4, 6, 33, 41)
    x[0, 0, 3, 3] = float("nan")
    for args in (([3, 3],), ([3, 2], [2, 1], [1, 1], [1, 2], True), ([2], [2], [0], [1], False)):
        ours, theirs = structops.max_pool2d_with_indices(x, *args), A.max_pool2d_with_indices(x, *args)
        torch.testing.assert_close(ours[0], theirs[0], equal_nan=True)
        assert torch.equal(ours[1], theirs[1])
    xi = _randint((2, 3, 17, 19), torch.int32, lo=-100, hi=100)
    want = A.max_pool2d_with_indices(xi.float(), [3, 3])[0].int()  # integers via int64 in the kernel
    assert torch.equal(structops.max_pool2d_with_indices(xi, [3, 3])[0], want)
    xc = x.contiguous(memory_format=torch.channels_last)
    for cip in (True, False):
        for div in (None, 5):
            torch.testing.assert_close(
                structops.avg_pool2d(xc, [3, 3], [2, 2], [1, 1], True, cip, div),
                A.avg_pool2d(xc, [3, 3], [2, 2], [1, 1], True, cip, div),
                equal_nan=True,
            )
    x3 = _randn(2, 3, 9, 10, 11)
    ours, theirs = (
        structops.max_pool3d_with_indices(x3, [3, 2, 2], [2, 1, 2], [1, 1, 0], [1, 2, 1], True),
        A.max_pool3d_with_indices(x3, [3, 2, 2], [2, 1, 2], [1, 1, 0], [1, 2, 1], True),
    )
    torch.testing.assert_close(ours[0], theirs[0])
    assert torch.equal(ours[1], theirs[1])


@pytest.mark.parametrize("n", [1, 1000, 3_000_001])
def test_mse_and_bce_reductions_match_torch_cuda(n):
    a, b = _randn(n), _randn(n, seed=1)
    p, t, w = torch.sigmoid(a), torch.sigmoid(b), _randn(n, seed=2).abs()
    for reduction, name in enumerate(("none", "mean", "sum")):
        tol = {"rtol": 1e-4, "atol": 1e-3}
        torch.testing.assert_close(
            structops.mse_loss(a, b, reduction), F.mse_loss(a, b, reduction=name), **tol
        )
        torch.testing.assert_close(
            structops.binary_cross_entropy(p, t, w, reduction),
            F.binary_cross_entropy(p, t, w, reduction=name),
            **tol,
        )
    column, row = a[:, None], b[None, :7]  # broadcast operands
    torch.testing.assert_close(
        structops.mse_loss(column, row, 1), F.mse_loss(*torch.broadcast_tensors(column, row))
    )
    assert structops.mse_loss(a[:0], b[:0], 1).isnan()


@pytest.mark.parametrize("shape", [(64, 10), (64, 1000), (8, 5, 7, 3), (1000,)], ids=str)
def test_cross_entropy_matches_torch_cuda(shape):
    x = _randn(*shape) * 4
    c = shape[1] if len(shape) > 1 else shape[0]
    per_sample = (shape[0], *shape[2:]) if len(shape) > 1 else ()
    target = _randint(per_sample, torch.int64, lo=0, hi=c)
    if target.dim():
        target.view(-1)[::7] = -100
    weight = _randn(c, seed=3).abs()
    probs = torch.softmax(_randn(*shape, seed=4), 1 if len(shape) > 1 else 0)
    for reduction, name in enumerate(("none", "mean", "sum")):
        for smoothing in (0.0, 0.2):
            for tgt in (target, probs):
                for wt in (None, weight):
                    got = structops.cross_entropy_loss(x, tgt, wt, reduction, -100, smoothing)
                    want = F.cross_entropy(x, tgt, wt, reduction=name, label_smoothing=smoothing)
                    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
