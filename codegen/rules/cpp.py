"""Print a rule's IR (model/rule_ir.py) as C++ on SymInt: the body of the generated meta function, and
the tuning key and variant conditions of a multi-kernel chooser.

The code calls the helpers of csrc/include/structgen/rules.h; local names follow one scheme:
``d_<name>`` a bound dim and ``d_<name>_site`` where it was bound, ``<out>_shape``,
``<out>_dtypes``, ``<out>_strides``, ``<name>_value`` a precomputed value, and ``op`` the name
messages start with.
"""

from __future__ import annotations

from dataclasses import dataclass

from structgen.codegen import dtypes
from structgen.codegen.api.names import cpp_name
from structgen.codegen.model import rule_ir as ir

# ---------------------------------------------------------------------------------------------
# Expressions

_ARG_CODE = {"int": "c10::SymInt({})", "ints": "rules::sym({})"}  # other kinds: the argument itself
_SELECT_WRAP = {"int": "c10::SymInt", "ints": "rules::Dims", "bool": "bool"}


def code(e: ir.Expr) -> str:
    """A C++ expression of ``e``'s value (SymInt for ints, rules::Dims for shapes, ...)."""
    if isinstance(e, ir.Arg):
        return _ARG_CODE.get(e.kind, "{}").format(cpp_name(e.name))
    if isinstance(e, ir.Bound):
        return f"d_{e.name}"
    if isinstance(e, ir.OutputRef):
        return e.name
    if isinstance(e, ir.IntLit):
        return f"c10::SymInt({e.value})"
    if isinstance(e, ir.BoolLit):
        return "true" if e.value else "false"
    if isinstance(e, ir.Unary):
        return f"({'-' if e.op == '-' else '!'}{code(e.operand)})"
    if isinstance(e, ir.Binary):
        a, b = code(e.lhs), code(e.rhs)
        if e.op in ("and", "or"):
            return f"({a} {'&&' if e.op == 'and' else '||'} {b})"
        if e.shapes:
            return f"(rules::Dims({a}) {e.op} rules::Dims({b}))"
        if e.op in ("//", "%"):  # Python's floor semantics; division by zero raises, never traps
            return f"rules::{'floordiv' if e.op == '//' else 'mod'}(op, {a}, {b})"
        return f"({a} {e.op} {b})"
    if isinstance(e, ir.Compare):
        a, b = _compared(e.lhs), _compared(e.rhs)
        if e.of == "dtypes":
            return f"({a} {e.op} {b})"
        return f'rules::compare(op, {a}, "{e.op}", {b})'
    if isinstance(e, ir.Select):
        test, a, b = code(e.test), code(e.then), code(e.otherwise)
        if e.kind == "dtypes":
            return f"({test} ? {a} : {b})"
        wrap = _SELECT_WRAP[e.kind]
        return f"({test} ? {wrap}({a}) : {wrap}({b}))"
    if isinstance(e, ir.SizesOf):
        return f"rules::sizes({code(e.tensor)})"
    if isinstance(e, ir.ShapeLiteral):
        parts = [
            f"rules::Dims({code(i.value)})" if isinstance(i, ir.Splice) else f"rules::Dims{{{code(i)}}}"
            for i in e.items
        ]
        return f"rules::join({{{', '.join(parts)}}})"
    if isinstance(e, ir.Given):
        return f"{code(e.arg)}.has_value()"
    if isinstance(e, ir.DtypeName):
        return dtypes.scalar_type(e.name)
    if isinstance(e, ir.DtypeOf):
        s = e.source
        if isinstance(s, ir.DtypeName):
            return f"rules::Dtypes::of({dtypes.scalar_type(s.name)})"
        if s.kind == "tensor":
            return f"rules::Dtypes::of({code(s)}.scalar_type())"
        return f"rules::Dtypes::of({code(s)})"
    if isinstance(e, ir.DtypeOr):
        a = code(e.arg)
        return f"({a}.has_value() ? rules::Dtypes::of(*{a}) : {code(e.otherwise)})"
    assert isinstance(e, ir.Call), e
    return _call(e)


