"""Contexts for the ops whose kernels are the runtime's (codegen/kernel_keys.py): per op, a CPU
impl and a CUDA impl, each one call of the runtime's family (scans: structgen/cpu/scan.h,
structgen/cuda/scan.cuh + scan_host.h; triangles: structgen/cpu/triangle.h,
structgen/cuda/triangle.cuh + triangle_host.h), and the device entry points they launch through.
All such ops share one file per device: the runtime's loops are the code, an op adds lines."""

from __future__ import annotations

from dataclasses import dataclass

from structgen.codegen import kernel_keys
from structgen.codegen.api import names
from structgen.codegen.dest.structured import op_header
from structgen.codegen.model.native import DispatchKey, Manifest, StructuredGroup

# Per scan combine: the CPU enumerator (ScanCombine), the CUDA op template, whether the CUDA
# kernels take int64 (a logaddexp has no integer form) and whether a complex scan is two real ones.
_COMBINES = {
    "add": ("Add", "SumOp", True, True),
    "mul": ("Mul", "WrappingProdOp", True, False),
    "logaddexp": ("LogAddExp", "LogAddExpOp", False, False),
}

# The generated files, when the manifest has such ops (gen.py lists them by kind).
CPU_FILE = "src/runtime_kernels_cpu.cpp"
CUDA_FILE = "src/runtime_kernels_cuda.cu"
CUDA_HOST_FILE = "src/runtime_kernels_cuda_host.cpp"


@dataclass(frozen=True)
class RuntimeKernelOp:
    family: str  # scan | triangle
    op: str  # what messages start with: "cumprod"
    header: str
    cpu_function: str
    cpu_params: str
    cuda_function: str
    cuda_params: str
    run: str  # the device entry point that runs it (structured.device_entries)
    self: str  # the tensor the kernel reads
    out: str
    # scan: the precomputed int[] holding the dim; triangle: the diagonal argument
    arg: str
    # scan: ScanCombine enumerator, cuda_kernels op template, int64 kernels, complex as
    # pairs; triangle: lower
    cpu_combine: str = ""
    cuda_op: str = ""
    cuda_int64: bool = False
    plan: str = ""  # scan: the device entry point that plans the launch
    complex_pairs: bool = False
    lower: bool = False


def runtime_kernel_groups(manifest: Manifest) -> list[StructuredGroup]:
    return [g for g in manifest.groups if g.out.runtime_kernel is not None]


def runtime_kernel_op(group: StructuredGroup) -> RuntimeKernelOp:
    fn = group.out
    kernel = fn.runtime_kernel
    header = op_header(group)
    cpu, cuda = (
        next(k for k in header.kernels if k.key == key.value and k.variant is None)
        for key in (DispatchKey.CPU, DispatchKey.CUDA)
    )
    common = {
        "family": kernel.family,
        "op": fn.func.name.name.base,
        "header": names.group_header(group.name),
        "cpu_function": cpu.name,
        "cpu_params": cpu.params,
        "cuda_function": cuda.name,
        "cuda_params": cuda.params,
        "run": header.device_entries[-1].name,
        "self": names.cpp_name(kernel_keys.first_tensor(fn.func).name),
        "out": names.cpp_name(fn.func.arguments.out[0].name),
    }
    if kernel.family == "triangle":
        return RuntimeKernelOp(**common, arg=names.cpp_name("diagonal"), lower=kernel.variant == "lower")
    (dims,) = kernel_keys.scanned_dims(fn.precomputed)
    cpu_combine, cuda_op, int64, pairs = _COMBINES[kernel.variant]
    return RuntimeKernelOp(
        **common,
        arg=names.cpp_name(dims.name),
        plan=header.device_entries[0].name,
        cpu_combine=cpu_combine,
        cuda_op=cuda_op,
        cuda_int64=int64,
        complex_pairs=pairs,
    )


def runtime_kernel_ops(manifest: Manifest) -> list[RuntimeKernelOp]:
    return [runtime_kernel_op(g) for g in runtime_kernel_groups(manifest)]
