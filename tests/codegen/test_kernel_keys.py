"""The keys that make an op's kernels the runtime's (`scan: true`, `triangle: lower|upper`): their
errors, one case each, and what they generate (tests/cuda_emu/test_runtime_kernel_paths.py runs
the kernels, the conformance suites of cumsum, cumprod, logcumsumexp, tril and triu compare them
with torch)."""

import pytest
from structgen.codegen.dest.runtime_kernels import runtime_kernel_ops
from structgen.codegen.manifest import load_manifest

from tests.codegen.manifest_helpers import load_error, write_manifest

FUNC = "cumprod.out(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!)"
SCAN = (
    f"- func: {FUNC}\n  structured: True\n  precomputed:\n  - dim -> int[] scan_dim = dims(self, dim)\n"
    "  scan: true\n  meta:\n    shape: {out: '[*self]'}\n    index: {scanned: 'dims(self, dim)'}\n"
    "    combine: mul\n"
)

TRIANGLE_FUNC = "tril.out(Tensor self, SymInt diagonal=0, *, Tensor(a!) out) -> Tensor(a!)"
TRIANGLE = (
    f"- func: {TRIANGLE_FUNC}\n  structured: True\n  triangle: lower\n  meta:\n"
    "    shape: {self: '[*batch, m, n]', out: '[*batch, m, n]'}\n"
    "    index: {diagonal: {axes: 'trailing(self, 2)', offset: diagonal}}\n"
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
        "'dispatch' does not go with 'scan' (the runtime's kernel is the op's) — remove 'dispatch'",
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
            "a scan op precomputes one int[]: the scanned dim — add e.g. 'precomputed: [dim -> int[]"
            " scan_dim = dims(self, dim)]'"
        ),
    ),
    "not_structured": (
        SCAN.replace("  structured: True\n", "").split("  meta:")[0],
        4,
        "'scan' needs 'structured: True' — put it on the structured out= overload",
    ),
    "scan_and_triangle": (
        SCAN.replace("scan: true", "scan: true\n  triangle: lower"),
        6,
        "'triangle' does not go with 'scan' (one runtime kernel per op) — remove 'triangle'",
    ),
    "triangle_of_another_kind": (
        TRIANGLE.replace("triangle: lower", "triangle: diagonal"),
        3,
        (
            "'triangle' must be lower or upper, got 'diagonal' — write 'triangle: lower' (tril) or 'triangle:"
            " upper' (triu)"
        ),
        TRIANGLE_FUNC,
    ),
    "triangle_without_its_diagonal": (
        TRIANGLE.replace("SymInt diagonal=0", "int k=0").replace("offset: diagonal", "offset: k"),
        3,
        (
            "a triangle op takes an int argument 'diagonal' (the diagonal it keeps from) — add 'int"
            " diagonal=0' after the tensor"
        ),
        TRIANGLE_FUNC.replace("SymInt diagonal=0", "int k=0"),
    ),
    "diagonal_index_without_its_offset": (
        TRIANGLE.replace(", offset: diagonal", ""),
        6,
        (
            "meta.index.diagonal must map 'axes' and 'offset', got {'axes': 'trailing(self, 2)'} — write"
            " e.g. {axes: 'trailing(self, 2)', offset: diagonal} (rows and columns, and the int argument"
            " naming the diagonal)"
        ),
        TRIANGLE_FUNC,
    ),
    "diagonal_index_offset_not_an_int": (
        TRIANGLE.replace("offset: diagonal", "offset: self"),
        6,
        (
            "meta.index.diagonal.offset: 'self' is not an int argument — name the int argument whose value is"
            " the diagonal (tril's 'diagonal')"
        ),
        TRIANGLE_FUNC,
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_runtime_kernel_message(tmp_path, name):
    text, line, problem, *func = CASES[name]
    assert (
        str(load_error(tmp_path, text))
        == f"native_functions.yaml:{line}: {func[0] if func else FUNC}: {problem}"
    )


def test_a_scan_runs_the_rules_combine(tmp_path):
    manifest = load_manifest(write_manifest(tmp_path, SCAN))
    (op,) = runtime_kernel_ops(manifest)
    assert (op.family, op.op, op.self, op.arg, op.out) == ("scan", "cumprod", "self", "scan_dim", "out")
    assert (op.cpu_combine, op.cuda_op, op.cuda_int64, op.complex_pairs) == (
        "Mul",
        "WrappingProdOp",
        True,
        False,
    )
    assert (op.cpu_function, op.cuda_function) == ("cumprod_out_cpu", "cumprod_out_cuda")


def test_a_triangle_keeps_its_side_of_the_diagonal(tmp_path):
    manifest = load_manifest(write_manifest(tmp_path, TRIANGLE))
    (op,) = runtime_kernel_ops(manifest)
    assert (op.family, op.op, op.self, op.arg, op.out, op.lower) == (
        "triangle",
        "tril",
        "self",
        "diagonal",
        "out",
        True,
    )