def _compared(e: ir.Expr) -> str:
    """One side of an ir.Compare as C++: an at::Scalar (of a Scalar, float or int), or an
    at::ScalarType."""
    if e.kind == "int":
        return f"rules::number({code(e)})"
    if e.kind == "float":
        return f"at::Scalar({code(e)})"
    return code(e)


def _raw(e: ir.Expr) -> str | None:
    """An int[] argument's own C++ name (no conversion needed), else None."""
    return cpp_name(e.name) if isinstance(e, ir.Arg) and e.kind == "ints" else None


def dim_list(e: ir.Expr) -> str:
    """A dim argument as at::OptionalIntArrayRef."""
    if e.kind in ("int", "int?"):  # an int? of None reduces every dim (argmax)
        return f"rules::one_dim({code(e)})"
    if e.kind == "ints":
        # An int[] argument passes as it is; SymInt[] and computed lists are guarded to ints.
        return f"rules::concrete({_raw(e) or code(e)})"
    return code(e)


def _call(e: ir.Call) -> str:
    a = [code(x) for x in e.args]
    q = [f'"{label}"' for label in e.labels]  # labels as C++ string literals
    fn = e.fn
    if e.context == "tuning":
        if fn == "numel":
            return f"c10::SymInt({a[0]}.numel())"
        if fn == "bucket_pow2":
            return f"rules::bucket_pow2({a[0]})"
        if fn == "contiguous":
            return f"{a[0]}.is_contiguous()"
        if fn == "stride":
            return f"c10::SymInt({a[0]}.stride(({a[1]}).expect_int()))"
        assert fn == "innermost", fn
        raw = _raw(e.args[1])
        if raw is not None:  # precomputed reduced_dims: already wrapped
            return f"rules::innermost({a[0]}, {raw})"
        return (
            f"rules::innermost({a[0]}, rules::reduced_dims(op, {q[0]}, {a[0]}.dim(), {dim_list(e.args[1])}))"
        )
    if fn == "promote":
        by_kind: dict[str, list[str]] = {"tensor": [], "tensors": [], "scalar": [], "scalar?": []}
        for x, c, label in zip(e.args, a, q):
            by_kind[x.kind].append(f"{{{label}, {c}}}" if x.kind == "tensor" else c)
        tensors, lists, scalars, optional = (", ".join(by_kind[k]) for k in by_kind)
        tail = f", {{{optional}}})" if optional else ")"
        kind = e.option("kind", "DEFAULT")
        return (
            f"rules::promote(op, {{{tensors}}}, {{{lists}}}, {{{scalars}}}, rules::Promotion::{kind}" + tail
        )
    if fn == "reduction":
        override = a[1] if len(a) == 2 else "std::nullopt"
        kind = e.option("kind", "SUM")
        return f"rules::reduction(op, {q[0]}, {a[0]}.scalar_type(), {override}, rules::Reduction::{kind})"
    if fn == "broadcast":
        items = []
        for x, c, label in zip(e.args, a, q):
            if x.kind == "tensor":
                items.append(f"{{{label}, {c}.sym_sizes()}}")
            elif x.kind == "tensor?":  # an absent tensor broadcasts as a 0-dim one: to anything
                items.append(f"{{{label}, {c}.has_value() ? {c}->sym_sizes() : c10::SymIntArrayRef{{}}}}")
            else:
                items.append(f"{{{label}, {c}}}")
        return f"rules::broadcast(op, {{{', '.join(items)}}})"
    if fn in ("reduce", "dims"):
        # empty=NONE: an empty dim list reduces nothing (torch.all/any), not every dim.
        empty = "" if e.option("empty", "ALL") == "ALL" else ", /*empty_reduces_all=*/false"
        if fn == "reduce":
            return f"rules::reduce(op, {q[0]}, {a[0]}.sym_sizes(), {dim_list(e.args[1])}, {a[2]}{empty})"
        return f"rules::reduced_dims(op, {q[0]}, {a[0]}.dim(), {dim_list(e.args[1])}{empty})"
    if fn == "reduce_all":
        return f"(static_cast<void>({a[0]}), rules::Dims{{}})"  # evaluated for its checks
    if fn == "matmul":
        return f"rules::matmul(op, {q[0]}, {a[0]}.sym_sizes(), {q[1]}, {a[1]}.sym_sizes())"
    if fn == "split":
        return f"rules::split(op, {q[0]}, {a[0]}.sym_sizes(), {q[1]}, {a[1]}, {a[2]})"
    if fn in ("cat", "stack"):
        return f"rules::{fn}(op, {q[0]}, {a[0]}, {a[1]})"
    if fn == "index":
        return f"rules::index(op, {q[0]}, {a[0]}.sym_sizes(), {a[1]}, {q[2]}, {a[2]}.sym_sizes())"
    if fn == "gather":
        return f"rules::gather(op, {q[0]}, {a[0]}.sym_sizes(), {a[1]}, {q[2]}, {a[2]}.sym_sizes())"
    if fn == "window":
        return f"rules::window(op, {', '.join(a)})"
    if fn == "len":
        return f"c10::SymInt(static_cast<int64_t>({a[0]}.size()))"
    if fn == "numel":
        return f"{a[0]}.sym_numel()"
    if fn == "ndim":
        return f"c10::SymInt({a[0]}.dim())"
    if fn == "ones":
        return f"rules::ones({a[0]})"
    if fn == "item":
        return f"rules::item(op, {q[0]}, {a[0]}, {a[1]})"
    if fn == "sum":
        return f"rules::sum({a[0]})"
    if fn == "int":
        return f"c10::SymInt({a[0]}.toLong())"
    if fn == "dtype":
        return f"{a[0]}.scalar_type()"
    assert fn in ("max", "min"), fn
    return f"rules::{fn}({a[0]}, {a[1]})"


