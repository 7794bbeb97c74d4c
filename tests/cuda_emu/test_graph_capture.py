"""While a CUDA graph is captured the host glue may not synchronise: it reads no device flag and
copies no index to the host; the kernels check the data and __trap() on a bad value, as torch's
device-side asserts do. The emulated stream captures on request (set_capturing), so these paths
run here, and a host synchronisation fails meanwhile as on a GPU: the runtime API's, and the
glue's reads of device memory, which go through structgen/cuda/host.h (linted below: in the
emulated build device memory is CPU tensors, whose reads nothing else could stop).
tests/runtime/test_cuda.py captures real graphs on a GPU."""

import re
from pathlib import Path

import pytest
import torch
from structgen.conformance.emulation import emulated, emulated_library
from structgen.conformance.samples import samples
from structgen.conformance.spec import functional, load_specs
from structgen.conformance.spec import op as ops
from structgen.conformance.tensors import seeded_calls

pytestmark = pytest.mark.skipif(
    torch.cuda.is_available(),
    reason="a GPU is present: it runs these kernels (tests/runtime/test_cuda.py, the cuda_matches_cpu check)",
)


@pytest.fixture
def capturing():
    emulated_library()
    torch.ops.structops_emu_checks.set_capturing(True)
    yield
    torch.ops.structops_emu_checks.set_capturing(False)


X = torch.randn(6, 5)
BAD = {
    # op, arguments with a bad value, the kernel that traps, the eager error
    "index_select": (
        ("index_select", X, 0, torch.tensor([0, 6])),
        "select_kernel",
        "index 6 is out of range",
    ),
    "embedding": (("embedding", X, torch.tensor([[1, -1]])), "select_kernel", "index -1 is out of range"),
    "take": (("take", X, torch.tensor([3, 30])), "take_kernel", "index 30 is out of range"),
    "gather": (("gather", X, 1, torch.tensor([[0, 5]])), "gather_kernel", "index 5 is out of range"),
    "embedding_bag index": (
        ("embedding_bag", X, torch.tensor([0, 9]), torch.tensor([0])),
        "embedding_bag_kernel",
        "index 9 is out of range",
    ),
    "embedding_bag offsets": (
        ("embedding_bag", X, torch.tensor([0, 1]), torch.tensor([0, 3])),
        "embedding_bag_kernel",
        "'offsets' must be non-decreasing and at most 2",
    ),
    "embedding_bag first offset": (
        ("embedding_bag", X, torch.tensor([0, 1]), torch.tensor([1])),
        "embedding_bag_kernel",
        "offsets\\[0\\] must be 0",
    ),
    "binary_cross_entropy": (
        ("binary_cross_entropy", torch.tensor([0.5, 1.5]), torch.tensor([0.0, 1.0])),
        "loss_kernel",
        "all elements of input should be between 0 and 1",
    ),
    "cross_entropy_loss": (
        ("cross_entropy_loss", torch.randn(2, 3), torch.tensor([0, 3])),
        "cross_entropy_kernel",
        "target 3 is out of bounds for 3 classes",
    ),
}


@pytest.mark.parametrize("case", BAD)
def test_bad_data_while_capturing_traps_in_the_kernel(case, capturing):
    (op, *args), kernel, _ = BAD[case]
    with pytest.raises(RuntimeError, match=rf"cuda emulator: {kernel}.*__trap\(\)"):
        ops("structops_emu", op)(*args)


@pytest.mark.parametrize("case", BAD)
def test_bad_data_in_eager_mode_raises_the_cpu_message(case):
    (op, *args), _, message = BAD[case]
    emulated_library()
    for namespace in ("structops_emu", "structops"):
        with pytest.raises((IndexError, RuntimeError), match=message):
            ops(namespace, op)(*args)


@pytest.mark.parametrize("case", BAD)
def test_good_data_while_capturing_matches_the_cpu(case, capturing):
    (op, *args), _, _ = BAD[case]
    good = [a.clamp(0, 1) if isinstance(a, torch.Tensor) and a.dtype == torch.int64 else a for a in args]
    if op == "binary_cross_entropy":
        good = [a.clamp(0, 1) for a in args]
    if case == "embedding_bag first offset":  # the first bag starts at the first index
        good[-1] = torch.tensor([0])
    emulated = ops("structops_emu", op)(*good)
    torch.testing.assert_close(emulated, ops("structops", op)(*good))


# --- host synchronisations -------------------------------------------------------------------

