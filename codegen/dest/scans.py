"""Contexts for the generated scan kernels (manifest ``scan: true``): per scan op, a CPU impl, a
CUDA impl and its device entry points, each a call of the runtime's scan with the op's combine
(structgen/cpu/scan.h, structgen/cuda/scan.cuh, structgen/cuda/scan_host.h). All scan ops share
one file per device: the runtime's loops are the code, an op adds a few lines."""

from __future__ import annotations

from dataclasses import dataclass

from structgen.codegen import scan_key
from structgen.codegen.api import names
from structgen.codegen.dest.structured import op_header
from structgen.codegen.native import DispatchKey, Manifest, StructuredGroup

# Per combine: the CPU enumerator (cpu::ScanCombine), the CUDA op template, whether the CUDA
# kernels take int64 (a logaddexp has no integer form) and whether a complex scan is two real ones.
_COMBINES = {
    "add": ("Add", "SumOp", True, True),
    "mul": ("Mul", "WrappingProdOp", True, False),
    "logaddexp": ("LogAddExp", "LogAddExpOp", False, False),
}

# The generated files, when the manifest has scan ops (gen.py lists them by kind).
CPU_FILE = "src/scans_cpu.cpp"
CUDA_FILE = "src/scans_cuda.cu"
CUDA_HOST_FILE = "src/scans_cuda_host.cpp"


@dataclass(frozen=True)
class ScanOp:
    op: str  # what messages start with: "cumprod"
    header: str
    cpu_function: str
    cpu_params: str
    cuda_function: str
    cuda_params: str
    entry: str  # the device entry points' name part: <entry>_scan, <entry>_scan_plan
    self: str  # the scanned tensor's C++ name
    dims: str  # the precomputed int[] that holds the scanned dim
    out: str
    cpu_combine: str  # cpu::ScanCombine enumerator
    cuda_op: str  # cuda_kernels op template
    cuda_int64: bool
    complex_pairs: bool


def scan_groups(manifest: Manifest) -> list[StructuredGroup]:
    return [g for g in manifest.groups if g.out.scan is not None]


def scan_op(group: StructuredGroup) -> ScanOp:
    fn = group.out
    header = op_header(group)
    cpu, cuda = (
        next(k for k in header.kernels if k.key == key.value and k.variant is None)
        for key in (DispatchKey.CPU, DispatchKey.CUDA)
    )
    (dims,) = scan_key.scanned_dims(fn.precomputed)
    tensor = next(a for a in fn.func.arguments.non_out if str(a.type) == "Tensor")
    cpu_combine, cuda_op, int64, pairs = _COMBINES[fn.scan]
    return ScanOp(
        op=fn.func.name.name.base,
        header=names.group_header(group.name),
        cpu_function=cpu.name,
        cpu_params=cpu.params,
        cuda_function=cuda.name,
        cuda_params=cuda.params,
        entry=group.name,
        self=names.cpp_name(tensor.name),
        dims=names.cpp_name(dims.name),
        out=names.cpp_name(fn.func.arguments.out[0].name),
        cpu_combine=cpu_combine,
        cuda_op=cuda_op,
        cuda_int64=int64,
        complex_pairs=pairs,
    )


def scan_ops(manifest: Manifest) -> list[ScanOp]:
    return [scan_op(g) for g in scan_groups(manifest)]
