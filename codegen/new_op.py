"""structgen new-op NAME [--kind pointwise|structured]: the first step of adding an op.

It appends the op's entries to the manifest and, for a structured op, writes its CPU impl with
the exact signature the generated header declares. For a name torch has (logaddexp, tril), the
entries start from the installed torch's schemas: its functional, out= and inplace overloads with
their types (SymInt), defaults and overload names, the kind its tags say (pointwise, or
structured), and torch's op as the reference, so the conformance suite says what is left to
write: the body is an identity (out = self) until the formula or kernel computes the op. For
another name the scaffold is an identity tested against ``self.clone()``, and passes its suite
before any edit. The author then changes the rule or formula, the kernel and the reference,
rebuilding and testing after each step (README, "Adding or changing an operator").
"""

from __future__ import annotations

import keyword
from dataclasses import dataclass
from pathlib import Path

from structgen.codegen.dest.structured import hooks
from structgen.codegen.errors import SpecError
from structgen.codegen.manifest import load_manifest

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

IMPL = """// {name}: its CPU impl (structgen signature {name} prints what to define).
#include <{header}>

namespace {namespace}::impl {{

// Writes `out`, whose sizes, strides and dtype the meta function computed from the rule.
{declaration_without_semicolon} {{
  out.copy_(self);  // the scaffold: an identity; replace it by the op
}}

}}  // namespace {namespace}::impl
"""


TORCH_POINTWISE = """
- func: {out}
  structured: True
  pointwise: "{identity}"  # the formula of torch's {name} (docs/pointwise.md); the scaffold's: {first}
  tags: [pointwise]

- func: {functional}
  structured_delegate: {out_name}
  tags: [pointwise]
  tests:
    reference: torch.ops.aten.{name}  # torch's own op: the suite compares with it from the start
  doc: {name} of each element (as torch.ops.aten.{name}).
"""

TORCH_STRUCTURED = """
- func: {out}
  structured: True
  dispatch: [CPU]  # its CPU impl: {sources}/ops/{name}/cpu.cpp (structgen signature {name})
  meta:  # the meta function, as a rule (docs/rules.md): the scaffold's keeps {first}'s shape
    shape: {{{first}: "[*batch]", out: "[*batch]"}}
    layout: {{out: "like({first})"}}

- func: {functional}
  structured_delegate: {out_name}
  derivatives:  # what backward gives each tensor input (docs/autograd.md); or: not_differentiable
    {first}: "grad"
  tests:
    reference: torch.ops.aten.{name}  # torch's own op: the suite compares with it from the start
  doc: {name} (as torch.ops.aten.{name}).
"""

INPLACE = """
- func: {inplace}
  structured_delegate: {out_name}
{tags}"""


@dataclass(frozen=True)
class Scaffold:
    manifest: Path
    impl: Path | None  # the kernel file written (structured ops)
    picked: str = ""  # for a name torch has: the overloads and the kind taken from its schemas


@dataclass(frozen=True)
class TorchOp:
    """What the installed torch's schemas say of an op name: the scaffold's starting point."""

    functional: str  # schema text, without "aten::"
    out: str
    out_name: str  # "logaddexp.out"
    inplace: str | None
    kind: str  # pointwise (torch tags it so) or structured
    tensors: tuple[str, ...]  # the tensor arguments' names
    why: str  # which kind and family, and why, for the author

    def entries(self, name: str, namespace: str, sources: str) -> str:
        template = TORCH_POINTWISE if self.kind == "pointwise" else TORCH_STRUCTURED
        text = template.format(
            name=name,
            out=self.out,
            out_name=self.out_name,
            functional=self.functional,
            first=self.tensors[0],
            identity=" + ".join((self.tensors[0], *(f"0 * {t}" for t in self.tensors[1:]))),
            namespace=namespace,
            sources=sources,
        )
        if self.inplace is not None:
            tags = "  tags: [pointwise]\n" if self.kind == "pointwise" else ""
            text += INPLACE.format(inplace=self.inplace, out_name=self.out_name, tags=tags)
        return text