SYNCS = ["stream_synchronize", "device_synchronize", "memcpy_to_host", "memcpy_async_to_host"]
SYNCS += ["c10_synchronize"]  # CUDAStream::synchronize(), which raises as C10_CUDA_CHECK does


def run_case(name: str) -> str:
    return torch.ops.structops_emu_checks.run(name, torch.zeros(16 * 1024, dtype=torch.int32))


@pytest.mark.parametrize("name", SYNCS)
def test_host_synchronisations_fail_while_capturing(name, capturing):
    if name == "c10_synchronize":
        with pytest.raises(RuntimeError, match="^CUDA error: operation not permitted when stream is"):
            run_case(name)
    else:
        assert run_case(name) == "operation not permitted when stream is capturing"
    assert run_case("memcpy_async_on_device") == "ok"  # a copy between device buffers is captured


@pytest.mark.parametrize("name", SYNCS)
def test_host_synchronisations_outside_a_capture(name):
    emulated_library()
    assert run_case(name) == "ok"


def test_the_glue_reads_device_memory_only_outside_a_capture():
    emulated_library()
    assert torch.ops.structops_emu_checks.read_on_host(torch.tensor([7])) == 7
    torch.ops.structops_emu_checks.set_capturing(True)
    try:
        with pytest.raises(
            RuntimeError,
            match=r"^read_on_host: reads device memory on the host while a CUDA graph is captured \(",
        ):
            torch.ops.structops_emu_checks.read_on_host(torch.tensor([7]))
    finally:
        torch.ops.structops_emu_checks.set_capturing(False)


CUDA_SPECS = [s for s in load_specs() if "cuda" in s.devices]


@pytest.mark.parametrize("spec", CUDA_SPECS, ids=lambda s: s.name)
def test_every_op_runs_while_capturing(spec, capturing):
    """The first sample of each dtype gives the same bits while capturing as in eager mode: no op's
    host glue reads device memory then (structgen/cuda/host.h raises if it does)."""
    emu = functional(emulated(spec))
    skipped = dict(spec.skips) | dict(spec.cuda_skips)
    for dtype in [d for d in spec.dtypes if d not in skipped]:
        for s in samples(spec, "cpu", dtype):
            try:
                s.clone().call(functional(spec))
            except (RuntimeError, IndexError):  # a sample the CPU impl refuses (the emulated_cuda check's)
                continue
            with seeded_calls(spec.seeded):  # a random op draws from one seed both times
                torch.ops.structops_emu_checks.set_capturing(False)
                eager = s.clone().call(emu)
                torch.ops.structops_emu_checks.set_capturing(True)
                captured = s.clone().call(emu)
            eager, captured = (r if isinstance(r, tuple | list) else (r,) for r in (eager, captured))
            for e, c in zip(eager, captured, strict=True):
                assert torch.equal(bits(e), bits(c)), f"{spec.name} {dtype} {s!r}"
            break


def bits(t: torch.Tensor) -> torch.Tensor:
    return t.contiguous().view(-1).view(torch.uint8)


# --- the glue's host reads, linted -------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
GLUE = [*sorted((ROOT / "structops/csrc/ops").glob("*/cuda_host.cpp"))]
GLUE += [ROOT / "codegen/templates/kernels_cuda_host.cpp.j2"]
# Direct spellings of a synchronising read of device memory (or of a synchronisation) in C++.
HOST_READ = re.compile(
    r"(?:\.|\bat::)(?:item|cpu|_local_scalar_dense|equal|allclose|nonzero|is_nonzero)\s*[<(]"
    r"|\bkCPU\b|DeviceType::CPU|\bcudaMemcpy\w*|\bcuda(?:Stream|Device)Synchronize\b|\.synchronize\s*\("
)


def test_the_glue_reads_device_memory_only_through_host_h():
    """Every read of device memory in the CUDA host glue goes through cuda_host::to_host() or
    cuda_host::item() (structgen/cuda/host.h), which raise while a graph is captured: a direct
    .item() would pass in the emulator (its device memory is CPU tensors) and fail on a GPU."""
    found = {}
    for path in GLUE:
        code = re.sub(r"//.*", "", re.sub(r"\{#.*?#\}", "", path.read_text(), flags=re.DOTALL))
        lines = [line.strip() for line in code.splitlines() if HOST_READ.search(line)]
        if lines:
            found[str(path.relative_to(ROOT))] = lines
    assert not found, (
        "read device memory through cuda_host::to_host() / cuda_host::item() (structgen/cuda/host.h), "
        f"not directly: {found}"
    )
