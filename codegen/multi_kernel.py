"""An op's ``kernels:`` key: several kernel variants per device, one chosen per call by measurement.

    kernels:
      key: "[bucket_pow2(numel(out)), innermost(self, reduced_dims)]"   # the tuning key: ints
      CPU:
      - {name: rows, kernel: sum_out_cpu_rows}                           # a hand-written hook
      - {name: columns, kernel: sum_out_cpu_columns, when: "numel(out) > 1", dtypes: [floating]}
      CUDA:                                                              # a pointwise op's variants
      - {name: b256u2, params: {block: 256, unroll: 2}}                  # are generated: parameters
      sources: [ops/reduce, structgen/cpu/reduce.h]              # the code the variants run

``sources`` lists the files and folders under csrc/ that the variants' code is in (required when a
variant is hand-written). The generator never reads them: it forwards them to the build
(variant_sources.cmake), which hashes them into each variant's source hash, the autotune cache
key (cmake/autotune_build.cmake; docs/multi_kernel.md).

Every variant has the impl's signature (what ``dispatch:`` names, or the generated pointwise
impl); the generator writes that impl as a chooser (structgen/autotune.h). ``key`` and ``when``
are rule-language expressions over the impl's arguments: the op's arguments (precomputed values
in place of those they replace), the dims its input patterns bind, and its outputs, with the
tuning builtins of rules/builtins.py (numel, bucket_pow2, contiguous, stride, innermost).
"""

from __future__ import annotations

from structgen.codegen import dtypes as dtype_table
from structgen.codegen.errors import SpecError
from structgen.codegen.load import LineDict
from structgen.codegen.model.kernels import KernelVariant, MultiKernel
from structgen.codegen.model.rule_tree import ShapeList
from structgen.codegen.rules.syntax import RuleSyntaxError, parse_expr

KEYS = ("key", "CPU", "CUDA", "sources")
VARIANT_KEYS = ("name", "kernel", "params", "when", "dtypes")
# The parameters of generated (pointwise) kernels per device, with the values each may take.
PARAMS = {
    "CPU": {"grain": range(1, 1 << 40)},
    "CUDA": {"block": (64, 128, 256, 512, 1024), "unroll": range(1, 9)},
}


def parse_kernels(
    path: str, entry: LineDict, op: str, devices: tuple[str, ...], generated: bool
) -> MultiKernel | None:
    """``devices``: the dispatch keys the op has impls for; ``generated``: a pointwise op, whose
    variants are parameters of its generated kernels rather than hand-written hooks."""
    if "kernels" not in entry:
        return None
    raw = entry["kernels"]  # None for a bare 'kernels:', which the mapping check reports
    line = entry.line_of("kernels")

    def fail(problem: str, fix: str, at: int | None = None) -> SpecError:
        return SpecError(path, at or line, op, problem, fix)

    if not isinstance(raw, dict):
        raise fail(
            "'kernels' must map 'key' and dispatch keys to variant lists",
            'write e.g. \'kernels: {key: "[bucket_pow2(numel(out))]", CPU: [{name: a, kernel: a_cpu},'
            " ...]}'",
        )
    for k in raw:
        if k not in KEYS:
            raise fail(f"unknown kernels key '{k}'", f"use only: {', '.join(KEYS)}", raw.line_of(k))
    key_text = raw.get("key")
    key_line = raw.line_of("key") if "key" in raw else line
    if not isinstance(key_text, str):
        raise fail(
            "'kernels' needs a tuning 'key': a list of ints in the rule language",
            "add e.g. 'key: \"[bucket_pow2(numel(out))]\"'",
            key_line,
        )
    try:
        key = parse_expr(key_text)
    except RuleSyntaxError as e:
        raise fail(
            f"kernels.key: cannot parse '{key_text}': {e}", "see docs/rules.md for the syntax", key_line
        ) from None
    if not isinstance(key, ShapeList) or not key.items:
        raise fail(
            f"kernels.key must be a non-empty list of ints, got '{key_text}'",
            "write e.g. '[bucket_pow2(n), bucket_pow2(k)]'",
            key_line,
        )

    sources = _sources(raw, fail)
    out_devices = []
    for device in ("CPU", "CUDA"):
        if device not in raw:
            continue
        at = raw.line_of(device)
        if device not in devices:
            raise fail(
                f"kernels.{device}: the op has no {device} impl to choose variants for",
                f"add a {device} kernel to 'dispatch', or remove kernels.{device}",
                at,
            )
        items = raw[device]
        if not isinstance(items, list) or len(items) < 2:
            raise fail(
                f"kernels.{device} must list two or more variants", "one kernel needs no 'kernels' key", at
            )
        variants: list[KernelVariant] = []
        for item in items:
            variants.append(_variant(item, device, generated, fail, at))
        names = [v.name for v in variants]
        dup = next((n for n in names if names.count(n) > 1), None)
        if dup:
            raise fail(
                f"kernels.{device}: variant name '{dup}' is used twice", "give each variant its own name", at
            )
        out_devices.append((device, tuple(variants)))
    if not out_devices:
        raise fail("'kernels' lists no variants", f"add variant lists under {' or '.join(devices)}")
    return MultiKernel(tuple(key.items), key_text, line, key_line, tuple(out_devices), sources)


