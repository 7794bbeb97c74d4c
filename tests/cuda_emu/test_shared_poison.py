"""Reads of shared memory no thread wrote: the emulator fills each block's shared arrays with a
poison byte (0xff: NaN, -1) before first use, and a kernel family gives the same bits under a
second poison (0x00: 0.0, 0) as under the first. On a GPU unwritten shared memory holds whatever
the last block left there, so a result that depends on it is wrong somewhere. The conformance
suite's emulated_cuda check does the same on every sample of every op with a CUDA kernel
(structgen/conformance/emulation.py: poison_checked); these are the kernel families at the shapes
that cross their paths (test_schedule.py's calls)."""

import pytest
import torch
from structgen.conformance.emulation import emulated_library, poison_checked

from tests.cuda_emu.test_schedule import CALLS

pytestmark = pytest.mark.skipif(
    torch.cuda.is_available(),
    reason="a GPU is present: it runs these kernels (tests/runtime/test_cuda.py, the cuda_matches_cpu check)",
)


def unwritten(poison: int, kernel: str = "") -> torch.Tensor:
    """What the unwritten_shared check kernel reads from a shared array it never wrote."""
    emulated_library()
    buffer = torch.zeros(16 * 1024, dtype=torch.float32)
    torch.ops.structops_emu_checks.set_shared_poison(poison, kernel)
    try:
        assert torch.ops.structops_emu_checks.run("unwritten_shared", buffer) == "ok"
    finally:
        torch.ops.structops_emu_checks.set_shared_poison(0xFF)
    return buffer[:64].view(torch.int32)


def test_unwritten_shared_memory_holds_the_poison():
    assert (unwritten(0xFF) == -1).all()
    assert (unwritten(0x00) == 0).all()
    assert (unwritten(0x5A) == 0x5A5A5A5A).all()
    assert (unwritten(0x00, "unwritten_shared") == 0).all()
    assert (unwritten(0x00, "another_kernel") == -1).all()  # a poison for one kernel only


def test_a_poison_is_a_byte():
    emulated_library()
    with pytest.raises(ValueError, match=r"set_shared_poison: the poison is a byte \(0 to 255\), got 256"):
        torch.ops.structops_emu_checks.set_shared_poison(256)


def test_a_read_of_unwritten_shared_memory_is_named():
    def call():
        buffer = torch.zeros(16 * 1024, dtype=torch.float32)
        torch.ops.structops_emu_checks.run("unwritten_shared", buffer)
        return buffer

    emulated_library()
    with pytest.raises(AssertionError, match=r"^the check: unwritten_shared reads shared memory no thread"):
        poison_checked(call, "the check")


@pytest.mark.parametrize("call", CALLS)
def test_results_do_not_depend_on_the_poison(call):
    emulated_library()
    poison_checked(CALLS[call], call)
