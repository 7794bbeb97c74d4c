"""The `scan: true` key: its errors, one case each, and what it generates (the runtime's scans
with the rule's combine; tests/cuda_emu/test_scan_paths.py runs them, the conformance suites of
cumsum, cumprod and logcumsumexp compare them with torch)."""

import pytest
from structgen.codegen.dest.scans import scan_ops
from structgen.codegen.manifest import load_manifest

from tests.codegen.manifest_helpers import load_error, write_manifest

FUNC = "cumprod.out(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!)"
SCAN = (
    f"- func: {FUNC}\n  structured: True\n  precomputed:\n  - dim -> int[] scan_dim = dims(self, dim)\n"
    "  scan: true\n  meta:\n    shape: {out: '[*self]'}\n    index: {scanned: 'dims(self, dim)'}\n"
    "    combine: mul\n"
)

CASES = {
    "not_true": (
        SCAN.replace("scan: true", "scan: mul"),
        5,
        "'scan' must be true, got 'mul' — write 'scan: true'",
    ),
    "with_dispatch": (
        SCAN.replace("scan: true", "scan: true\n  dispatch: [CPU]"),
        6,
        "'dispatch' does not go with 'scan' (the runtime's scan is the kernel) — remove 'dispatch'",
    ),
    "a_combine_no_scan_runs": (
        SCAN.replace("combine: mul", "combine: max"),
        5,
        (
            "'scan' needs meta.combine to be one of add, mul, logaddexp, got 'max' — write e.g."
            " 'combine: mul' in 'meta' (its running combine is the scan)"
        ),
    ),
    "without_its_dim": (
        SCAN.replace("  precomputed:\n  - dim -> int[] scan_dim = dims(self, dim)\n", ""),
        3,
        (
            "a scan op takes a Tensor, gives one out= Tensor and precomputes one int[] (the scanned dim)"
            " — add e.g. 'precomputed: [dim -> int[] scan_dim = dims(self, dim)]'"
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_scan_message(tmp_path, name):
    text, line, problem = CASES[name]
    assert str(load_error(tmp_path, text)) == f"native_functions.yaml:{line}: {FUNC}: {problem}"


def test_a_scan_runs_the_rules_combine(tmp_path):
    manifest = load_manifest(write_manifest(tmp_path, SCAN))
    (op,) = scan_ops(manifest)
    assert (op.op, op.self, op.dims, op.out) == ("cumprod", "self", "scan_dim", "out")
    assert (op.cpu_combine, op.cuda_op, op.cuda_int64, op.complex_pairs) == (
        "Mul",
        "WrappingProdOp",
        True,
        False,
    )
    assert (op.cpu_function, op.cuda_function) == ("cumprod_out_cpu", "cumprod_out_cuda")
