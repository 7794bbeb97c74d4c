"""The keys that make an op's CPU and CUDA kernels the runtime's, so that an op of a known shape
is a manifest entry, not a kernel:

- ``scan: true``: the runtime's scans (structgen/cpu/scan.h, structgen/cuda/scan.cuh) of the
  op's first tensor along the dim its one precomputed int[] holds, with the rule's meta.combine
  as the step (the combine sharding merges tiles with too): cumsum, cumprod, logcumsumexp.
- ``triangle: lower`` / ``upper``: the runtime's triangle kernels (structgen/cpu/triangle.h,
  structgen/cuda/triangle.cuh): the op's first tensor with the elements of its two last dims
  below (upper) or above (lower) the diagonal its int argument ``diagonal`` names set to zero:
  tril, triu.
"""

from __future__ import annotations

from structgen.codegen.errors import SpecError
from structgen.codegen.load import LineDict
from structgen.codegen.model.native import RuntimeKernel
from structgen.codegen.model.schema import Argument, BaseTy, BaseType, FunctionSchema

# The combines the runtime's scan kernels run.
COMBINES = ("add", "mul", "logaddexp")
TRIANGLES = ("lower", "upper")
KEYS = ("scan", "triangle")


def parse(
    path: str, entry: LineDict, op: str, schema: FunctionSchema, rule, precomputed
) -> RuntimeKernel | None:
    """The runtime kernel the keys choose: ("scan", its combine) or ("triangle", lower or upper);
    None for an op whose kernels are its own."""
    given = [k for k in KEYS if k in entry]
    if not given:
        return None

    def fail(key: str, problem: str, fix: str) -> SpecError:
        return SpecError(path, entry.line_of(key), op, problem, fix)

    if len(given) > 1:
        raise fail(
            given[1],
            f"'{given[1]}' does not go with '{given[0]}' (one runtime kernel per op)",
            f"remove '{given[1]}'",
        )
    key = given[0]
    if entry.get("structured") is not True:
        raise fail(key, f"'{key}' needs 'structured: True'", "put it on the structured out= overload")
    for other in ("pointwise", "kernels", "dispatch"):
        if other in entry:
            problem = f"'{other}' does not go with '{key}' (the runtime's kernel is the op's)"
            raise fail(other, problem, f"remove '{other}'")
    if len(schema.arguments.out) != 1 or not _tensors(schema):
        raise fail(
            key,
            f"a '{key}' op takes a Tensor and gives one out= Tensor",
            "write e.g. 'tril.out(Tensor self, int diagonal=0, *, Tensor(a!) out) -> Tensor(a!)'",
        )
    if key == "scan":
        return RuntimeKernel(key, _scan(entry, rule, precomputed, fail))
    return RuntimeKernel(key, _triangle(entry, schema, fail))


def _scan(entry: LineDict, rule, precomputed, fail) -> str:
    if entry["scan"] is not True:
        raise fail("scan", f"'scan' must be true, got {entry['scan']!r}", "write 'scan: true'")
    combine = rule.combine if rule is not None else None
    if combine not in COMBINES:
        raise fail(
            "scan",
            f"'scan' needs meta.combine to be one of {', '.join(COMBINES)}, got {combine!r}",
            "write e.g. 'combine: mul' in 'meta' (its running combine is the scan)",
        )
    if len(scanned_dims(precomputed)) != 1:
        raise fail(
            "scan",
            "a scan op precomputes one int[]: the scanned dim",
            "add e.g. 'precomputed: [dim -> int[] scan_dim = dims(self, dim)]'",
        )
    return combine


def _triangle(entry: LineDict, schema: FunctionSchema, fail) -> str:
    value = entry["triangle"]
    if value not in TRIANGLES:
        raise fail(
            "triangle",
            f"'triangle' must be lower or upper, got {value!r}",
            "write 'triangle: lower' (tril) or 'triangle: upper' (triu)",
        )
    diagonal = next((a for a in schema.arguments.non_out if a.name == "diagonal"), None)
    if diagonal is None or diagonal.type not in (BaseType(BaseTy.int), BaseType(BaseTy.SymInt)):
        raise fail(
            "triangle",
            "a triangle op takes an int argument 'diagonal' (the diagonal it keeps from)",
            "add 'int diagonal=0' after the tensor",
        )
    return value


def _tensors(schema: FunctionSchema) -> list[Argument]:
    return [a for a in schema.arguments.non_out if a.type == BaseType(BaseTy.Tensor)]


def scanned_dims(precomputed) -> list[Argument]:
    """The precomputed int[] values (a scan op has one: the scanned dim, wrapped)."""
    if precomputed is None:
        return []
    values = (*(a for _, args in precomputed.replace for a in args), *precomputed.add)
    return [a for a in values if str(a.type) == "int[]"]


def first_tensor(schema: FunctionSchema) -> Argument:
    """The tensor a runtime kernel reads (the first Tensor argument)."""
    return _tensors(schema)[0]
