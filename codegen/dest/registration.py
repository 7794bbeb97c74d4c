"""Context for registration.cpp: one m.def per manifest entry, schema verbatim."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.manifest import Manifest
from codegen.model import ListType, SchemaKind


@dataclass(frozen=True)
class Def:
    schema: str
    tags: tuple[str, ...]
    # "out" or "inplace" from the schema's kind: torch.compile rejects custom ops returning
    # aliased outputs unless so tagged. torch 2.11 has neither tag (they came with 2.12/2.13), so
    # registration.cpp adds it only where CMake found it in the installed torch.
    kind_tag: str | None


def defs(manifest: Manifest) -> list[Def]:
    kind_tags = {SchemaKind.out: "out", SchemaKind.inplace: "inplace"}

    def kind_tag(fn) -> str | None:
        # torch 2.13 functionalizes Tag.out ops by their single-tensor outs only; an out= with a
        # Tensor(a!)[] output returns nothing (no alias) and is auto-functionalized as a mutating op.
        if fn.kind is SchemaKind.out and any(isinstance(o.type, ListType) for o in fn.func.arguments.out):
            return None
        return kind_tags.get(fn.kind)

    return [Def(str(fn.func), fn.tags, kind_tag(fn)) for fn in manifest.functions]


def no_derivative(manifest: Manifest) -> tuple[str, ...]:
    """Functional overloads: they return fresh tensors, so autograd would flow through them, and
    backward must fail instead (registration.cpp gives them torch's not-implemented kernel)."""
    return tuple(str(f.func.name) for f in manifest.functions if f.kind in (SchemaKind.functional, SchemaKind.mutable))
