"""The kernels' results do not depend on the order in which blocks and threads run: each call gives
the same bits with the emulator's blocks and threads run in reverse order. A missing barrier, or
two blocks racing on one value, would show here (the GPU runs them in any order)."""

import pytest
import torch
from structgen.conformance.emulation import emulated_library
from structgen.conformance.spec import op

pytestmark = pytest.mark.skipif(
    torch.cuda.is_available(),
    reason="a GPU is present: it runs these kernels (tests/runtime/test_cuda.py, the cuda_matches_cpu check)",
)


def emu(qualified: str):
    return op("structops_emu", qualified)


g = torch.Generator().manual_seed(0)
X = torch.randn(2, 70000, generator=g)
CALLS = {
    "sum, two passes": lambda: emu("sum.dim_IntList")(X, [1]),
    "sum, columns": lambda: emu("sum.dim_IntList")(X.reshape(-1, 40)[:3000], [0]),
    "sum, narrow columns split": lambda: emu("sum.dim_IntList")(X.reshape(-1, 5)[:1000], [0]),
    "amax, block rows": lambda: emu("amax")(X.reshape(-1, 1000), [1]),
    "argmax": lambda: emu("argmax")(X.reshape(-1, 700), 1),
    "softmax, chunked": lambda: emu("softmax.int")(X, 1),
    "softmax, a warp per row": lambda: emu("softmax.int")(X.reshape(-1, 10)[:50], 1),
    "layer_norm, a warp per row": lambda: emu("layer_norm")(X.reshape(-1, 10)[:50], [10]),
    "layer_norm, chunked": lambda: emu("layer_norm")(X, [70000]),
    "var, chunked": lambda: emu("var.correction")(X, [1]),
    "cumsum, chunked": lambda: emu("cumsum")(X, 1),
    "cumsum, columns": lambda: emu("cumsum")(X.reshape(-1, 40)[:3000], 0),
    "batch_norm": lambda: emu("batch_norm")(X.reshape(700, 200), None, None, None, None, True, 0.1, 1e-5),
    "masked_select": lambda: emu("masked_select")(X, X > 0.5),
    "mm": lambda: emu("mm")(X.reshape(-1, 100)[:130], X.reshape(100, -1)[:, :70]),
    "cross_entropy": lambda: emu("cross_entropy_loss")(X.reshape(-1, 40)[:500], torch.arange(500) % 40),
    "embedding_bag": lambda: emu("embedding_bag")(
        X.reshape(-1, 70)[:50], torch.arange(300) % 50, torch.tensor([0, 7, 100])
    ),
    "add, strided": lambda: emu("add.Tensor")(X.reshape(-1, 100).t(), X[0, :1400]),
    "complex prod, warp rows": lambda: emu("prod.dims")(
        1 + torch.view_as_complex(X.reshape(-1, 350, 2)) / 64, 1
    ),
    "complex logsumexp, warp rows": lambda: emu("logsumexp")(
        torch.view_as_complex(X.reshape(-1, 350, 2)), [1]
    ),
}


def test_the_reverse_schedule_runs_blocks_the_other_way():
    """A racy kernel (every block writes its index to one place) tells the two orders apart."""
    emulated_library()
    buffer = torch.zeros(16 * 1024, dtype=torch.int32)
    torch.ops.structops_emu_checks.run("last_block_wins", buffer)
    assert buffer[0] == 2
    torch.ops.structops_emu_checks.set_reverse_schedule(True)
    try:
        torch.ops.structops_emu_checks.run("last_block_wins", buffer)
    finally:
        torch.ops.structops_emu_checks.set_reverse_schedule(False)
    assert buffer[0] == 0


@pytest.mark.parametrize("call", CALLS)
def test_results_do_not_depend_on_the_schedule(call):
    emulated_library()
    forward = CALLS[call]()
    torch.ops.structops_emu_checks.set_reverse_schedule(True)
    try:
        backward = CALLS[call]()
    finally:
        torch.ops.structops_emu_checks.set_reverse_schedule(False)
    forward = forward if isinstance(forward, tuple) else (forward,)
    backward = backward if isinstance(backward, tuple) else (backward,)
    for f, b in zip(forward, backward, strict=True):
        assert torch.equal(bits(f), bits(b)), call


def bits(t: torch.Tensor) -> torch.Tensor:
    """The bytes of a result: equal bits, NaN payloads and signed zeros included."""
    return t.contiguous().view(-1).view(torch.uint8)
