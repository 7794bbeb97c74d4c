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
from structgen.codegen.model.rule import Check, CombineBy, Defaults, IndexKind, InputRule, OutputRule, Rule
from structgen.codegen.model.rule_tree import Call, Expr, Name
from structgen.codegen.model.schema import BaseTy, BaseType, FunctionSchema, ListType, OptionalType
from structgen.codegen.rules.check import RuleError, check_rule
from structgen.codegen.rules.syntax import RuleSyntaxError, parse_expr, parse_pattern

# How partial results of a split reduced dim merge (structgen.sharding.COMBINES says how each
# does): add (sum, matmul's k), mul (prod), max/min (amax/amin), and/or (all/any), logaddexp
# (logsumexp), mean (weighted by the tiles' shares), argmax/argmin (the output holds positions,
# meta.positions; the merge compares the input's values there).
COMBINES = ("add", "mul", "max", "min", "and", "or", "logaddexp", "mean", "argmax", "argmin")
# Kinds of index dims a rule declares (meta.index); the others are parallel, or reduced when no
# output has them. whole: an output element needs all of the dim (softmax); scanned: it needs
# the dim up to itself (cumsum; split only with a combine, which carries the earlier tiles' total);
# diagonal: two axes (rows, columns) whose elements the op treats by their place relative to the
# diagonal an int argument names (tril's j - i <= diagonal): a tile is the op on its part with
# that argument shifted by the tile's first row minus its first column.
INDEX_KINDS = ("whole", "scanned", "diagonal")
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


@dataclasses.dataclass(frozen=True)
class _Meta:
    """What each meta key's parser reads: the raw mapping, the op's argument kinds and outputs,
    and how to fail at a line (the key's own, or meta's)."""

    path: str
    op: str
    line: int
    raw: LineDict
    schema: FunctionSchema
    kinds: dict[str, str]  # argument name -> rule kind, for the arguments rules can use

    @property
    def out_names(self) -> list[str]:
        return [o.name for o in self.schema.arguments.out]

    @property
    def all_names(self) -> list[str]:
        return [a.name for a in self.schema.arguments.non_out]

    def fail(self, problem: str, fix: str, at: int | None = None) -> SpecError:
        return SpecError(self.path, at or self.line, self.op, problem, fix)

    def section(self, key: str) -> LineDict:
        value = self.raw.get(key, LineDict())
        if not isinstance(value, dict):
            raise self.fail(
                f"'meta.{key}' must map argument names to rule text",
                f"write e.g. '{key}: {{out: ...}}'",
                self.raw.line_of(key),
            )
        return value

    def text(self, value: object, where: str, at: int) -> str:
        if not isinstance(value, str):
            raise self.fail(f"{where} must be a string of rule text, got {value!r}", "quote the rule", at)
        return value

    def parsed(self, fn, value: str, where: str, at: int):
        try:
            return fn(value)
        except RuleSyntaxError as e:
            raise self.fail(
                f"{where}: cannot parse '{value}': {e}", "see docs/rules.md for the syntax", at
            ) from None

    def expr(self, value: object, where: str, at: int) -> Expr:
        return self.parsed(parse_expr, self.text(value, where, at), where, at)


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
    if raw == "custom":
        return None
    if not isinstance(raw, dict):
        raise SpecError(
            path,
            line,
            op,
            f"'meta' must be a rule mapping or 'custom', got {raw!r}",
            "write 'meta: {shape: {out: \"broadcast(self, other)\"}}' or 'meta: custom'",
        )
    kinds = {a.name: k for a in schema.arguments.non_out if (k := arg_kind(a.type)) is not None}
    m = _Meta(path, op, line, raw, schema, kinds)
    if "precomputed" in raw:
        raise m.fail(
            "meta.precomputed is written where each value is declared",
            "write '- dim -> int[] reduced_dims = dims(self, dim)' in the entry's 'precomputed' list",
            raw.line_of("precomputed"),
        )
    for key in raw:
        if key not in KEYS:
            raise m.fail(f"unknown meta key '{key}'", f"use only: {', '.join(KEYS)}", raw.line_of(key))
    inputs, shapes = _shapes(m, defaults)
    outputs = _outputs(m, shapes, defaults)
    allowed, checks = _allowed(m), _checks(m)
    rules_pre = _precomputed(m, entry.line_of("precomputed"), precomputed)
    combine = _combine(raw, kinds, schema, m.fail)
    index = _index(m) + _positions(m, combine)
    vmap_as = _vmap_as(m)
    affine = _affine(raw, kinds, m.out_names, m.fail) if "affine" in raw else None
    rule = Rule(
        args=tuple((a.name, kinds.get(a.name, "other")) for a in schema.arguments.non_out),
        # An optional tensor's pattern only checks dims that required tensors bind: it comes last.
        inputs=tuple(sorted(inputs, key=lambda i: i.kind == "tensor?")),
        outputs=tuple(outputs),
        checks=checks,
        allowed=allowed,
        precomputed=rules_pre,
        combine=combine,
        index=index,
        vmap_as=vmap_as,
        affine=affine,
    )
    try:
        return dataclasses.replace(rule, ir=check_rule(rule))
    except RuleError as e:
        raise m.fail(e.problem, e.fix, e.line) from None