def torch_op(name: str) -> TorchOp | None:
    """torch's aten::``name`` as a functional, out= and (where torch has one) inplace overload;
    None where torch has no op of that name. ValueError where its schemas do not make that
    triple with one Tensor output (say what to write instead)."""
    import torch

    schemas = [s for s in torch._C._jit_get_schemas_for_operator(f"aten::{name}") if "Dimname" not in str(s)]
    if not schemas:
        return None

    def writes(s) -> bool:
        return any(a.is_out for a in s.arguments)

    plain = [s for s in schemas if not writes(s)]
    functional = next((s for s in plain if s.overload_name == ""), plain[0] if plain else None)
    if functional is None:
        raise ValueError(f"torch's {name} has no functional overload: write its entries by hand")
    names = [a.name for a in functional.arguments]
    out = next(
        (s for s in schemas if writes(s) and [a.name for a in s.arguments if not a.is_out] == names), None
    )
    listed = "; ".join(str(s).removeprefix("aten::") for s in schemas)
    if out is None or len(out.returns) != 1 or len(functional.returns) != 1:
        raise ValueError(
            f"torch's {name} has no out= overload with one Tensor output to derive it from ({listed}): "
            "write its entries by hand, starting from these schemas"
        )
    inplace = next(
        (
            s
            for s in torch._C._jit_get_schemas_for_operator(f"aten::{name}_")
            if s.overload_name == functional.overload_name
        ),
        None,
    )
    tensors = [a.name for a in functional.arguments if isinstance(a.type, torch.TensorType)]
    if not tensors:
        raise ValueError(f"torch's {name} takes no tensor ({listed}): write its entries by hand")
    packet = getattr(torch.ops.aten, name)
    tags = getattr(packet, functional.overload_name or "default").tags
    pointwise = torch.Tag.pointwise in tags
    reduction = "keepdim" in names
    kind = "pointwise" if pointwise else "structured"
    why = (
        "pointwise: torch tags it pointwise (a formula gives its CPU and CUDA kernels and its gradient)"
        if pointwise
        else "structured, a reduction (it takes keepdim): write its rule's reduced dims and its kernel"
        if reduction
        else "structured: torch does not tag it pointwise (write its rule and its CPU kernel)"
    )
    return TorchOp(
        str(functional).removeprefix("aten::"),
        str(out).removeprefix("aten::"),
        f"{name}.{out.overload_name}",
        str(inplace).removeprefix("aten::") if inplace is not None else None,
        kind,
        tuple(tensors),
        why,
    )


def new_op(name: str, kind: str | None, manifest: Path, root: Path) -> Scaffold:
    """Append the op's entries to ``manifest`` and write its impl under the project's first
    source folder (``root``/csrc/ops by default). ``kind`` None: the kind torch's schemas give a
    name torch has. ValueError (nothing written) for a name that is taken or not an identifier,
    or no kind for a name torch does not have."""
    if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("so_") or name.endswith("_"):
        raise ValueError(
            f"'{name}' cannot name an op: use a Python identifier, not a keyword, without a trailing '_'"
        )
    before = manifest.read_text()
    taken = load_manifest(manifest)
    if any(f.func.name.name.base == name for f in taken.functions):
        raise ValueError(f"{manifest}: an op called '{name}' exists already")
    sources = taken.project.sources[0] if taken.project.sources else "csrc"
    namespace = taken.project.cpp_namespace
    from_torch = torch_op(name) if kind is None else None
    if kind is None and from_torch is None:
        raise ValueError(f"torch has no op called '{name}': give --kind pointwise or --kind structured")
    kind = from_torch.kind if from_torch is not None else kind
    impl = root / sources / "ops" / name / "cpu.cpp"
    if kind == "structured" and impl.exists():
        raise ValueError(f"{impl} exists already")
    if from_torch is not None:
        entries = from_torch.entries(name, namespace, sources)
    else:
        template = POINTWISE if kind == "pointwise" else STRUCTURED
        entries = template.format(name=name, namespace=namespace, sources=sources)
    manifest.write_text(before.rstrip("\n") + "\n" + entries)
    try:
        written = load_manifest(manifest)
    except SpecError:
        manifest.write_text(before)
        raise
    picked = ""
    if from_torch is not None:
        overloads = [from_torch.functional, from_torch.out] + (
            [from_torch.inplace] if from_torch.inplace else []
        )
        picked = "from torch's schemas: " + "; ".join(overloads) + f"\nkind: {from_torch.why}"
    if kind == "pointwise":
        return Scaffold(manifest, None, picked)
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
    return Scaffold(manifest, impl, picked)
