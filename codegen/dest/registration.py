"""Context for registration.cpp: one m.def per manifest entry, schema verbatim."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.manifest import Manifest
from codegen.model import SchemaKind


@dataclass(frozen=True)
class Def:
    schema: str
    tags: tuple[str, ...]


def defs(manifest: Manifest) -> list[Def]:
    result = []
    for fn in manifest.functions:
        # torch.compile rejects custom ops returning aliased outputs unless tagged out/inplace.
        implied = {SchemaKind.out: ("out",), SchemaKind.inplace: ("inplace",)}.get(fn.kind, ())
        result.append(Def(str(fn.func), implied + fn.tags))
    return result
