"""A structured op's ``meta:`` rule, parsed and statically checked against its schema.

    meta:
      shape:                       # input argument: a pattern; output argument: an expression
        self: "[*ba, n, k]"
        other: "[*bb, k, m]"
        out: "[*broadcast(ba, bb), n, m]"
      dtype: {out: "promote(self, other)"}      # default: promote(<every tensor input>)
      layout: {out: "like(self, other)"}        # default: contiguous
      allowed: [floating, complex]              # dtypes the tensor inputs may have, or per
                                                # argument: {indices: [int32, int64]}
      checks: ["alpha_check(alpha, out)"]       # more conditions, each an expression
      combine: add                              # how partial results over split reduced dims merge
      index: {whole: "dims(self, dim)"}         # index dims that are not parallel: whole, scanned
      positions: {indices: "trailing(self, 2)"} # a tensor holding flat positions over input axes
      vmap_as: "bmm(self, mat2)"                # the call that batches it when every tensor is batched
      affine: "out * weight + bias"             # an output is the op without them, scaled and shifted

or ``meta: custom`` (a hand-written meta function in csrc/ops/<family>/meta.cpp). docs/rules.md is the
reference.
"""

from __future__ import annotations

import dataclasses
import re

from structgen.codegen import dtypes
from structgen.codegen.errors import SpecError
from structgen.codegen.load import LineDict
from structgen.codegen.model import Argument, BaseTy, BaseType, FunctionSchema, ListType, OptionalType
from structgen.codegen.rules.check import RuleError, check_rule
from structgen.codegen.rules.spec import Check, CombineBy, Defaults, IndexKind, InputRule, OutputRule, Rule
from structgen.codegen.rules.syntax import Call, Expr, Name, RuleSyntaxError, parse_expr, parse_pattern

# How partial results of a split reduced dim merge (structgen.sharding.COMBINES says how each
# does): add (sum, matmul's k), mul (prod), max/min (amax/amin), and/or (all/any), logaddexp
# (logsumexp), mean (weighted by the tiles' shares), argmax/argmin (the output holds positions,
# meta.positions; the merge compares the input's values there).
COMBINES = ("add", "mul", "max", "min", "and", "or", "logaddexp", "mean", "argmax", "argmin")
# Kinds of index dims a rule declares (meta.index); the others are parallel, or reduced when no
# output has them. whole: an output element needs all of the dim (softmax); scanned: it needs
# the dim up to itself (cumsum; split only with a combine, which carries the earlier tiles' total).
INDEX_KINDS = ("whole", "scanned")
TENSOR_KINDS = ("tensor", "tensors", "tensor?")
KEYS = ("shape", "dtype", "layout", "allowed", "checks", "combine", "index", "positions", "vmap_as", "affine")


def arg_kind(t) -> str | None:
    """The rule language's kind for a schema type, or None if rules cannot use it."""
    if t == BaseType(BaseTy.Tensor):
        return "tensor"
    if isinstance(t, BaseType):
        return {
            BaseTy.int: "int",
            BaseTy.SymInt: "int",
            BaseTy.bool: "bool",
            BaseTy.Scalar: "scalar",
            BaseTy.ScalarType: "dtype",
            BaseTy.float: "float",
            BaseTy.str: "str",
        }.get(t.name)
    if isinstance(t, ListType):
        if t.elem == BaseType(BaseTy.Tensor):
            return "tensors"
        if t.elem in (BaseType(BaseTy.int), BaseType(BaseTy.SymInt)):
            return "ints"
        return None
    if isinstance(t, OptionalType):
        inner = arg_kind(t.elem)
        if inner in ("tensor", "int", "ints", "dtype", "scalar", "str"):
            return inner + "?"
    return None


