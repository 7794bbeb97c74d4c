"""The ``scan: true`` key: the op's CPU and CUDA kernels are the runtime's scans (structgen/cpu/
scan.h, structgen/cuda/scan.cuh) of its first tensor along the dim its one precomputed int[]
holds, with the rule's meta.combine as the step (the combine sharding merges tiles with too), so
a running product or logsumexp is a manifest entry, not a kernel."""

from __future__ import annotations

from structgen.codegen.errors import SpecError
from structgen.codegen.load import LineDict
from structgen.codegen.model import Argument, FunctionSchema

# The combines the runtime's scan kernels run.
COMBINES = ("add", "mul", "logaddexp")


def parse(path: str, entry: LineDict, op: str, schema: FunctionSchema, rule, precomputed) -> str | None:
    """The scan's combine, or None for an op without the key."""
    if "scan" not in entry:
        return None

    def fail(key: str, problem: str, fix: str) -> SpecError:
        return SpecError(path, entry.line_of(key), op, problem, fix)

    if entry["scan"] is not True:
        raise fail("scan", f"'scan' must be true, got {entry['scan']!r}", "write 'scan: true'")
    for key in ("pointwise", "kernels", "dispatch"):
        if key in entry:
            raise fail(
                key, f"'{key}' does not go with 'scan' (the runtime's scan is the kernel)", f"remove '{key}'"
            )
    combine = rule.combine if rule is not None else None
    if combine not in COMBINES:
        raise fail(
            "scan",
            f"'scan' needs meta.combine to be one of {', '.join(COMBINES)}, got {combine!r}",
            "write e.g. 'combine: mul' in 'meta' (its running combine is the scan)",
        )
    scanned = scanned_dims(precomputed)
    tensors = [a for a in schema.arguments.non_out if str(a.type) == "Tensor"]
    if len(scanned) != 1 or not tensors or len(schema.arguments.out) != 1:
        raise fail(
            "scan",
            "a scan op takes a Tensor, gives one out= Tensor and precomputes one int[] (the scanned dim)",
            "add e.g. 'precomputed: [dim -> int[] scan_dim = dims(self, dim)]'",
        )
    return combine


def scanned_dims(precomputed) -> list[Argument]:
    """The precomputed int[] values (a scan op has one: the scanned dim, wrapped)."""
    if precomputed is None:
        return []
    values = (*(a for _, args in precomputed.replace for a in args), *precomputed.add)
    return [a for a in values if str(a.type) == "int[]"]