# ---------------------------------------------------------------------------------------------
# Statements


def _mask(allowed: tuple[str, ...]) -> tuple[str, str]:
    """The dtypes as a rules::bit mask and as the list messages print."""
    return " | ".join(f"rules::bit({dtypes.scalar_type(d)})" for d in allowed), ", ".join(allowed)


def pattern(p: ir.MatchPattern, checked: bool = True) -> list[str]:
    """Match one input against its pattern: rank, literal dims, bindings and comparisons. With
    ``checked`` False only the bindings: the meta function has matched the same call already
    (the multi-kernel choosers, which run after it)."""
    c, arg, text = cpp_name(p.arg), p.arg, p.text
    lines = [f"// {arg}: {text}" + ("" if checked else " (matched by the meta function)")]
    # Declared first; bindings happen inside the (possibly looped) block.
    for b in p.declares:
        if b.kind == "elems":
            lines.append(f"std::vector<c10::SymInt> d_{b.name};")
        else:
            lines.append(f"{'rules::Dims' if b.kind == 'ints' else 'c10::SymInt'} d_{b.name};")
            if checked:
                lines.append(f"rules::Site d_{b.name}_site;")
    if not checked:
        return lines + _bindings(p)
    if p.kind == "tensors":
        lines.append(f'rules::check_nonempty(op, "{arg}", {c});')
        lines.append(f"for (size_t i = 0; i < {c}.size(); ++i) {{")
        tensor, element, first = f"{c}[i]", "static_cast<int64_t>(i)", "i == 0"
    elif p.kind == "tensor?":
        lines.append(f"if ({c}.has_value()) {{")
        tensor, element, first = f"(*{c})", "-1", "true"
    else:
        lines.append("{")
        tensor, element, first = c, "-1", "true"
    lines.append(f"  const auto so_sizes = {tensor}.sym_sizes();")
    lines.append("  const int64_t so_rank = so_sizes.size();")
    groups = [it for it in p.items if isinstance(it, ir.GroupItem)]
    fixed_len = str(len(p.items) - len(groups))
    for g in groups:
        if g.argument is not None:
            lines.append(f"  const int64_t len_{g.name} = static_cast<int64_t>({cpp_name(g.name)}.size());")
            fixed_len += f" + len_{g.name}"
    for g in groups:
        if g.length is not None:
            lines.append(
                f'  const int64_t len_{g.name} = rules::group_length(op, "{arg}", {element}, "{text}", '
                f"{code(g.length)}, so_rank);"
            )
            fixed_len += f" + len_{g.name}"
    free = next((g for g in groups if g.free), None)
    rank_check = f'  rules::check_rank(op, "{arg}", {element}, "{text}", so_rank, {fixed_len}, '
    lines.append(rank_check + f"/*at_least=*/{'true' if free else 'false'});")
    if free:
        lines.append(f"  const int64_t len_{free.name} = so_rank - ({fixed_len});")
    lines.append("  int64_t at = 0;")
    after_free = False

    def bind_or_check(name: str, new: bool, value: str, site: str, check: str) -> None:
        """A name's first occurrence binds it (and where it came from); later ones must equal it."""
        var = f"d_{name}"
        compare = f'rules::{check}(op, {var}_site, {var}, {site}, {value}, "{name}");'
        if new and p.kind == "tensor":
            lines.append(f"  {var} = {value};")
            lines.append(f"  {var}_site = {site};")
        elif new:  # a Tensor[]: element 0 binds, the others compare
            lines.append(f"  if ({first}) {{ {var} = {value}; {var}_site = {site}; }}")
            lines.append(f"  else {compare}")
        else:
            lines.append(f"  {compare}")

    for it in p.items:
        index = "at - so_rank" if after_free else "at"
        if isinstance(it, ir.AnyDim):
            lines.append("  at += 1;")
        elif isinstance(it, ir.LiteralDim):
            lines.append(
                f'  rules::check_literal(op, rules::Site{{"{arg}", {element}, {index}}}, so_sizes[at], '
                f'{it.size}, "{text}");'
            )
            lines.append("  at += 1;")
        elif isinstance(it, ir.DimItem) and it.per_element:
            lines.append(f"  d_{it.name}.push_back(so_sizes[at]);")
            lines.append("  at += 1;")
        elif isinstance(it, ir.DimItem):
            bind_or_check(
                it.name, it.first, "so_sizes[at]", f'rules::Site{{"{arg}", {element}, {index}}}', "check_same"
            )
            lines.append("  at += 1;")
        else:
            length = f"len_{it.name}"
            site = f'rules::Site{{"{arg}", {element}, {index}, {index} + {length}, true}}'
            value = f"rules::Dims(so_sizes.begin() + at, so_sizes.begin() + at + {length})"
            if it.argument is not None:
                lines.append(
                    f'  rules::check_same_dims(op, rules::Site{{"{it.name}", -1, 0, 0, true, true}}, '
                    f'{code(it.argument)}, {site}, {value}, "{it.name}");'
                )
            else:
                bind_or_check(it.name, it.first, value, site, "check_same_dims")
            lines.append(f"  at += {length};")
            after_free = after_free or it.free
    lines.append("}")
    return lines