def parse_rule(
    path: str,
    entry: LineDict,
    op: str,
    schema: FunctionSchema,
    precomputed: tuple[tuple[str, str, str | None], ...],
    defaults: Defaults | None = None,
) -> Rule | None:
    """The ``meta:`` key of a structured entry: a Rule, or None for ``meta: custom``. With
    ``defaults`` (pointwise ops) the key and its shape and layout may be left out."""
    raw = entry.get("meta")
    line = entry.line_of("meta") if "meta" in entry or defaults is None else defaults.line
    if raw is None and defaults is not None:
        raw = LineDict()
        raw.line, raw.key_lines = line, {}

    def fail(problem: str, fix: str, at: int | None = None) -> SpecError:
        return SpecError(path, at or line, op, problem, fix)

    if raw == "custom":
        return None
    if not isinstance(raw, dict):
        raise fail(
            f"'meta' must be a rule mapping or 'custom', got {raw!r}",
            "write 'meta: {shape: {out: \"broadcast(self, other)\"}}' or 'meta: custom'",
        )
    if "precomputed" in raw:
        raise fail(
            "meta.precomputed is written where each value is declared",
            "write '- dim -> int[] reduced_dims = dims(self, dim)' in the entry's 'precomputed' list",
            raw.line_of("precomputed"),
        )
    for key in raw:
        if key not in KEYS:
            raise fail(f"unknown meta key '{key}'", f"use only: {', '.join(KEYS)}", raw.line_of(key))

    def section(key: str) -> LineDict:
        value = raw.get(key, LineDict())
        if not isinstance(value, dict):
            raise fail(
                f"'meta.{key}' must map argument names to rule text",
                f"write e.g. '{key}: {{out: ...}}'",
                raw.line_of(key),
            )
        return value

    def text(value: object, where: str, at: int) -> str:
        if not isinstance(value, str):
            raise fail(f"{where} must be a string of rule text, got {value!r}", "quote the rule", at)
        return value

    def parsed(fn, value: str, where: str, at: int):
        try:
            return fn(value)
        except RuleSyntaxError as e:
            raise fail(
                f"{where}: cannot parse '{value}': {e}", "see docs/rules.md for the syntax", at
            ) from None

    kinds: dict[str, str] = {}
    for a in schema.arguments.non_out:
        kind = arg_kind(a.type)
        if kind is not None:
            kinds[a.name] = kind
    outs: tuple[Argument, ...] = schema.arguments.out
    out_names = [o.name for o in outs]
    all_names = [a.name for a in schema.arguments.non_out]

    shape = section("shape")
    inputs: list[InputRule] = []
    shapes: dict[str, tuple[Expr, int]] = {}
    for name, value in shape.items():
        at = shape.line_of(name)
        where = f"meta.shape.{name}"
        value = text(value, where, at)
        if name in out_names:
            shapes[name] = (parsed(parse_expr, value, where, at), at)
        elif name in all_names:
            if kinds.get(name) not in ("tensor", "tensors", "tensor?"):
                raise fail(
                    f"{where}: '{name}' is not a Tensor, Tensor? or Tensor[] argument, so it has no shape",
                    "give patterns to tensor arguments only",
                    at,
                )
            inputs.append(InputRule(name, kinds[name], parsed(parse_pattern, value, where, at), at))
        else:
            raise fail(
                f"{where}: '{name}' is not an argument of this op",
                f"use one of: {', '.join(all_names + out_names)}",
                at,
            )
    for o in out_names:
        if o not in shapes and defaults is not None:
            shapes[o] = (defaults.shape, raw.line_of("shape") if "shape" in raw else line)
        if o not in shapes:
            raise fail(
                f"meta.shape has no rule for output '{o}'",
                f"add '{o}: <shape expression>' to meta.shape, e.g. '{o}: broadcast(self, other)'",
                raw.line_of("shape") if "shape" in raw else line,
            )

    dtype = section("dtype")
    layout = section("layout")
    for key, sec in (("dtype", dtype), ("layout", layout)):
        for name in sec:
            if name not in out_names:
                raise fail(
                    f"meta.{key}.{name}: '{name}' is not an output",
                    f"use one of: {', '.join(out_names)}",
                    sec.line_of(name),
                )
    outputs = []
    for o in out_names:
        promoted = tuple(Name(n) for n in all_names if kinds.get(n) in ("tensor", "tensors"))
        d_line = dtype.line_of(o) if o in dtype else shapes[o][1]
        if o in dtype:
            d_expr = parsed(parse_expr, text(dtype[o], f"meta.dtype.{o}", d_line), f"meta.dtype.{o}", d_line)
        elif promoted:
            d_expr = Call("promote", promoted)  # default: every tensor input takes part
        else:
            raise fail(
                f"meta.dtype has no rule for output '{o}' and the op has no tensor input to promote",
                f"add 'dtype: {{{o}: <dtype expression>}}'",
            )
        l_expr = None
        l_line = shapes[o][1]
        if o not in layout and defaults is not None:
            l_expr = defaults.layout
        elif o in layout:
            l_line = layout.line_of(o)
            l_text = text(layout[o], f"meta.layout.{o}", l_line)
            if l_text != "contiguous":
                l_expr = parsed(parse_expr, l_text, f"meta.layout.{o}", l_line)
        is_list = isinstance(next(a for a in outs if a.name == o).type, ListType)
        if is_list and l_expr is not None:
            raise fail(
                f"meta.layout.{o}: '{o}' is a Tensor[] output, whose elements are contiguous",
                f"remove meta.layout.{o}",
                l_line,
            )
        outputs.append(OutputRule(o, shapes[o][0], d_expr, l_expr, shapes[o][1], d_line, l_line, is_list))

    def dtype_set(items: object, where: str, at: int) -> tuple[str, ...]:
        if not isinstance(items, list) or not items:
            raise fail(
                f"'{where}' must be a list of dtypes or dtype groups",
                f"write e.g. [floating, complex]; groups: {', '.join(dtypes.GROUPS)}",
                at,
            )
        try:
            return dtypes.expand(items)
        except KeyError as e:
            raise fail(
                f"{where}: unknown dtype or group '{e.args[0]}'", dtypes.UNKNOWN_DTYPE_FIX, at
            ) from None

    allowed: list[tuple[str | None, tuple[str, ...]]] = []
    if "allowed" in raw:
        at = raw.line_of("allowed")
        items = raw["allowed"]
        if isinstance(items, dict):
            for name, value in items.items():
                # A Scalar is checked by the dtype torch wraps it in (a Scalar overload's number).
                checkable = (*TENSOR_KINDS, "scalar")
                if kinds.get(name) not in checkable:
                    raise fail(
                        f"meta.allowed.{name}: '{name}' is not a tensor or Scalar argument",
                        f"use one of: {', '.join(n for n in all_names if kinds.get(n) in checkable)}",
                        items.line_of(name),
                    )
                allowed.append((name, dtype_set(value, f"meta.allowed.{name}", items.line_of(name))))
        else:
            allowed.append((None, dtype_set(items, "meta.allowed", at)))

    checks = []
    raw_checks = raw.get("checks", [])
    if not isinstance(raw_checks, list):
        raise fail(
            "'meta.checks' must be a list of expressions", "write e.g. ['n > 0']", raw.line_of("checks")
        )
    for item in raw_checks:
        at = raw.line_of("checks")
        checks.append(Check(parsed(parse_expr, text(item, "meta.checks", at), "meta.checks", at), at))

    rules_pre = []
    at = entry.line_of("precomputed")
    for name, declared, rule_text in precomputed:
        if rule_text is None:
            raise fail(
                f"precomputed value '{name}' has no rule",
                f"write it after the declaration: '... {name} = <expression>' (e.g. dims(self, dim))",
                at,
            )
        where = f"precomputed {name}"
        rules_pre.append((name, parsed(parse_expr, rule_text, where, at), declared, at))

    combine = _combine(raw, kinds, schema, fail)

    index = []
    raw_index = raw.get("index", {})
    if not isinstance(raw_index, dict):
        raise fail(
            "'meta.index' must map index-dim kinds to axes",
            f'write e.g. {{whole: "dims(self, dim)"}}; kinds: {", ".join(INDEX_KINDS)}',
            raw.line_of("index"),
        )
    for kind, value in raw_index.items():
        at = raw_index.line_of(kind)
        if kind not in INDEX_KINDS:
            raise fail(
                f"meta.index: unknown index-dim kind '{kind}'", f"use one of: {', '.join(INDEX_KINDS)}", at
            )
        for item in value if isinstance(value, list) else [value]:
            axes = parsed(parse_expr, text(item, f"meta.index.{kind}", at), f"meta.index.{kind}", at)
            call = axes if isinstance(axes, Call) and axes.fn in ("dims", "trailing") and axes.args else None
            tensor = call.args[0] if call is not None else None
            if not isinstance(tensor, Name) or kinds.get(tensor.id) != "tensor":
                raise fail(
                    f"meta.index.{kind}: '{axes}' does not name axes of a tensor argument",
                    "write dims(<tensor argument>, <dims>), e.g. 'dims(self, dim)', or trailing(<tensor "
                    "argument>, <count>)",
                    at,
                )
            index.append(IndexKind(kind, tensor.id, axes, at))

    positions = section("positions")
    for output, value in positions.items():
        at = positions.line_of(output)
        if output not in out_names and kinds.get(output) not in ("tensor", "tensor?"):
            raise fail(
                f"meta.positions: '{output}' is not an output or a tensor input",
                f"name the tensor that holds positions: one of {', '.join(out_names)}, or an input "
                "the op reads another at (index_select's index)",
                at,
            )
        axes = parsed(parse_expr, text(value, f"meta.positions.{output}", at), f"meta.positions.{output}", at)
        call = axes if isinstance(axes, Call) and axes.fn in ("dims", "trailing") and axes.args else None
        tensor = call.args[0] if call is not None else None
        if not isinstance(tensor, Name) or kinds.get(tensor.id) != "tensor":
            raise fail(
                f"meta.positions.{output}: '{axes}' does not name axes of a tensor argument",
                "write the axes the positions count over, e.g. 'trailing(self, 2)' (max_pool2d's indices) "
                "or 'dims(self, dim)' (argmax)",
                at,
            )
        index.append(IndexKind("positions", tensor.id, axes, at, output))
    merging = set(dict(combine.cases).values()) if isinstance(combine, CombineBy) else {combine}
    if merging & {"argmax", "argmin"} and not any(i.output == out_names[0] for i in index):
        name = min(merging & {"argmax", "argmin"})
        raise fail(
            f"meta.combine: {name} merges positions, but meta.positions names none for '{out_names[0]}'",
            f"add 'positions: {{{out_names[0]}: \"dims(self, dim)\"}}' (the axes its positions count over)",
            raw.line_of("combine"),
        )

    vmap_as = None
    if "vmap_as" in raw:
        at = raw.line_of("vmap_as")
        value = raw["vmap_as"]
        if not isinstance(value, str | list):
            raise fail(
                f"meta.vmap_as must be a call of another op, or cases of calls, got {value!r}",
                "write the call that computes a batch of these calls, e.g. 'bmm(self, mat2)' on mm",
                at,
            )
        vmap_as = (value, at)

    affine = None
    if "affine" in raw:
        affine = _affine(raw, kinds, out_names, fail)

    rule = Rule(
        args=tuple((a.name, kinds.get(a.name, "other")) for a in schema.arguments.non_out),
        # An optional tensor's pattern only checks dims that required tensors bind: it comes last.
        inputs=tuple(sorted(inputs, key=lambda i: i.kind == "tensor?")),
        outputs=tuple(outputs),
        checks=tuple(checks),
        allowed=tuple(allowed),
        precomputed=tuple(rules_pre),
        combine=combine,
        index=tuple(index),
        vmap_as=vmap_as,
        affine=affine,
    )
    try:
        return dataclasses.replace(rule, ir=check_rule(rule))
    except RuleError as e:
        raise fail(e.problem, e.fix, e.line) from None


