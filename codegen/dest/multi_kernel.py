"""Contexts for the multi-kernel choosers (templates/multi_kernel.cpp.j2): for each op with
``kernels:`` on a device, the impl ``dispatch:`` names (or the generated pointwise impl) becomes
a function that computes the tuning key and each variant's eligibility and runs what
structgen::autotune::choose picks.

A variant's source hash covers its manifest entry (and formula) and the hand-written files its
``kernels: sources:`` declare, so editing a kernel invalidates its cached timings. The generator
hashes the manifest part only and never reads csrc/: it writes each variant's declaration to
variant_sources.cmake, and the build (cmake/autotune_build.cmake) hashes the files into one small
translation unit, where the choosers find each hash by name (source_hash::<impl>__<variant>).
Editing a kernel then recompiles that unit alone, and editing code no variant declares
regenerates nothing.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from structgen.codegen import dtypes
from structgen.codegen.api import names
from structgen.codegen.dest.structured import _params, impl_params, shard_of
from structgen.codegen.model.kernels import KernelVariant
from structgen.codegen.model.native import DispatchKey, Manifest, StructuredGroup
from structgen.codegen.rules import cpp as rules_cpp


@dataclass(frozen=True)
class ChooserVariant:
    name: str
    function: str
    hash_symbol: str  # structgen::autotune::source_hash::<this>, defined by the build
    eligible: str  # C++ bool


@dataclass(frozen=True)
class VariantSources:
    """One line of variant_sources.cmake: what the build hashes into the variant's source hash."""

    symbol: str
    device: str  # CPU | CUDA
    manifest_hash: str
    where: str  # "native_functions.yaml: sum.IntList_out", for the build's errors
    sources: tuple[str, ...]


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


def hash_symbol(impl: str, v: KernelVariant) -> str:
    """The C++ name of the variant's source hash: unique per (op, device, variant)."""
    return names.variant_kernel(impl, v.name)


def manifest_hash(v: KernelVariant, group: StructuredGroup) -> str:
    """The manifest's part of the variant's source hash: its entry, the op's schema and formula."""
    h = hashlib.sha256(v.text.encode())
    h.update(str(group.out.func).encode())
    if group.out.pointwise is not None:
        h.update(group.out.pointwise.lowered.expr.encode())
    return h.hexdigest()


def chooser(group: StructuredGroup, key: DispatchKey) -> Chooser:
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
                hash_symbol(impl, v),
                " && ".join(f"({p})" for p in parts) or "true",
            )
        )
    params = impl_params(group)
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
    buckets: list[list[Chooser]] = [[] for _ in range(shards)]
    for group in manifest.groups:
        mk = group.out.kernels
        if mk is not None and mk.variants(key.value):
            buckets[shard_of(group.name, shards)].append(chooser(group, key))
    return [ChooserShard(key.value, tuple(b)) for b in buckets]


def variant_sources(manifest: Manifest) -> list[VariantSources]:
    """Every variant's declaration for the build (entry.py made sure hand-written variants
    declare their sources)."""
    out = []
    for group in manifest.groups:
        fn = group.out
        mk = fn.kernels
        if mk is None:
            continue
        where = f"{Path(fn.loc.path).name}: {fn.func.name}"  # no line: an edit above must not rewrite it
        for device, variants in mk.devices:
            impl = group.impl_name(DispatchKey(device))
            assert impl is not None
            for v in variants:
                out.append(
                    VariantSources(hash_symbol(impl, v), device, manifest_hash(v, group), where, mk.sources)
                )
    return out
