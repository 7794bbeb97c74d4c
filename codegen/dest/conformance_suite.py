"""Context for the generated conformance test modules: one OpSpec per structured op."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.api import python
from codegen.conformance import DTYPES
from codegen.manifest import DispatchKey, Manifest, StructuredGroup
from codegen.model import BaseTy, BaseType, ListType
from codegen.pointwise.model import CUDA_TYPES

# What an op kind is tested with when the manifest names no dtypes.
DEFAULT_DTYPES = {
    "pointwise": DTYPES,
    "reduction": ("float32", "float64", "float16", "bfloat16", "int64", "int32", "bool"),
    "other": ("float32",),
}


@dataclass(frozen=True)
class SuiteSpec:
    name: str
    kind: str
    functional: str | None
    inplace: str | None
    out: str | None
    outs: tuple[str, ...]  # the out overload's output arguments
    positional: tuple[str, ...]
    kwarg_only: tuple[str, ...]
    tensor_args: tuple[str, ...]
    defaults: tuple[tuple[str, str], ...]  # name -> Python source
    arg_values: tuple[tuple[str, str], ...]  # name -> Python source of a tuple
    reference: str  # Python source of a callable, or "None"
    dtypes: tuple[str, ...]
    devices: tuple[str, ...]  # the devices the op has kernels for ("cpu", "cuda")
    skips: tuple[tuple[str, str], ...]
    cuda_skips: tuple[tuple[str, str], ...]  # dtypes the CUDA kernels do not cover, with why
    tolerance: tuple[tuple[str, float, float], ...]
    domain: str
    extremes: bool
    errors: tuple[tuple[str, str, bool], ...]  # (args source, match, raised from data)
    samples: tuple[str, ...]  # argument-list sources over t(*shape)
    dynamic_output_shape: bool
    list_out: bool  # the one output is a Tensor(a!)[]
    out_dtype: str  # the manifest's out_dtype: castable | exact | dtype_argument
    kernel_variants: tuple[tuple[str, tuple[str, ...]], ...] = ()  # device -> variant names (`kernels:`)


def _kind(group: StructuredGroup) -> str:
    tags = group.out.tags
    return "pointwise" if "pointwise" in tags else "reduction" if "reduction" in tags else "other"


def suite_spec(group: StructuredGroup) -> SuiteSpec:
    args = group.out.func.arguments
    non_out = args.non_out
    tests = group.tests
    defaults = []
    for a in non_out:
        if a.default is not None:
            defaults.append((a.name, python.default(a.default) or "None"))
    kind = _kind(group)
    tensor_args = tuple(a.name for a in non_out if a.type == BaseType(BaseTy.Tensor))
    dtypes = tests.dtypes if tests and tests.dtypes else DEFAULT_DTYPES[kind]
    return SuiteSpec(
        name=group.name,
        kind=kind,
        functional=str(group.functional.func.name) if group.functional else None,
        inplace=str(group.inplace.func.name) if group.inplace else None,
        out=str(group.out.func.name),
        outs=tuple(a.name for a in args.out),
        positional=tuple(a.name for a in args.positional),
        kwarg_only=tuple(a.name for a in args.kwarg_only if a not in args.out),
        tensor_args=tensor_args,
        defaults=tuple(defaults),
        arg_values=tuple((n, "(" + "".join(f"{v}, " for v in vals) + ")") for n, vals in tests.arg_values)
        if tests
        else (),
        reference=tests.reference if tests else "None",
        dtypes=dtypes,
        devices=tuple(
            key.value.lower()
            for key in (DispatchKey.CPU, DispatchKey.CUDA)
            if key in dict(group.out.dispatch)
        ),
        skips=tests.skip if tests else (),
        cuda_skips=tuple(
            (d, "the generated CUDA kernels have no complex dtypes yet (docs/pointwise.md)")
            for d in dtypes
            if group.out.pointwise is not None and d not in CUDA_TYPES
        )
        + (tests.cuda_skip if tests else ()),
        tolerance=tests.tolerance if tests else (),
        domain=tests.domain if tests else "any",
        extremes=tests.extremes if tests else True,
        errors=tuple((e.args, e.match, e.data) for e in tests.errors) if tests else (),
        samples=tests.samples if tests else (),
        dynamic_output_shape=group.dynamic_output_shape,
        list_out=any(isinstance(o.type, ListType) for o in args.out),
        out_dtype=group.out.out_dtype,
        kernel_variants=tuple((d.lower(), tuple(v.name for v in vs)) for d, vs in group.out.kernels.devices)
        if group.out.kernels
        else (),
    )


def suite_specs(manifest: Manifest) -> list[SuiteSpec]:
    return [suite_spec(g) for g in manifest.groups if g.functional is not None]
