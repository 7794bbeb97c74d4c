"""python -m codegen new-op NAME --kind pointwise|structured: the first step of adding an op.

It appends the op's entries to the manifest and, for a structured op, writes its CPU impl with
the exact signature the generated header declares, so that the op builds and its conformance
suite passes before any edit: the scaffold is an identity (out = self, tested against
``self.clone()``). The author then changes the schema, the rule or formula, the kernel and the
reference, rebuilding and testing after each step (README, "Adding or changing an operator").
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass
from pathlib import Path

from codegen.dest.structured import hooks
from codegen.errors import SpecError
from codegen.manifest import load_manifest

POINTWISE = """
- func: {name}.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  pointwise: "self"  # the formula (docs/pointwise.md)
  tags: [pointwise]

- func: {name}(Tensor self) -> Tensor
  structured_delegate: {name}.out
  tags: [pointwise]
  tests:
    reference: "lambda self: self.clone()"  # the torch function the op mirrors, e.g. torch.exp
    scaffold: true  # not compared with a torch operator of this name yet: remove once written
  doc: {name} of each element.

- func: {name}_(Tensor(a!) self) -> Tensor(a!)
  structured_delegate: {name}.out
  tags: [pointwise]
"""

STRUCTURED = """
- func: {name}.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  dispatch: [CPU]  # {namespace}::impl::{name}_out_cpu, in {sources}/ops/{name}/cpu.cpp
  meta:  # the meta function, as a rule (docs/rules.md)
    shape: {{self: "[*batch]", out: "[*batch]"}}
    layout: {{out: "like(self)"}}

- func: {name}(Tensor self) -> Tensor
  structured_delegate: {name}.out
  derivatives:  # what backward gives each tensor input (docs/autograd.md); or: not_differentiable
    self: "grad"
  tests:
    reference: "lambda self: self.clone()"  # the torch function the op mirrors
    scaffold: true  # not compared with a torch operator of this name yet: remove once written
  doc: {name} of a tensor.
"""

IMPL = """// {name}: its CPU impl (python -m codegen signature {name} prints what to define).
#include <{header}>

namespace {namespace}::impl {{

// Writes `out`, whose sizes, strides and dtype the meta function computed from the rule.
{declaration_without_semicolon} {{
  out.copy_(self);  // the scaffold: an identity; replace it by the op
}}

}}  // namespace {namespace}::impl
"""


@dataclass(frozen=True)
class Scaffold:
    manifest: Path
    impl: Path | None  # the kernel file written (structured ops)


def new_op(name: str, kind: str, manifest: Path, root: Path) -> Scaffold:
    """Append the op's entries to ``manifest`` and write its impl under the project's first
    source folder (``root``/csrc/ops by default). ValueError (nothing written) for a name that is
    taken or not an identifier."""
    if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("so_") or name.endswith("_"):
        raise ValueError(
            f"'{name}' cannot name an op: use a Python identifier, not a keyword, without a trailing '_'"
        )
    before = manifest.read_text()
    taken = load_manifest(manifest)
    if any(f.func.name.name.base == name for f in taken.functions):
        raise ValueError(f"{manifest}: an op called '{name}' exists already")
    sources = taken.project.sources[0] if taken.project.sources else "csrc"
    impl = root / sources / "ops" / name / "cpu.cpp"
    if kind == "structured" and impl.exists():
        raise ValueError(f"{impl} exists already")
    template = POINTWISE if kind == "pointwise" else STRUCTURED
    namespace = taken.project.cpp_namespace
    manifest.write_text(
        before.rstrip("\n") + "\n" + template.format(name=name, namespace=namespace, sources=sources)
    )
    try:
        written = load_manifest(manifest)
    except SpecError:
        manifest.write_text(before)
        raise
    if kind == "pointwise":
        return Scaffold(manifest, None)
    (op,) = hooks(written, name)
    (hook,) = op.hooks
    impl.parent.mkdir(parents=True, exist_ok=True)
    impl.write_text(
        IMPL.format(
            name=name,
            namespace=namespace,
            header=op.header,
            declaration_without_semicolon=hook.declaration.removesuffix(";"),
        )
    )
    return Scaffold(manifest, impl)