def _bindings(p: ir.MatchPattern) -> list[str]:
    """The bindings of a pattern the meta function has checked: no rank or size checks, and the
    first element of a Tensor[] binds."""
    c = cpp_name(p.arg)
    groups = [it for it in p.items if isinstance(it, ir.GroupItem)]
    per_element = any(isinstance(it, ir.DimItem) and it.per_element for it in p.items)
    if p.kind == "tensors" and per_element:
        lines, tensor, first = [f"for (size_t i = 0; i < {c}.size(); ++i) {{"], f"{c}[i]", "i == 0"
    elif p.kind == "tensors":
        lines, tensor, first = ["{"], f"{c}[0]", "true"
    elif p.kind == "tensor?":
        lines, tensor, first = [f"if ({c}.has_value()) {{"], f"(*{c})", "true"
    else:
        lines, tensor, first = ["{"], c, "true"
    lines.append(f"  const auto so_sizes = {tensor}.sym_sizes();")
    fixed_len = str(len(p.items) - len(groups))
    if groups:
        lines.append("  const int64_t so_rank = so_sizes.size();")
    for g in groups:
        if g.argument is not None:
            lines.append(f"  const int64_t len_{g.name} = static_cast<int64_t>({cpp_name(g.name)}.size());")
            fixed_len += f" + len_{g.name}"
        elif g.length is not None:
            lines.append(
                f'  const int64_t len_{g.name} = rules::group_length(op, "{p.arg}", -1, "{p.text}", '
                f"{code(g.length)}, so_rank);"
            )
            fixed_len += f" + len_{g.name}"
    free = next((g for g in groups if g.free), None)
    if free:
        lines.append(f"  const int64_t len_{free.name} = so_rank - ({fixed_len});")
    lines.append("  int64_t at = 0;")
    for it in p.items:
        if isinstance(it, ir.DimItem) and it.per_element:
            lines.append(f"  d_{it.name}.push_back(so_sizes[at]);")
        elif isinstance(it, ir.DimItem) and it.first:
            lines.append(
                f"  if ({first}) d_{it.name} = so_sizes[at];"
                if first != "true"
                else f"  d_{it.name} = so_sizes[at];"
            )
        elif isinstance(it, ir.GroupItem) and it.first:
            value = f"rules::Dims(so_sizes.begin() + at, so_sizes.begin() + at + len_{it.name})"
            lines.append(
                f"  if ({first}) d_{it.name} = {value};" if first != "true" else f"  d_{it.name} = {value};"
            )
        lines.append(f"  at += len_{it.name};" if isinstance(it, ir.GroupItem) else "  at += 1;")
    lines.append("}")
    return lines


