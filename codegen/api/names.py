"""Names of generated C++ functions, structs and files: one place, so emitters agree."""

from __future__ import annotations

from codegen.manifest import DispatchKey, NativeFunction, StructuredGroup

NAMESPACE = "structops"  # the torch library namespace: torch.ops.structops.*


def meta_function(group: StructuredGroup) -> str:
    """The hand-written (or, later, rule-generated) meta hook: structops::meta::<name>."""
    return group.name


def meta_result_struct(group: StructuredGroup) -> str:
    return f"{group.name}_meta"


def wrapper(fn: NativeFunction, key: DispatchKey) -> str:
    return f"wrapper_{key.value}_{fn.func.name.unambiguous}"


def group_header(group_name: str) -> str:
    """Per-op declaration header, so editing one op recompiles only what includes it."""
    return f"structops/ops/{group_name}.h"


def qualified_op(fn: NativeFunction) -> str:
    """``add.out``: how the op is named inside the library (and after torch.ops.structops.)."""
    return str(fn.func.name)


def variant_kernel(impl: str, variant: str) -> str:
    """A generated kernel variant's function (manifest ``kernels:`` with ``params``): ``<impl>__<name>``."""
    return f"{impl}__{variant}"
