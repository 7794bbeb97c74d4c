"""CPU kernels run on torch's intra-op threads.

With torch's OpenMP backend, at::parallel_for silently runs serially in a translation unit built
without -fopenmp (structgen/parallel.h); a serial kernel gives correct results at half the speed
on two cores, which no numerical test notices. These tests check the threads themselves."""

import os
import subprocess
import sys
import textwrap

import pytest
import torch

OPENMP = "OpenMP" in torch.__config__.parallel_info()

# A fresh process: torch starts its OpenMP thread pool only at the first parallel region, so the
# pool appears during our call only if our kernel opened that region.
_PROBE = textwrap.dedent(
    """
    import os, sys, torch, structops
    torch.set_num_threads(int(sys.argv[1]))
    tasks = lambda: len(os.listdir("/proc/self/task"))
    before = tasks()
    x = torch.randn(1_000_000)
    {call}
    print(tasks() - before)
    """
)


def threads_started(call: str, num_threads: int) -> int:
    code = _PROBE.format(call=call)
    out = subprocess.run(
        [sys.executable, "-c", code, str(num_threads)], capture_output=True, text=True, check=True
    )
    return int(out.stdout.strip().splitlines()[-1])


CALLS = {
    "pointwise": "structops.add(x, x, alpha=2)",
    "sum": "structops.sum(x.view(1000, 1000), [1])",
}


@pytest.mark.skipif(
    not OPENMP or not os.path.isdir("/proc/self/task"), reason="needs torch's OpenMP backend and /proc"
)
@pytest.mark.parametrize("kernel", sorted(CALLS))
def test_kernel_uses_torch_threads(kernel):
    assert threads_started(CALLS[kernel], 2) >= 1, f"{kernel} ran serially under torch.set_num_threads(2)"


@pytest.mark.skipif(
    not OPENMP or not os.path.isdir("/proc/self/task"), reason="needs torch's OpenMP backend and /proc"
)
def test_one_thread_stays_serial():
    assert threads_started(CALLS["pointwise"], 1) == 0


def test_parallel_result_matches_serial():
    x = torch.randn(3_000_001)
    old = torch.get_num_threads()
    try:
        import structops

        torch.set_num_threads(1)
        serial = structops.mul_add(x, x, x)
        torch.set_num_threads(max(2, old))
        parallel = structops.mul_add(x, x, x)
    finally:
        torch.set_num_threads(old)
    torch.testing.assert_close(parallel, serial, rtol=0, atol=0)
    torch.testing.assert_close(parallel, x * x + x)


@pytest.mark.parametrize(
    ("shape", "other"),
    [((4099, 37), (37,)), ((3, 5001, 7), (5001, 1)), ((2, 3, 40000), (3, 1)), ((70001, 2), (70001, 1))],
)
@pytest.mark.parametrize("threads", [1, 2])
def test_broadcast_rows_in_blocks_match_torch_across_thread_chunks(shape, other, threads):
    """A broadcast's rows run in blocks of whole rows per call; threads split the elements where
    the grain says, mid-row too (4099 x 37 over two threads), and every element is written once."""
    g = torch.Generator().manual_seed(7)
    x, y = torch.randn(shape, generator=g), torch.randn(other, generator=g)
    old = torch.get_num_threads()
    try:
        import structops

        torch.set_num_threads(threads)
        got = structops.add(x, y, alpha=2)
        xt, yt = x.mT, y.mT if y.dim() > 1 else y[:1]  # a transposed input: rows along its strides
        got_t = structops.add(xt, yt)
    finally:
        torch.set_num_threads(old)
    assert torch.equal(got, torch.add(x, y, alpha=2))
    assert torch.equal(got_t, torch.add(xt, yt))