def _shapes(m: _Meta, defaults: Defaults | None) -> tuple[list[InputRule], dict[str, tuple[Expr, int]]]:
    """meta.shape: each tensor input's pattern, and each output's shape expression with its line."""
    shape = m.section("shape")
    inputs: list[InputRule] = []
    shapes: dict[str, tuple[Expr, int]] = {}
    for name, value in shape.items():
        at = shape.line_of(name)
        where = f"meta.shape.{name}"
        value = m.text(value, where, at)
        if name in m.out_names:
            shapes[name] = (m.parsed(parse_expr, value, where, at), at)
        elif name in m.all_names:
            if m.kinds.get(name) not in TENSOR_KINDS:
                raise m.fail(
                    f"{where}: '{name}' is not a Tensor, Tensor? or Tensor[] argument, so it has no shape",
                    "give patterns to tensor arguments only",
                    at,
                )
            inputs.append(InputRule(name, m.kinds[name], m.parsed(parse_pattern, value, where, at), at))
        else:
            raise m.fail(
                f"{where}: '{name}' is not an argument of this op",
                f"use one of: {', '.join(m.all_names + m.out_names)}",
                at,
            )
    shape_line = m.raw.line_of("shape") if "shape" in m.raw else m.line
    for o in m.out_names:
        if o not in shapes and defaults is not None:
            shapes[o] = (defaults.shape, shape_line)
        if o not in shapes:
            raise m.fail(
                f"meta.shape has no rule for output '{o}'",
                f"add '{o}: <shape expression>' to meta.shape, e.g. '{o}: broadcast(self, other)'",
                shape_line,
            )
    return inputs, shapes


def _outputs(m: _Meta, shapes: dict[str, tuple[Expr, int]], defaults: Defaults | None) -> list[OutputRule]:
    """Each output's shape, dtype rule (meta.dtype, default: promote every tensor input) and
    layout (meta.layout, default: contiguous, or a pointwise op's)."""
    dtype, layout = m.section("dtype"), m.section("layout")
    for key, sec in (("dtype", dtype), ("layout", layout)):
        for name in sec:
            if name not in m.out_names:
                raise m.fail(
                    f"meta.{key}.{name}: '{name}' is not an output",
                    f"use one of: {', '.join(m.out_names)}",
                    sec.line_of(name),
                )
    outputs = []
    promoted = tuple(Name(n) for n in m.all_names if m.kinds.get(n) in ("tensor", "tensors"))
    for out in m.schema.arguments.out:
        o = out.name
        d_line = dtype.line_of(o) if o in dtype else shapes[o][1]
        if o in dtype:
            d_expr = m.expr(dtype[o], f"meta.dtype.{o}", d_line)
        elif promoted:
            d_expr = Call("promote", promoted)  # default: every tensor input takes part
        else:
            raise m.fail(
                f"meta.dtype has no rule for output '{o}' and the op has no tensor input to promote",
                f"add 'dtype: {{{o}: <dtype expression>}}'",
            )
        l_expr = None
        l_line = shapes[o][1]
        if o not in layout and defaults is not None:
            l_expr = defaults.layout
        elif o in layout:
            l_line = layout.line_of(o)
            l_text = m.text(layout[o], f"meta.layout.{o}", l_line)
            if l_text != "contiguous":
                l_expr = m.parsed(parse_expr, l_text, f"meta.layout.{o}", l_line)
        is_list = isinstance(out.type, ListType)
        if is_list and l_expr is not None:
            raise m.fail(
                f"meta.layout.{o}: '{o}' is a Tensor[] output, whose elements are contiguous",
                f"remove meta.layout.{o}",
                l_line,
            )
        outputs.append(OutputRule(o, shapes[o][0], d_expr, l_expr, shapes[o][1], d_line, l_line, is_list))
    return outputs