def _affine(
    raw: LineDict, kinds: dict[str, str], outputs: list[str], fail
) -> tuple[str, str, str | None, int]:
    """meta.affine: "out * weight + bias", an output that is the op's with weight and bias None
    times weight plus bias, broadcasting as torch's operators do (layer_norm's elementwise
    affine over the trailing dims), or "out * weight" (rms_norm: no shift); optional tensors."""
    at = raw.line_of("affine")
    value = raw["affine"]
    fix = "write the output, the scale and the shift, e.g. 'affine: \"out * weight + bias\"'"
    pattern = r"\s*(\w+)\s*\*\s*(\w+)\s*(?:\+\s*(\w+)\s*)?"
    found = re.fullmatch(pattern, value) if isinstance(value, str) else None
    if found is None:
        raise fail(f"meta.affine must be '<output> * <weight> [+ <bias>]', got {value!r}", fix, at)
    out, weight, bias = found.groups()
    if out not in outputs:
        raise fail(f"meta.affine: '{out}' is not an output", f"name one of: {', '.join(outputs)}", at)
    for name in (weight, bias) if bias else (weight,):
        if kinds.get(name) != "tensor?":
            raise fail(
                f"meta.affine: '{name}' is not an optional tensor argument",
                "name the Tensor? arguments that scale and shift the output (vmap calls the op without them)",
                at,
            )
    return out, weight, bias, at


