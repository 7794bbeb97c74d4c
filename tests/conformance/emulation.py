"""The ops' CUDA path on the CPU: generated wrappers, host glue and device code built as host C++
(libstructops_cuda_emu.so) and run by the emulator in tests/cuda_emu (docs/cuda_emulation.md)."""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import torch

from codegen.dest.conformance_suite import SuiteSpec

NAMESPACE = "structops_emu"


@functools.cache
def emulated_library() -> torch.library.Library:
    """torch.ops.structops_emu: every op's CUDA path registered for CPU tensors, with structops'
    own schemas. Loaded once per process: a second definition of the namespace would fail."""
    import structops

    path = Path(structops.ops_library).with_name("libstructops_cuda_emu.so")
    if not path.exists():
        raise AssertionError(
            f"{path.name} is missing: build with STRUCTOPS_CUDA_EMULATION=ON (tools/setup.sh does, "
            "on a torch without CUDA) to run the CUDA kernels on the CPU emulator"
        )
    library = torch.library.Library(NAMESPACE, "DEF")
    names = {
        n.partition(".")[0] for n in torch._C._dispatch_get_all_op_names() if n.startswith("structops::")
    }
    for name in sorted(names):
        for schema in torch._C._jit_get_schemas_for_operator(name):
            library.define(str(schema).removeprefix("structops::"))
    torch.ops.load_library(str(path))
    return library


def emulated(spec: SuiteSpec) -> SuiteSpec:
    """``spec`` with its overloads resolved in torch.ops.structops_emu."""
    emulated_library()
    return dataclasses.replace(spec, namespace=NAMESPACE)