def _dtype_set(m: _Meta, items: object, where: str, at: int) -> tuple[str, ...]:
    if not isinstance(items, list) or not items:
        raise m.fail(
            f"'{where}' must be a list of dtypes or dtype groups",
            f"write e.g. [floating, complex]; groups: {', '.join(dtypes.GROUPS)}",
            at,
        )
    try:
        return dtypes.expand(items)
    except KeyError as e:
        raise m.fail(f"{where}: unknown dtype or group '{e.args[0]}'", dtypes.UNKNOWN_DTYPE_FIX, at) from None


def _allowed(m: _Meta) -> tuple[tuple[str | None, tuple[str, ...]], ...]:
    """meta.allowed: the dtypes of every tensor input, or per tensor or Scalar argument."""
    if "allowed" not in m.raw:
        return ()
    at, items = m.raw.line_of("allowed"), m.raw["allowed"]
    if not isinstance(items, dict):
        return ((None, _dtype_set(m, items, "meta.allowed", at)),)
    allowed = []
    # A Scalar is checked by the dtype torch wraps it in (a Scalar overload's number).
    checkable = (*TENSOR_KINDS, "scalar")
    for name, value in items.items():
        if m.kinds.get(name) not in checkable:
            raise m.fail(
                f"meta.allowed.{name}: '{name}' is not a tensor or Scalar argument",
                f"use one of: {', '.join(n for n in m.all_names if m.kinds.get(n) in checkable)}",
                items.line_of(name),
            )
        allowed.append((name, _dtype_set(m, value, f"meta.allowed.{name}", items.line_of(name))))
    return tuple(allowed)


def _checks(m: _Meta) -> tuple[Check, ...]:
    raw_checks = m.raw.get("checks", [])
    at = m.raw.line_of("checks")
    if not isinstance(raw_checks, list):
        raise m.fail("'meta.checks' must be a list of expressions", "write e.g. ['n > 0']", at)
    return tuple(Check(m.expr(item, "meta.checks", at), at) for item in raw_checks)


def _precomputed(
    m: _Meta, at: int, precomputed: tuple[tuple[str, str, str | None], ...]
) -> tuple[tuple[str, Expr, str, int], ...]:
    """The rules of the entry's precomputed values (``- dim -> int[] reduced_dims = <rule>``)."""
    rules = []
    for name, declared, rule_text in precomputed:
        if rule_text is None:
            raise m.fail(
                f"precomputed value '{name}' has no rule",
                f"write it after the declaration: '... {name} = <expression>' (e.g. dims(self, dim))",
                at,
            )
        rules.append((name, m.parsed(parse_expr, rule_text, f"precomputed {name}", at), declared, at))
    return tuple(rules)


def _tensor_axes(m: _Meta, value: object, where: str, at: int, fix: str) -> tuple[str, Expr]:
    """``dims(<tensor>, ...)`` or ``trailing(<tensor>, n)``: the tensor argument and the axes."""
    axes = m.expr(value, where, at)
    call = axes if isinstance(axes, Call) and axes.fn in ("dims", "trailing") and axes.args else None
    tensor = call.args[0] if call is not None else None
    if not isinstance(tensor, Name) or m.kinds.get(tensor.id) != "tensor":
        raise m.fail(f"{where}: '{axes}' does not name axes of a tensor argument", fix, at)
    return tensor.id, axes