def _combine(raw: LineDict, kinds: dict[str, str], schema: FunctionSchema, fail) -> str | CombineBy | None:
    """meta.combine: one combine, or one per value of an int argument (a loss's ``reduction``:
    ``{reduction: {1: mean, 2: add}}``; a value not listed reduces nothing)."""
    combine = raw.get("combine")
    at = raw.line_of("combine")
    if isinstance(combine, dict):
        ints = [a.name for a in schema.arguments.non_out if a.type == BaseType(BaseTy.int)]
        if len(combine) != 1 or next(iter(combine)) not in ints:
            raise fail(
                f"meta.combine: {dict(combine)!r} must map one int argument to a combine per value",
                f"write e.g. {{reduction: {{1: mean, 2: add}}}}; int arguments: {', '.join(ints) or 'none'}",
                at,
            )
        arg, cases = next(iter(combine.items()))
        if not isinstance(cases, dict) or not cases or not all(type(v) is int for v in cases):
            raise fail(
                f"meta.combine.{arg}: {cases!r} must map values of '{arg}' to combines",
                f"write e.g. {{{arg}: {{1: mean, 2: add}}}}",
                at,
            )
        for value in cases.values():
            _known(value, fail, at)
        return CombineBy(arg, tuple(sorted(cases.items())))
    if combine is not None:
        _known(combine, fail, at)
    return combine


def _known(combine: object, fail, at: int) -> None:
    if combine not in COMBINES:
        raise fail(f"meta.combine: unknown combine '{combine}'", f"use one of: {', '.join(COMBINES)}", at)
