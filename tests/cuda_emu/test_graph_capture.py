"""While a CUDA graph is captured the host glue may not synchronise: it reads no device flag and
copies no index to the host; the kernels check the data and __trap() on a bad value, as torch's
device-side asserts do. The emulated stream captures on request (set_capturing), so these paths
run here; tests/runtime/test_cuda.py captures real graphs on a GPU."""

import pytest
import torch

from tests.conformance.emulation import emulated_library
from tests.conformance.spec import op as ops

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
