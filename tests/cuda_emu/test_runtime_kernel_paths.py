"""The runtime's kernels that manifest keys choose, run by the CPU emulator against the CPU impl
(docs/cuda_emulation.md): the scans (structgen/cuda/scan.cuh) on every path, with each combine a
`scan: true` op can declare (cumsum: add, cumprod: mul, logcumsumexp: logaddexp), against float64
too, the paths crossing their boundaries with STRUCTGEN_EMU_SMS=2 multiprocessors; the triangles
(structgen/cuda/triangle.cuh) for each element size, over more elements than one grid holds."""

import math

import pytest
import torch

from tests.cuda_emu.test_kernel_paths import FLOATS, run_both, values

pytestmark = pytest.mark.skipif(
    torch.cuda.is_available(),
    reason="a GPU is present: it runs these kernels (tests/runtime/test_cuda.py, the cuda_matches_cpu check)",
)

# --- scans (the runtime's scan.cuh): warp rows, block rows, chunked rows, columns ------------------
SCANS = [
    ((37, 100), 1, "warp rows"),
    ((3, 5000), 1, "block rows"),
    ((1, 70000), 1, "chunked row"),
    ((300, 40), 0, "columns"),
    ((300, 3), 0, "short columns"),
]


@pytest.mark.parametrize("dtype", FLOATS + (torch.int64, torch.int32), ids=str)
@pytest.mark.parametrize("shape, dim, path", SCANS, ids=[p for *_, p in SCANS])
def test_cumsum(shape, dim, path, dtype):
    x = values(shape, dtype)
    emulated, cpu = run_both("cumsum", x, dim)
    if not dtype.is_floating_point:
        assert torch.equal(emulated, cpu), f"cumsum {path}"
        return
    # Scans add in another order than the CPU's: both stay within a rounding-error bound of the
    # float64 scan (a few ulps of the running sum of magnitudes, growing as sqrt(n)).
    exact = torch.cumsum(x.double(), dim)
    eps = torch.finfo(dtype).eps
    bound = 4 * eps * math.sqrt(shape[dim]) * torch.cumsum(x.double().abs(), dim) + torch.finfo(dtype).tiny
    for name, result in (("emulated CUDA", emulated), ("CPU", cpu)):
        error = (result.double() - exact).abs()
        assert (error <= bound).all(), (
            f"cumsum {path} {name}: error {(error / bound).max().item():.2f}x the bound"
        )


@pytest.mark.parametrize("dtype", FLOATS + (torch.int64, torch.int32), ids=str)
@pytest.mark.parametrize("shape, dim, path", SCANS, ids=[p for *_, p in SCANS])
def test_cumprod(shape, dim, path, dtype):
    """The same kernels with the product as their combine: values near +-1, so that 70,000 of
    them neither vanish nor overflow; integers -1, 0, 1 (exact, whatever the order)."""
    g = torch.Generator().manual_seed(1)
    if dtype.is_floating_point:
        signs = torch.randint(0, 2, shape, generator=g) * 2 - 1
        x = (signs * (1 + 0.002 * torch.randn(shape, generator=g, dtype=torch.float64))).to(dtype)
    else:
        x = torch.randint(-1, 2, shape, generator=g).to(dtype)
    emulated, cpu = run_both("cumprod", x, dim)
    if not dtype.is_floating_point:
        assert torch.equal(emulated, cpu), f"cumprod {path}"
        return
    # A product's relative error grows by about an ulp per step.
    exact = torch.cumprod(x.double(), dim)
    steps = torch.arange(1, shape[dim] + 1, dtype=torch.float64).view(
        [-1 if d == dim else 1 for d in range(2)]
    )
    bound = 2 * torch.finfo(dtype).eps * steps * exact.abs() + torch.finfo(dtype).tiny
    for name, result in (("emulated CUDA", emulated), ("CPU", cpu)):
        error = (result.double() - exact).abs()
        assert (error <= bound).all(), (
            f"cumprod {path} {name}: error {(error / bound).max().item():.2f}x the bound"
        )


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("shape, dim, path", SCANS, ids=[p for *_, p in SCANS])
def test_logcumsumexp(shape, dim, path, dtype):
    """The kernels with logaddexp as their combine, masked (-1e9 and -inf) entries among them."""
    x = values(shape, dtype) * 4
    x.view(-1)[::7] = float("-inf")
    x.view(-1)[3::11] = -1e9 if dtype != torch.float16 else -6e4
    emulated, cpu = run_both("logcumsumexp", x, dim)
    exact = torch.logcumsumexp(x.double(), dim)
    # Each step rounds by about an ulp of the running result (at least an ulp of 1: log1p).
    bound = 4 * torch.finfo(dtype).eps * math.sqrt(shape[dim]) * (exact.abs() + 1)
    for name, result in (("emulated CUDA", emulated), ("CPU", cpu)):
        same_inf = torch.isinf(exact) & (result.double() == exact)
        error = torch.where(same_inf, 0.0, (result.double() - exact).abs())
        assert (error <= bound).all(), (
            f"logcumsumexp {path} {name}: error {(error / bound).nan_to_num(1e9).max().item():.2f}x the bound"
        )


@pytest.mark.parametrize(
    "dtype", (torch.bool, torch.float16, torch.float32, torch.float64, torch.complex128), ids=str
)
@pytest.mark.parametrize("diagonal", (-40, -1, 0, 3, 500), ids=str)
def test_triangles(dtype, diagonal):
    """Each element size (1 to 16 bytes) moves whole; the grid strides over 3 x 300 x 200."""
    x = values((3, 300, 200), torch.float64).to(dtype)
    for op, ref in (("tril", torch.tril), ("triu", torch.triu)):
        emulated, cpu = run_both(op, x, diagonal)
        assert torch.equal(emulated, ref(x, diagonal)), f"{op} emulated CUDA"
        assert torch.equal(cpu, ref(x, diagonal)), f"{op} CPU"
