"""Context for registration.cpp: one m.def per manifest entry, schema verbatim, and the
Functionalize kernels of the written overloads."""

from __future__ import annotations

from dataclasses import dataclass

from structgen.codegen.model.native import Manifest, StructuredGroup
from structgen.codegen.model.schema import SchemaKind


@dataclass(frozen=True)
class Def:
    schema: str
    tags: tuple[str, ...]


@dataclass(frozen=True)
class Functionalization:
    """A written overload (out= or inplace) traced as a call of its functional sibling."""

    written: str  # "add.out"
    functional: str  # "add.Tensor"
    dtype_from_written: bool  # out_dtype: dtype_argument (a missing dtype= is the written tensor's)


def defs(manifest: Manifest) -> list[Def]:
    """Out= overloads last: a call of the packet (torch.ops.myops.add(x, y)) tries the
    overloads in this order, and a schema that does not match costs a raised error (7.3 us for
    add, 2.4 us with the functional first, as aten's)."""
    return [
        Def(str(fn.func), fn.tags)
        for fn in sorted(manifest.functions, key=lambda fn: fn.kind is SchemaKind.out)
    ]


def functionalizations(manifest: Manifest) -> list[Functionalization]:
    """Every out= and inplace overload whose functional sibling computes exactly what it writes.

    An overload that also writes inputs other than its outs (batch_norm.out's running statistics)
    has no such sibling: the mutable functional writes them too, so torch auto-functionalizes it.
    """
    return [
        Functionalization(
            str(fn.func.name), str(group.functional.func.name), group.out.out_dtype == "dtype_argument"
        )
        for group in manifest.groups
        if group.functional is not None
        for fn in _written_overloads(group)
    ]


def _written_overloads(group: StructuredGroup):
    if group.functional.kind is not SchemaKind.functional:
        return ()
    return tuple(f for f in (group.out, group.inplace) if f is not None)


def no_derivative(manifest: Manifest) -> tuple[str, ...]:
    """Functional overloads without derivatives: they return fresh tensors, so autograd would flow
    through them, and backward must fail instead (registration.cpp gives them torch's
    not-implemented kernel). Ops with derivatives get kernels in autograd_<N>.cpp."""
    differentiable = {str(g.functional.func.name) for g in manifest.groups if g.autograd is not None}
    return tuple(
        str(f.func.name)
        for f in manifest.functions
        if f.kind in (SchemaKind.functional, SchemaKind.mutable)
        and str(f.func.name) not in differentiable
        and f.composite is None  # differentiated through the call
    )