def _shown(v: ir.Expr) -> str:
    """A value a failed condition prints: an int, a number, or a tensor's sizes."""
    if isinstance(v, ir.Arg) and v.kind == "tensor":
        return f"{cpp_name(v.name)}.sym_sizes()"
    return f"rules::show({code(v)})" if v.kind == "scalar" else code(v)


def _check(s: ir.Check) -> list[str]:
    t = s.test
    if not isinstance(t, ir.Call) or t.context != "check":  # a condition
        values = "".join(f', " {name}=", {_shown(v)}' for name, v in s.shown)
        return [f"TORCH_CHECK({code(t)}, op, \": rule '{s.text}' does not hold\"{values});"]
    a = [code(x) for x in t.args]
    if t.fn == "alpha_check":
        return [f"rules::check_alpha(op, {a[1]}_dtypes.result, {a[0]});"]
    if t.fn == "integer_power_check":
        return [f"rules::check_integer_power(op, {a[1]}_dtypes.result, {a[0]});"]
    if t.fn == "fits_check":
        integral = "true" if t.option("dtypes", "ALL") == "INTEGRAL" else "false"
        dtype = f"{a[1]}_dtypes.result"
        check = f'rules::check_fits(op, "{t.labels[0]}", {dtype}, {{}}, /*integral_only=*/{integral});'
        if t.args[0].kind == "scalar?":  # a None bound fits
            return [f"if ({a[0]}.has_value()) " + check.format(f"*{a[0]}")]
        return [check.format(a[0])]
    if t.fn == "nonempty":
        return [
            (
                f'rules::check_nonempty(op, "{t.labels[0]}", {a[0]}.sym_sizes(), '
                f'rules::reduced_dims(op, "{t.labels[0]}", {a[0]}.dim(), {dim_list(t.args[1])}));'
            )
        ]
    if t.fn == "norm_nonempty":
        p = a[0] if t.args[0].kind == "scalar?" else f"std::optional<at::Scalar>({a[0]})"
        return [
            (
                f'rules::check_norm_nonempty(op, "{t.labels[1]}", {p}, {a[1]}.sym_sizes(), '
                f'rules::reduced_dims(op, "{t.labels[1]}", {a[1]}.dim(), {dim_list(t.args[2])}));'
            )
        ]
    assert t.fn == "same_dtype", t.fn
    first = f'{{"{t.labels[0]}", {a[0]}}}'
    lines = []
    if t.option("zero_dim", "EXACT") == "PROMOTE":
        # A 0-dim tensor after the first may have any dtype: it promotes as a number does (lerp's weight).
        for x, c, label in zip(t.args[1:], a[1:], t.labels[1:]):
            tensor = c if x.kind == "tensor" else f"(*{c})"
            given = "" if x.kind == "tensor" else f"{c}.has_value() && "
            lines.append(
                f"if ({given}{tensor}.dim() != 0) "
                f'rules::check_same_dtype(op, {{{first}, {{"{label}", {tensor}}}}});'
            )
        return lines
    required = [f'{{"{label}", {c}}}' for x, c, label in zip(t.args, a, t.labels) if x.kind == "tensor"]
    if len(required) > 1:
        lines.append(f"rules::check_same_dtype(op, {{{', '.join(required)}}});")
    for x, c, label in zip(t.args, a, t.labels):
        if x.kind == "tensor?":  # checked against the first tensor when given
            lines.append(
                f'if ({c}.has_value()) rules::check_same_dtype(op, {{{first}, {{"{label}", *{c}}}}});'
            )
    return lines