def _index(m: _Meta) -> tuple[IndexKind, ...]:
    """meta.index: the index dims that are not parallel (whole, scanned), by the axes they stand for."""
    raw_index = m.raw.get("index", {})
    if not isinstance(raw_index, dict):
        raise m.fail(
            "'meta.index' must map index-dim kinds to axes",
            f'write e.g. {{whole: "dims(self, dim)"}}; kinds: {", ".join(INDEX_KINDS)}',
            m.raw.line_of("index"),
        )
    index = []
    for kind, value in raw_index.items():
        at = raw_index.line_of(kind)
        if kind not in INDEX_KINDS:
            raise m.fail(
                f"meta.index: unknown index-dim kind '{kind}'", f"use one of: {', '.join(INDEX_KINDS)}", at
            )
        fix = (
            "write dims(<tensor argument>, <dims>), e.g. 'dims(self, dim)', or trailing(<tensor "
            "argument>, <count>)"
        )
        if kind == "diagonal":
            index.append(_diagonal(m, value, at, fix))
            continue
        for item in value if isinstance(value, list) else [value]:
            tensor, axes = _tensor_axes(m, item, f"meta.index.{kind}", at, fix)
            index.append(IndexKind(kind, tensor, axes, at))
    return tuple(index)


def _diagonal(m: _Meta, value, at: int, fix: str) -> IndexKind:
    """meta.index.diagonal: {axes: <two axes: rows, columns>, offset: <int argument>}."""
    if not isinstance(value, dict) or set(value) != {"axes", "offset"}:
        raise m.fail(
            f"meta.index.diagonal must map 'axes' and 'offset', got {value!r}",
            "write e.g. {axes: 'trailing(self, 2)', offset: diagonal} (rows and columns, and the int "
            "argument naming the diagonal)",
            at,
        )
    offset = value["offset"]
    if m.kinds.get(offset) != "int":
        raise m.fail(
            f"meta.index.diagonal.offset: '{offset}' is not an int argument",
            "name the int argument whose value is the diagonal (tril's 'diagonal')",
            at,
        )
    tensor, axes = _tensor_axes(m, value["axes"], "meta.index.diagonal", at, fix)
    return IndexKind("diagonal", tensor, axes, at, offset=offset)


def _positions(m: _Meta, combine: str | CombineBy | None) -> tuple[IndexKind, ...]:
    """meta.positions: the tensors holding flat positions over input axes (an argmax's output,
    index_select's index); a combine that merges positions needs the first output's."""
    positions = m.section("positions")
    index = []
    for output, value in positions.items():
        at = positions.line_of(output)
        if output not in m.out_names and m.kinds.get(output) not in ("tensor", "tensor?"):
            raise m.fail(
                f"meta.positions: '{output}' is not an output or a tensor input",
                f"name the tensor that holds positions: one of {', '.join(m.out_names)}, or an input "
                "the op reads another at (index_select's index)",
                at,
            )
        fix = (
            "write the axes the positions count over, e.g. 'trailing(self, 2)' (max_pool2d's indices) "
            "or 'dims(self, dim)' (argmax)"
        )
        tensor, axes = _tensor_axes(m, value, f"meta.positions.{output}", at, fix)
        index.append(IndexKind("positions", tensor, axes, at, output))
    merging = set(dict(combine.cases).values()) if isinstance(combine, CombineBy) else {combine}
    first = m.out_names[0]
    if merging & {"argmax", "argmin"} and not any(i.output == first for i in index):
        name = min(merging & {"argmax", "argmin"})
        raise m.fail(
            f"meta.combine: {name} merges positions, but meta.positions names none for '{first}'",
            f"add 'positions: {{{first}: \"dims(self, dim)\"}}' (the axes its positions count over)",
            m.raw.line_of("combine"),
        )
    return tuple(index)


def _vmap_as(m: _Meta) -> tuple[str | list, int] | None:
    if "vmap_as" not in m.raw:
        return None
    at, value = m.raw.line_of("vmap_as"), m.raw["vmap_as"]
    if not isinstance(value, str | list):
        raise m.fail(
            f"meta.vmap_as must be a call of another op, or cases of calls, got {value!r}",
            "write the call that computes a batch of these calls, e.g. 'bmm(self, mat2)' on mm",
            at,
        )
    return value, at


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
