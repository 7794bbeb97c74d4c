"""Contexts for the multi-kernel choosers (templates/multi_kernel.cpp.j2): for each op with
``kernels:`` on a device, the impl ``dispatch:`` names (or the generated pointwise impl) becomes
a function that computes the tuning key and each variant's eligibility and runs what
structops::autotune::choose picks.

A variant's source hash covers its manifest entry (and formula) and the hand-written code it may
run (see source_hash), so editing a kernel invalidates its cached timings.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from codegen import dtypes
from codegen.api import names
from codegen.dest.structured import _impl_params, _params, shard_of
from codegen.multi_kernel import KernelVariant
from codegen.native import DispatchKey, Manifest, StructuredGroup
from codegen.rules import cpp as rules_cpp


@dataclass(frozen=True)
class ChooserVariant:
    name: str
    function: str
    source_hash: str
    eligible: str  # C++ bool


@dataclass(frozen=True)
class Chooser:
    header: str
    impl: str
    params: str
    op: str  # "sum.IntList_out": the autotune cache's and the pins' name
    op_base: str  # what rule messages start with
    device_type: str
    key_text: str  # a C++ string literal
    lines: tuple[str, ...]
    key: tuple[str, ...]
    variants: tuple[ChooserVariant, ...]
    call_args: str  # the impl's arguments before its outputs, each followed by ", "
    outs: tuple[str, ...]


@dataclass(frozen=True)
class ChooserShard:
    key: str
    choosers: tuple[Chooser, ...]


def variant_function(impl: str, v: KernelVariant) -> str:
    """The function a variant runs: its hook, or the generated kernel ``<impl>__<name>``."""
    return v.kernel or names.variant_kernel(impl, v.name)


def _sources(root: str) -> dict[Path, str]:
    csrc = Path(root) / "csrc" if root else None
    if csrc is None or not csrc.is_dir():
        return {}
    return {
        p: p.read_text(errors="replace")
        for p in sorted(csrc.rglob("*"))
        if p.suffix in (".h", ".cuh", ".cpp", ".cu") and p.is_file()
    }


def source_hash(
    v: KernelVariant, device: str, group: StructuredGroup, sources: dict[Path, str], root: str
) -> str:
    """The variant's manifest entry and formula, and every hand-written file its code may reach:
    the device's kernel folder (csrc/cpu/ or csrc/cuda/: a hook may call into any file there),
    the shared headers (csrc/include/) and the runtime (csrc/*.cpp)."""
    h = hashlib.sha256(v.text.encode())
    h.update(str(group.out.func).encode())
    if group.out.pointwise is not None:
        h.update(group.out.pointwise.lowered.expr.encode())
    reached = ("include", device.lower())
    for path, text in sources.items():
        parts = path.relative_to(Path(root) / "csrc").parts
        if len(parts) == 1 or parts[0] in reached:
            h.update("/".join(parts).encode())
            h.update(text.encode())
    return h.hexdigest()[:16]


def chooser(group: StructuredGroup, key: DispatchKey, sources: dict[Path, str], root: str) -> Chooser:
    fn = group.out
    mk = fn.kernels
    assert mk is not None and fn.rule is not None
    variants = mk.variants(key.value)
    outs = tuple(o.name for o in fn.func.arguments.out)
    code = rules_cpp.tuning(dict(mk.tuning)[key.value])
    impl = group.impl_name(key)
    assert impl is not None
    first_out = names.cpp_name(outs[0])
    out_variants = []
    for v, cond in zip(variants, code.conditions):
        parts = [cond] if cond else []
        if v.dtypes is not None:
            mask = " | ".join(f"rules::bit({dtypes.scalar_type(d)})" for d in v.dtypes)
            parts.append(f"(rules::bit({first_out}.scalar_type()) & ({mask})) != 0")
        out_variants.append(
            ChooserVariant(
                v.name,
                variant_function(impl, v),
                source_hash(v, key.value, group, sources, root),
                " && ".join(f"({p})" for p in parts) or "true",
            )
        )
    params = _impl_params(group)
    out_names = tuple(names.cpp_name(o) for o in outs)
    call_args = "".join(f"{b.name}, " for b in params if b.name not in out_names)
    return Chooser(
        header=names.group_header(group.name),
        impl=impl,
        params=_params(params),
        op=str(fn.func.name),
        op_base=fn.func.name.name.base,
        device_type=f"c10::DeviceType::{key.value}",
        key_text=json.dumps(mk.key_text),
        lines=code.lines,
        key=code.key,
        variants=tuple(out_variants),
        call_args=call_args,
        outs=out_names,
    )


def chooser_shards(manifest: Manifest, key: DispatchKey, shards: int) -> list[ChooserShard]:
    sources = _sources(manifest.root)
    buckets: list[list[Chooser]] = [[] for _ in range(shards)]
    for group in manifest.groups:
        mk = group.out.kernels
        if mk is not None and mk.variants(key.value):
            buckets[shard_of(group.name, shards)].append(chooser(group, key, sources, manifest.root))
    return [ChooserShard(key.value, tuple(b)) for b in buckets]