def statement(s: ir.Statement) -> list[str]:
    if isinstance(s, ir.MatchPattern):
        return pattern(s)
    if isinstance(s, ir.OutputShape):
        ctype = "std::vector<rules::Dims>" if s.is_list else "rules::Dims"
        return [f"{ctype} {s.out}_shape = {code(s.shape)};"]
    if isinstance(s, ir.OutputDtypes):
        return [f"const rules::Dtypes {s.out}_dtypes = {code(s.dtypes)};"]
    if isinstance(s, ir.AllowedPromoted):
        mask, listed = _mask(s.dtypes)
        items = ", ".join(f'{{"{n}", {cpp_name(n)}}}' for n in s.tensors)
        return [
            f'rules::check_allowed_promoted(op, {{{items}}}, {s.output}_dtypes.promoted, {mask}, "{listed}");'
        ]
    if isinstance(s, ir.Allowed):
        mask, listed = _mask(s.dtypes)
        name, c = s.arg.name, cpp_name(s.arg.name)
        if s.arg.kind == "tensor":
            return [f'rules::check_allowed(op, "{name}", {c}.scalar_type(), {mask}, "{listed}");']
        if s.arg.kind == "scalar":  # the dtype torch wraps the number in
            return [f'rules::check_allowed(op, "{name}", {c}.type(), {mask}, "{listed}");']
        if s.arg.kind == "tensor?":
            return [
                (
                    f"if ({c}.has_value()) "
                    f'rules::check_allowed(op, "{name}", {c}->scalar_type(), {mask}, "{listed}");'
                )
            ]
        return [
            (
                f"for (const auto& t : {c}) "
                f'rules::check_allowed(op, "{name}", t.scalar_type(), {mask}, "{listed}");'
            )
        ]
    if isinstance(s, ir.Check):
        return _check(s)
    if isinstance(s, ir.OutputStrides):
        if not s.like:
            return [f"rules::Dims {s.out}_strides;"]
        items = ", ".join(f'{{"{label}", {code(t)}}}' for label, t in s.like)
        return [f"rules::Dims {s.out}_strides = elementwise_strides({s.out}_shape, {{{items}}});"]
    assert isinstance(s, ir.Precomputed), s
    if s.value.kind == "int":
        return [f"int64_t {s.name}_value = ({code(s.value)}).guard_int(__FILE__, __LINE__);"]
    return [f"auto {s.name}_value = {code(s.value)};"]


def meta_body(meta: ir.MetaIR) -> tuple[str, ...]:
    """The C++ statements of the meta function's body (before the return)."""
    return tuple(line for s in meta.statements for line in statement(s))


@dataclass(frozen=True)
class TuningCode:
    lines: tuple[str, ...]  # statements binding the patterns' dims
    key: tuple[str, ...]  # one int64_t expression per key item
    conditions: tuple[str | None, ...]  # one bool expression per condition (None: always)


def tuning(t: ir.TuningIR) -> TuningCode:
    key = tuple(
        f"({code(k)}).expect_int()" if k.kind == "int" else f"static_cast<int64_t>({code(k)})" for k in t.key
    )
    conditions = tuple(None if c is None else code(c) for c in t.conditions)
    return TuningCode(tuple(line for p in t.patterns for line in pattern(p, checked=False)), key, conditions)
