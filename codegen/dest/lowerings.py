"""Context for the generated lowering module (python/<package>/_lowerings.py): each functional
overload of a formula op as its formula over torch ops, which Inductor traces in the op's place
(structgen/lowering.py, docs/compile.md)."""

from __future__ import annotations

from dataclasses import dataclass

from structgen.codegen.api import python as py
from structgen.codegen.model.formula import free_names
from structgen.codegen.model.native import Manifest, StructuredGroup
from structgen.codegen.model.schema import BaseTy, BaseType
from structgen.codegen.pointwise.lower import divides
from structgen.codegen.pointwise.python import python


@dataclass(frozen=True)
class Lowering:
    name: str  # the Python function's name: the overload's unambiguous name
    overload: str  # name.overload, as torch.ops.<namespace>.<name>.<overload> spells it
    params: str  # the functional's parameters, as Python (keyword-only ones after *)
    first: str  # the first tensor argument: its device is the numbers'
    promoted: tuple[str, ...]  # brought to the compute dtype (Scalar ones promote, as numbers do)
    tensors: tuple[str, ...]  # the promoted tensors
    kinds: tuple[str, ...]  # the promotion kind; two when `given`'s None-ness picks one
    given: str | None
    integer_division: bool  # NotImplemented for an integer compute dtype
    formula: str  # the formula as Python over the arguments and pw.<function>


def _params(group: StructuredGroup) -> str | None:
    """The Python parameters of the functional overload, or None where a default has no Python
    spelling (such an op stays a call)."""
    arguments = group.functional.func.arguments
    parts = []
    for a in (*arguments.positional, None, *arguments.kwarg_only):
        if a is None:  # the keyword-only ones follow
            parts += ["*"] if arguments.kwarg_only else []
            continue
        if a.default is None:
            parts.append(a.name)
            continue
        value = py.default(a.default)
        if value is None:
            return None
        parts.append(f"{a.name}={value}")
    return ", ".join(parts)


def lowering(group: StructuredGroup) -> Lowering | None:
    kernel = group.out.pointwise
    fn = group.functional
    params = _params(group) if fn is not None and kernel is not None else None
    if params is None:
        return None
    tensor = BaseType(BaseTy.Tensor)
    tensors = tuple(a.name for a in fn.func.arguments.all if a.type == tensor)
    if not set(tensors) <= free_names(kernel.tree):  # its output broadcasts a tensor it does not read
        return None
    name = fn.func.name
    return Lowering(
        name=name.unambiguous,
        overload=f"{name.name}.{name.overload_name or 'default'}",
        params=params,
        first=tensors[0],
        promoted=kernel.promoted,
        tensors=tuple(t for t in tensors if t in kernel.promoted),
        kinds=kernel.kinds,
        given=kernel.given,
        integer_division=divides(kernel.tree),
        formula=python(kernel.tree),
    )


def lowerings(manifest: Manifest) -> list[Lowering]:
    return [x for x in (lowering(g) for g in manifest.groups) if x is not None]
