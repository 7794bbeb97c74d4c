"""The CPU emulator of CUDA (csrc/emulator, docs/cuda_emulation.md) checked on its own kernels
(emulator_checks.cu): faults are errors naming kernel, block and thread (and barriers by their
place in the source), launches the GPU refuses fail as on the GPU, a launch off the current stream
is an error, collectives and atomics compute what the hardware does, and half/bfloat16
conversions round to nearest even."""

import numpy as np
import pytest
import torch
from structgen.conformance.emulation import emulated_library

pytestmark = pytest.mark.skipif(
    torch.cuda.is_available(),
    reason="a GPU is present: it runs these kernels (tests/runtime/test_cuda.py, the cuda_matches_cpu check)",
)


SOURCE = "emulator/emulator_checks.cu"  # where the emulator says each thread's barrier is


def run(name: str, buffer: torch.Tensor | None = None) -> str:
    emulated_library()
    buffer = torch.zeros(16 * 1024, dtype=torch.int32) if buffer is None else buffer
    return torch.ops.structops_emu_checks.run(name, buffer)


@pytest.mark.parametrize(
    "name, message",
    [
        ("divergent_shuffle", r"block \(0,0,0\), thread \(0,0,0\): lane 16 of the mask is exited instead of"),
        (
            "barrier_skipped",
            r"block \(0,0,0\), thread \(0,0,0\): exited while other threads wait at __syncthreads",
        ),
        (
            "barrier_vs_shuffle",
            r"block \(0,0,0\), thread \(16,0,0\): lane 0 of the mask is waiting at __syncthreads instead of",
        ),
        (
            "shuffle_beyond_block",
            r"block \(0,0,0\), thread \(32,0,0\): the shuffle's mask names lane 16, which this block's last",
        ),
        (
            "read_outside_mask",
            r"block \(0,0,0\), thread \(0,0,0\): reads lane 20, which is not in the shuffle's mask",
        ),
        (
            "too_much_shared",
            (
                r"block \(0,0,0\), thread \(0,0,0\): more than 48 KiB of shared memory in one block \(50176"
                r" bytes\)"
            ),
        ),
        (
            "divergent_barrier",
            (
                r"block \(0,0,0\): threads wait at different __syncthreads \(divergent barrier\): thread"
                rf" \(0,0,0\) at {SOURCE}:(\d+), thread \(16,0,0\) at {SOURCE}:(?!\1$)\d+$"
            ),
        ),
        (
            "barrier_in_uneven_loop",
            (
                r"block \(0,0,0\): threads wait at different __syncthreads \(divergent barrier\): thread"
                rf" \(0,0,0\) at {SOURCE}:(\d+), thread \(1,0,0\) at {SOURCE}:(?!\1$)\d+$"
            ),
        ),
        (
            "on_default_stream",
            r"launched on the default stream, not on the current stream \(c10::cuda::getCurrentCUDAStream",
        ),
    ],
)
def test_faults_are_errors(name, message):
    with pytest.raises(RuntimeError, match=rf"cuda emulator: {name}: " + message):
        run(name)


@pytest.mark.parametrize("name", ["grid_y_65536", "grid_z_65536", "block_1025", "block_z_65", "empty_grid"])
def test_launches_the_gpu_refuses_fail(name):
    assert run(name) == "invalid configuration argument"
    assert run("unwritten_shared") == "ok"  # the error was read and cleared, as cudaGetLastError does


def test_shared_memory_is_poisoned():
    buffer = torch.zeros(16 * 1024, dtype=torch.float32)
    assert run("unwritten_shared", buffer) == "ok"
    assert buffer[:64].isnan().all()


def test_collectives_and_atomics():
    buffer = torch.zeros(8 * 1024, dtype=torch.int64)
    buffer[5] = 10**9
    assert run("collectives", buffer) == "ok"
    # ballot + popc count, shuffle-up prefix sum, xor with width, broadcast in groups of 8,
    # atomicAdd over 3 blocks, atomicMin
    assert buffer[:6].tolist() == [86, 496, 21, 150, 768, 1000 - 255 - 2]


def edge_floats() -> torch.Tensor:
    g = torch.Generator().manual_seed(0)
    random = torch.randn(200000, generator=g) * torch.logspace(-10, 6, 200000)
    # every half and bfloat16 value, the midpoints between neighbours (ties), and their neighbours
    halves = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16).view(torch.float16).float()
    bfloats = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16).view(torch.bfloat16).float()
    grid = torch.cat([halves, bfloats]).double()
    mids = (grid[:-1] + grid[1:]) / 2
    ties = torch.cat([mids, torch.nextafter(mids, mids + 1), torch.nextafter(mids, mids - 1)]).float()
    special = torch.tensor(
        [0.0, -0.0, float("inf"), float("-inf"), float("nan"), 65504, 65519.99, 65520, 1e-8, 6e-8]
    )
    return torch.cat([random, ties, special]).contiguous()


@pytest.mark.parametrize("bfloat16", [False, True], ids=["half", "bfloat16"])
def test_float_to_16_bits_rounds_to_nearest_even(bfloat16):
    emulated_library()
    x = edge_floats()
    got = torch.ops.structops_emu_checks.bits(x, bfloat16)
    expected = x.to(torch.bfloat16 if bfloat16 else torch.float16).view(torch.int16)
    nan = x.isnan()
    assert torch.equal(got[~nan], expected[~nan])
    assert torch.ops.structops_emu_checks.values(got[nan], bfloat16).isnan().all()


def test_double_to_half_rounds_once():
    """CUDA's double to half conversion rounds the double directly (numpy's does too); through
    float it would round twice."""
    emulated_library()
    x = edge_floats().double()
    g = torch.Generator().manual_seed(1)
    x = torch.cat([x, x + torch.randn(x.shape, generator=g, dtype=torch.float64) * x.abs() * 2**-30])
    got = torch.ops.structops_emu_checks.bits(x, False).numpy()
    expected = x.numpy().astype(np.float16).view(np.int16)
    finite = ~np.isnan(x.numpy())
    assert (got[finite] == expected[finite]).all()


@pytest.mark.parametrize("bfloat16", [False, True], ids=["half", "bfloat16"])
def test_16_bits_to_float_is_exact(bfloat16):
    emulated_library()
    bits = torch.arange(-(2**15), 2**15, dtype=torch.int32).to(torch.int16)
    got = torch.ops.structops_emu_checks.values(bits, bfloat16)
    expected = bits.view(torch.bfloat16 if bfloat16 else torch.float16).float()
    assert torch.equal(got.isnan(), expected.isnan())
    finite = ~expected.isnan()
    assert torch.equal(got[finite].view(torch.int32), expected[finite].view(torch.int32))  # -0.0 included


def test_launches_from_several_threads():
    """Each OS thread emulates on its own fiber stacks: ops called from several threads at once."""
    from concurrent.futures import ThreadPoolExecutor

    emulated_library()
    xs = [torch.randn(64, 3000, generator=torch.Generator().manual_seed(i)) for i in range(8)]

    def emulated_sum(x):
        return torch.ops.structops_emu.sum.dim_IntList(x, [1])

    with ThreadPoolExecutor(4) as pool:
        concurrent = list(pool.map(emulated_sum, xs))
    for x, s in zip(xs, concurrent, strict=True):
        assert torch.equal(s, emulated_sum(x))  # the merge order is fixed: bit for bit as one at a time