def _sources(raw: LineDict, fail) -> tuple[str, ...]:
    """``sources``: relative paths under csrc/, checked for form only (the build checks they exist)."""
    if "sources" not in raw:
        return ()
    at = raw.line_of("sources")
    items = raw["sources"]
    example = "write e.g. 'sources: [ops/reduce, structgen/cpu/reduce.h]'"
    if not isinstance(items, list) or not items:
        raise fail(
            "kernels.sources must list the files or folders under csrc/ the variants' code is in", example, at
        )
    out = []
    for item in items:
        if not isinstance(item, str) or not item:
            raise fail(f"kernels.sources: {item!r} is not a path", example, at)
        parts = item.split("/")
        if item.startswith("csrc/"):
            raise fail(
                f"kernels.sources: '{item}' starts with csrc/; paths are under csrc/ already",
                f"write '{item.removeprefix('csrc/')}'",
                at,
            )
        if item.startswith("/") or "\\" in item or any(p in ("", ".", "..") for p in parts):
            raise fail(f"kernels.sources: '{item}' is not a plain relative path under csrc/", example, at)
        if not all(c.isalnum() or c in "._-/" for c in item):
            raise fail(
                f"kernels.sources: '{item}' has characters a build path should not have",
                "use letters, digits and . _ - / only",
                at,
            )
        out.append(item)
    return tuple(out)


def _variant(item: object, device: str, generated: bool, fail, at: int) -> KernelVariant:
    if not isinstance(item, dict):
        raise fail(
            f"kernels.{device}: a variant must be a mapping, got {item!r}",
            "write e.g. '{name: rows, kernel: sum_out_cpu_rows}'",
            at,
        )
    at = getattr(item, "line", at)
    for k in item:
        if k not in VARIANT_KEYS:
            raise fail(
                f"kernels.{device}: unknown variant key '{k}'", f"use only: {', '.join(VARIANT_KEYS)}", at
            )
    name = item.get("name")
    if not isinstance(name, str) or not name.isidentifier():
        raise fail(
            f"kernels.{device}: a variant needs a 'name' that is an identifier, got {name!r}",
            "write e.g. 'name: rows'",
            at,
        )
    where = f"kernels.{device}.{name}"
    kernel = item.get("kernel")
    params: tuple[tuple[str, int], ...] = ()
    if generated:
        if kernel is not None:
            raise fail(
                f"{where}: a pointwise op's kernels are generated from its formula",
                f"give generation parameters instead: 'params: {{{', '.join(PARAMS[device])}: ...}}'",
                at,
            )
        raw_params = item.get("params")
        if not isinstance(raw_params, dict) or not raw_params:
            raise fail(
                f"{where}: a generated variant needs 'params'",
                f"write e.g. 'params: {{{next(iter(PARAMS[device]))}: ...}}'",
                at,
            )
        for k, v in raw_params.items():
            allowed = PARAMS[device].get(k)
            if allowed is None:
                raise fail(
                    f"{where}: unknown {device} parameter '{k}'", f"use: {', '.join(PARAMS[device])}", at
                )
            if not isinstance(v, int) or isinstance(v, bool) or v not in allowed:
                shown = (
                    ", ".join(map(str, allowed))
                    if isinstance(allowed, tuple)
                    else f"{allowed.start}..{allowed.stop - 1}"
                )
                raise fail(f"{where}: parameter {k}={v!r} is out of range", f"use one of {shown}", at)
        params = tuple(sorted(raw_params.items()))
    else:
        if "params" in item:
            raise fail(
                f"{where}: 'params' configure generated kernels; this op's kernels are hand-written",
                "write a hook per variant ('kernel: <name>') and share code in C++",
                at,
            )
        if not isinstance(kernel, str) or not kernel.isidentifier():
            raise fail(
                f"{where}: a variant needs 'kernel', the hand-written function it runs, got {kernel!r}",
                "name a function with the impl's signature, defined in csrc/ops/<family>/",
                at,
            )
    when = None
    if "when" in item:
        text = item["when"]
        if not isinstance(text, str):
            raise fail(f"{where}.when must be a condition in the rule language, got {text!r}", "quote it", at)
        try:
            when = parse_expr(text)
        except RuleSyntaxError as e:
            raise fail(
                f"{where}.when: cannot parse '{text}': {e}", "see docs/rules.md for the syntax", at
            ) from None
    dtypes = None
    if "dtypes" in item:
        raw_dtypes = item["dtypes"]
        if not isinstance(raw_dtypes, list) or not raw_dtypes:
            raise fail(f"{where}.dtypes must be a list of dtypes or groups", "write e.g. [floating]", at)
        try:
            dtypes = dtype_table.expand(raw_dtypes)
        except KeyError as e:
            raise fail(
                f"{where}.dtypes: unknown dtype or group '{e.args[0]}'", dtype_table.UNKNOWN_DTYPE_FIX, at
            ) from None
    text = repr(sorted((str(k), str(v)) for k, v in item.items()))
    return KernelVariant(name, kernel, params, when, dtypes, at, text)
