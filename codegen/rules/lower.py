"""Type-check a Rule and lower it to the body of a C++ meta function (on SymInt).

One pass does both: every expression is lowered to (kind, C++ code), and a kind mismatch, an
unbound name or an unknown builtin raises RuleError, which the manifest turns into a SpecError
with the rule's line. The generated code calls helpers of csrc/include/structops/rules.h; the
Python mirror (python/structops/rules.py) implements the same builtins.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from codegen.api.cpp import cpp_name
from codegen.rules.syntax import (
    BinOp,
    Call,
    Cond,
    Element,
    Expr,
    Name,
    Num,
    PAny,
    Pattern,
    PDim,
    PGroup,
    PLiteral,
    ShapeList,
    Star,
    UnaryOp,
)


@dataclass
class RuleError(Exception):  # not frozen: raising sets __traceback__
    problem: str
    fix: str
    line: int | None = None


# The dtypes a rule may name, and their C++ spelling.
DTYPES = {
    "bool": "at::kBool",
    "uint8": "at::kByte",
    "int8": "at::kChar",
    "int16": "at::kShort",
    "int32": "at::kInt",
    "int64": "at::kLong",
    "long": "at::kLong",
    "float16": "at::kHalf",
    "half": "at::kHalf",
    "bfloat16": "at::kBFloat16",
    "float32": "at::kFloat",
    "float": "at::kFloat",
    "float64": "at::kDouble",
    "double": "at::kDouble",
    "complex64": "at::kComplexFloat",
    "complex128": "at::kComplexDouble",
}
PROMOTIONS = ("DEFAULT", "NO_OPMATH", "INT_TO_FLOAT", "ALWAYS_BOOL", "COMPLEX_TO_FLOAT", "BOOL_TO_LONG")
REDUCTIONS = ("SUM", "SAME", "FLOAT", "BOOL", "LONG")

# Builtins by where they may appear; docs/rules.md describes each.
SHAPE_BUILTINS = (
    "broadcast",
    "reduce",
    "matmul",
    "cat",
    "stack",
    "split",
    "index",
    "window",
    "len",
    "ndim",
    "numel",
    "sum",
    "max",
    "min",
    "ones",
    "item",
)
DTYPE_BUILTINS = ("promote", "reduction")
CHECK_BUILTINS = ("alpha_check", "integer_power_check", "same_dtype", "nonempty", "norm_nonempty")
OTHER_BUILTINS = ("dims", "like", "given")
OPTIONAL_KINDS = ("tensor?", "int?", "ints?", "scalar?", "dtype?", "str?")


@dataclass
class Value:
    kind: str
    code: str
    raw: str | None = None  # an int[]/SymInt[] argument's own C++ name (no conversion needed)


@dataclass
class Lowering:
    rule: object  # codegen.rules.model.Rule (not imported: model imports this module)
    op: str  # the name errors start with
    lines: list[str] = field(default_factory=list)
    env: dict[str, Value] = field(default_factory=dict)
    line: int | None = None
    in_check: bool = False

    # -- helpers ---------------------------------------------------------------------------------

    def fail(self, problem: str, fix: str) -> RuleError:
        return RuleError(problem, fix, self.line)

    def emit(self, text: str) -> None:
        self.lines.append(text)

    def arg_value(self, name: str, kind: str) -> Value:
        c = cpp_name(name)
        code = {
            "tensor": c,
            "tensors": c,
            "tensor?": c,
            "int": f"c10::SymInt({c})",
            "ints": f"rules::sym({c})",
            "int?": c,
            "ints?": c,
            "bool": c,
            "scalar": c,
            "scalar?": c,
            "dtype": c,
            "dtype?": c,
            "float": c,
            "str": c,
            "str?": c,
        }.get(kind)
        if code is None:
            return Value("other", c)
        return Value(kind, code, c if kind == "ints" else None)

    # -- the whole rule --------------------------------------------------------------------------

    def run(self) -> None:
        rule = self.rule
        for name, kind in rule.args:
            self.env[name] = self.arg_value(name, kind)
        for inp in rule.inputs:
            self.line = inp.line
            self.pattern(inp.arg, inp.kind, inp.pattern)
        for out in rule.outputs:
            self.line = out.line
            if out.arg in self.env:
                raise self.fail(f"output '{out.arg}' has the name of a bound dim", "rename the dim")
            shape = self.expr(out.shape)
            if shape.kind == "tensor":
                shape = Value("ints", f"rules::sizes({shape.code})")
            if out.is_list:
                if shape.kind != "shapes":
                    raise self.fail(
                        f"meta.shape.{out.arg}: '{out.arg}' is a Tensor[] output, so its rule must give one "
                        f"shape per element, got {_show(shape.kind)}",
                        "write e.g. 'split(self, split_sizes, dim)'",
                    )
                self.emit(f"std::vector<rules::Dims> {out.arg}_shape = {shape.code};")
            elif shape.kind == "shapes":
                raise self.fail(
                    f"meta.shape.{out.arg} gives one shape per element of a list, but '{out.arg}' is "
                    "a single Tensor",
                    f"declare '{out.arg}' as 'Tensor(a!)[] {out.arg}', or give one shape",
                )
            elif shape.kind != "ints":
                raise self.fail(
                    f"meta.shape.{out.arg} must be a shape (a list of dims), got {_show(shape.kind)}",
                    "write e.g. '[*batch, n, m]' or 'broadcast(self, other)'",
                )
            else:
                self.emit(f"rules::Dims {out.arg}_shape = {shape.code};")
            self.line = out.dtype_line
            dtype = self.dtype_expr(out.dtype)
            self.emit(f"const rules::Dtypes {out.arg}_dtypes = {dtype};")
        promoted = promoted_tensors(rule)
        for arg, allowed in rule.allowed:
            mask = " | ".join(f"rules::bit({DTYPES[d]})" for d in allowed)
            listed = ", ".join(allowed)
            if arg is None and promoted:
                items = ", ".join(f'{{"{n}", {cpp_name(n)}}}' for n in promoted)
                self.emit(
                    f"rules::check_allowed_promoted(op, {{{items}}}, {rule.outputs[0].arg}_dtypes.promoted, "
                    f'{mask}, "{listed}");'
                )
            for name, kind in rule.args:
                if (arg is not None and name != arg) or (arg is None and name in promoted):
                    continue
                if kind == "tensor":
                    self.emit(
                        f'rules::check_allowed(op, "{name}", {cpp_name(name)}.scalar_type(), {mask}, "{listed}");'
                    )
                elif kind == "tensor?":
                    self.emit(
                        f"if ({cpp_name(name)}.has_value()) "
                        f'rules::check_allowed(op, "{name}", {cpp_name(name)}->scalar_type(), {mask}, "{listed}");'
                    )
                elif kind == "tensors":
                    self.emit(
                        f"for (const auto& t : {cpp_name(name)}) "
                        f'rules::check_allowed(op, "{name}", t.scalar_type(), {mask}, "{listed}");'
                    )
        for out in rule.outputs:
            self.env[out.arg] = Value("output", out.arg)
        self.in_check = True
        for chk in rule.checks:
            self.line = chk.line
            self.check(chk.expr)
        self.in_check = False
        for out in rule.outputs:
            self.line = out.layout_line
            if out.is_list:
                continue  # elements are contiguous (model.py rejects a layout)
            if out.layout is None:
                self.emit(f"rules::Dims {out.arg}_strides;")
            else:
                self.emit(f"rules::Dims {out.arg}_strides = {self.layout(out)};")
        for name, expr, declared, line in rule.precomputed:
            self.line = line
            v = self.expr(expr)
            want = {"int[]": "dimlist", "int": "int", "SymInt": "int", "bool": "bool"}.get(declared)
            if v.kind != want:
                raise self.fail(
                    f"meta.precomputed.{name} computes {_show(v.kind)}, but '{name}' is declared "
                    f"'{declared}'",
                    "declare int[] for dims(...), int for int rules, bool for conditions",
                )
            if v.kind == "int":
                self.emit(f"int64_t {name}_value = ({v.code}).guard_int(__FILE__, __LINE__);")
            elif v.kind in ("dimlist", "bool"):
                self.emit(f"auto {name}_value = {v.code};")
            else:
                raise self.fail(
                    f"meta.precomputed.{name} must be a dims(...) list, an int or a bool, got {_show(v.kind)}",
                    "write e.g. 'dims(self, dim)'",
                )

    # -- patterns --------------------------------------------------------------------------------

    def pattern(self, arg: str, kind: str, pattern: Pattern) -> None:
        arg_kinds = dict(self.rule.args)
        # `*normalized_shape`: an int[] argument as a group, whose values the dims must equal.
        arg_groups = [
            it
            for it in pattern.items
            if isinstance(it, PGroup) and it.length is None and arg_kinds.get(it.name) == "ints"
        ]
        groups = [it for it in pattern.items if isinstance(it, PGroup) and it not in arg_groups]
        free = [g for g in groups if g.length is None]
        if len(free) > 1:
            raise self.fail(
                f"pattern {pattern} of '{arg}' has two variadic groups ({', '.join(str(g) for g in free)})",
                "keep one '*group' per pattern, or fix a group's length: '*pre:dim'",
            )
        names = [it.name for it in pattern.items if isinstance(it, PDim | PGroup)]
        dup = next((n for n in names if names.count(n) > 1), None)
        if dup:
            raise self.fail(
                f"pattern {pattern} of '{arg}' uses '{dup}' twice",
                "use distinct names within one pattern (equal dims across patterns share a name)",
            )
        for it in pattern.items:
            if isinstance(it, PDim | PGroup) and it.name in arg_kinds and it not in arg_groups:
                raise self.fail(
                    f"pattern {pattern} of '{arg}' binds '{it.name}', which is an argument",
                    "name dims differently from the op's arguments (an int[] argument may be a "
                    "group whose values the dims must equal: '*normalized_shape')",
                )
            if isinstance(it, PDim) and it.per_element and kind != "tensors":
                raise self.fail(
                    f"pattern {pattern}: '{it}' is per element, but '{arg}' is a single tensor",
                    f"write '{it.name}' (per-element dims exist only for Tensor[] arguments)",
                )
            if isinstance(it, PDim | PGroup) and it.name in self.env:
                want = (
                    "ints"
                    if isinstance(it, PGroup)
                    else ("elems" if getattr(it, "per_element", False) else "int")
                )
                if self.env[it.name].kind != want:
                    raise self.fail(
                        f"'{it.name}' is bound as {_show(self.env[it.name].kind)} and as {_show(want)}",
                        "use one name per kind of thing",
                    )
                if want == "elems":
                    raise self.fail(
                        f"per-element dim '{it.name}[i]' is bound twice", "bind it in one pattern"
                    )
        if kind == "tensor?":
            unbound = next(
                (it for it in pattern.items if isinstance(it, PDim | PGroup) and it.name not in self.env),
                None,
            )
            if unbound is not None:
                raise self.fail(
                    f"pattern {pattern} of '{arg}' binds '{unbound.name}', but '{arg}' is optional (Tensor?): "
                    "its pattern is checked only when it is given, so it cannot bind a dim",
                    f"bind '{unbound.name}' in a required tensor's pattern, or use '_' here",
                )
        c = cpp_name(arg)
        text = str(pattern)
        fixed = sum(1 for it in pattern.items if not isinstance(it, PGroup))
        self.emit(f"// {arg}: {text}")
        # Declare what this pattern binds first; bindings happen inside the (possibly looped) block.
        new: list[object] = []
        for it in pattern.items:
            if isinstance(it, PDim | PGroup) and it.name not in self.env:
                new.append(it)
                var = f"d_{it.name}"  # prefixed: a dim may be called `s` or `at`
                if isinstance(it, PDim) and it.per_element:
                    self.emit(f"std::vector<c10::SymInt> {var};")
                    self.env[it.name] = Value("elems", var)
                else:
                    ctype = "rules::Dims" if isinstance(it, PGroup) else "c10::SymInt"
                    self.emit(f"{ctype} {var};")
                    self.emit(f"rules::Site {var}_site;")
                    self.env[it.name] = Value("ints" if isinstance(it, PGroup) else "int", var)
        lengths = []
        for g in groups:
            if g.length is not None:
                v = self.int_expr(g.length, f"the length of {g}")
                lengths.append((g.name, v))
        if kind == "tensors":
            self.emit(f'rules::check_nonempty(op, "{arg}", {c});')
            self.emit(f"for (size_t i = 0; i < {c}.size(); ++i) {{")
            tensor, element, first = f"{c}[i]", "static_cast<int64_t>(i)", "i == 0"
        elif kind == "tensor?":
            self.emit(f"if ({c}.has_value()) {{")
            tensor, element, first = f"(*{c})", "-1", "true"
        else:
            self.emit("{")
            tensor, element, first = c, "-1", "true"
        self.emit(f"  const auto so_sizes = {tensor}.sym_sizes();")
        self.emit("  const int64_t so_rank = so_sizes.size();")
        fixed_len = str(fixed)
        for g in arg_groups:
            self.emit(f"  const int64_t len_{g.name} = static_cast<int64_t>({self.env[g.name].raw}.size());")
            fixed_len += f" + len_{g.name}"
        for name, v in lengths:
            self.emit(
                f'  const int64_t len_{name} = rules::group_length(op, "{arg}", {element}, "{text}", {v}, so_rank);'
            )
            fixed_len += f" + len_{name}"
        if free:
            self.emit(
                f'  rules::check_rank(op, "{arg}", {element}, "{text}", so_rank, {fixed_len}, /*at_least=*/true);'
            )
            self.emit(f"  const int64_t len_{free[0].name} = so_rank - ({fixed_len});")
        else:
            self.emit(
                f'  rules::check_rank(op, "{arg}", {element}, "{text}", so_rank, {fixed_len}, /*at_least=*/false);'
            )
        self.emit("  int64_t at = 0;")
        after_free = False
        for it in pattern.items:
            index = "at - so_rank" if after_free else "at"
            if isinstance(it, PAny):
                self.emit("  at += 1;")
            elif isinstance(it, PLiteral):
                self.emit(
                    f'  rules::check_literal(op, rules::Site{{"{arg}", {element}, {index}}}, so_sizes[at], {it.size}, "{text}");'
                )
                self.emit("  at += 1;")
            elif isinstance(it, PDim) and it.per_element:
                self.emit(f"  {self.env[it.name].code}.push_back(so_sizes[at]);")
                self.emit("  at += 1;")
            elif isinstance(it, PDim):
                site = f'rules::Site{{"{arg}", {element}, {index}}}'
                self.bind_or_check(it, it in new, kind, first, "so_sizes[at]", site, "check_same")
                self.emit("  at += 1;")
            else:
                length = f"len_{it.name}"
                site = f'rules::Site{{"{arg}", {element}, {index}, {index} + {length}, true}}'
                value = f"rules::Dims(so_sizes.begin() + at, so_sizes.begin() + at + {length})"
                if it in arg_groups:
                    self.emit(
                        f'  rules::check_same_dims(op, rules::Site{{"{it.name}", -1, 0, 0, true, true}}, '
                        f'{self.env[it.name].code}, {site}, {value}, "{it.name}");'
                    )
                else:
                    self.bind_or_check(it, it in new, kind, first, value, site, "check_same_dims")
                self.emit(f"  at += {length};")
                if it.length is None and it not in arg_groups:
                    after_free = True
        self.emit("}")

    def bind_or_check(
        self, it: PDim | PGroup, new: bool, kind: str, first: str, value: str, site: str, check: str
    ) -> None:
        """A name's first occurrence binds it (and where it came from); later ones must equal it."""
        var = self.env[it.name].code
        compare = f'rules::{check}(op, {var}_site, {var}, {site}, {value}, "{it.name}");'
        if new and kind == "tensor":
            self.emit(f"  {var} = {value};")
            self.emit(f"  {var}_site = {site};")
        elif new:  # a Tensor[]: element 0 binds, the others compare
            self.emit(f"  if ({first}) {{ {var} = {value}; {var}_site = {site}; }}")
            self.emit(f"  else {compare}")
        else:
            self.emit(f"  {compare}")

    # -- expressions -----------------------------------------------------------------------------

    def int_expr(self, e: Expr, what: str) -> str:
        v = self.expr(e)
        if v.kind != "int":
            raise self.fail(
                f"{what} must be an int, got {_show(v.kind)} '{e}'",
                "use a dim, an int argument or arithmetic on them",
            )
        return v.code

    def expr(self, e: Expr) -> Value:
        if isinstance(e, Num):
            return Value("int", f"c10::SymInt({e.value})")
        if isinstance(e, Name):
            if e.id in ("True", "False"):
                return Value("bool", e.id.lower())
            if e.id not in self.env:
                tensor = next((n for n, k in self.rule.args if k in ("tensor", "tensors")), "x")
                raise self.fail(
                    f"'{e.id}' is not bound: it is neither an argument nor a dim of a pattern",
                    f"bind it in a pattern (e.g. '{tensor}: \"[..., {e.id}]\"') or use an argument",
                )
            return self.env[e.id]
        if isinstance(e, Element):
            v = self.env.get(e.id)
            if v is None or v.kind != "elems":
                raise self.fail(
                    f"'{e}' names no per-element dim", "bind it in a Tensor[] pattern: '[..., c[i], ...]'"
                )
            raise self.fail(f"'{e}' cannot be used in an expression", f"use sum({e.id}) or len({e.id})")
        if isinstance(e, ShapeList):
            parts = []
            for item in e.items:
                if isinstance(item, Star):
                    v = self.expr(item.value)
                    if v.kind == "tensor":
                        v = Value("ints", f"rules::sizes({v.code})")
                    if v.kind != "ints":
                        raise self.fail(
                            f"'*{item.value}' must splice a list of dims, got {_show(v.kind)}",
                            "splice a group ('*batch'), a tensor's shape ('*self') or broadcast(...)",
                        )
                    parts.append(f"rules::Dims({v.code})")
                else:
                    parts.append(f"rules::Dims{{{self.int_expr(item, f'shape item {item}')}}}")
            return Value("ints", f"rules::join({{{', '.join(parts)}}})")
        if isinstance(e, Cond):
            test = self.condition(e.test)
            a, b = self.expr(e.then), self.expr(e.otherwise)
            wrap = {"int": "c10::SymInt", "ints": "rules::Dims", "bool": "bool"}.get(a.kind)
            if a.kind != b.kind or wrap is None:
                raise self.fail(
                    f"both sides of '{e}' must be ints, shapes or bools of one kind, "
                    f"got {_show(a.kind)} and {_show(b.kind)}",
                    "make both branches the same kind of value",
                )
            return Value(a.kind, f"({test} ? {wrap}({a.code}) : {wrap}({b.code}))")
        if isinstance(e, UnaryOp):
            if e.op == "-":
                return Value("int", f"(-{self.int_expr(e.operand, 'the operand of -')})")
            v = self.expr(e.operand)
            if v.kind != "bool":
                raise self.fail(f"'not' needs a bool, got {_show(v.kind)}", "compare values first")
            return Value("bool", f"(!{v.code})")
        if isinstance(e, BinOp):
            if e.op in ("and", "or"):
                a, b = self.expr(e.lhs), self.expr(e.rhs)
                if a.kind != "bool" or b.kind != "bool":
                    raise self.fail(
                        f"'{e.op}' needs bools, got {_show(a.kind)} and {_show(b.kind)}",
                        "use 'or' between dtypes only in meta.dtype",
                    )
                return Value("bool", f"({a.code} {'&&' if e.op == 'and' else '||'} {b.code})")
            if e.op in ("==", "!="):  # two shapes compare as lists (addmm: self expands to [n, m])
                lv, rv = self.expr(e.lhs), self.expr(e.rhs)
                if lv.kind == "ints" and rv.kind == "ints":
                    return Value("bool", f"(rules::Dims({lv.code}) {e.op} rules::Dims({rv.code}))")
            a = self.int_expr(e.lhs, f"the left side of '{e.op}'")
            b = self.int_expr(e.rhs, f"the right side of '{e.op}'")
            if e.op in ("==", "!=", "<", "<=", ">", ">="):
                return Value("bool", f"({a} {e.op} {b})")
            if e.op in ("//", "%"):  # Python's floor semantics; division by zero raises, never traps
                return Value("int", f"rules::{'floordiv' if e.op == '//' else 'mod'}(op, {a}, {b})")
            return Value("int", f"({a} {e.op} {b})")
        assert isinstance(e, Call)
        return self.call(e)

    def condition(self, e: Expr) -> str:
        v = self.expr(e)
        if v.kind != "bool":
            raise self.fail(
                f"the condition '{e}' must be a bool, got {_show(v.kind)}",
                "test e.g. given(rounding_mode) or a comparison",
            )
        return v.code

    def call(self, e: Call) -> Value:
        fn = e.fn
        if fn == "given":
            v = self.env.get(e.args[0].id) if len(e.args) == 1 and isinstance(e.args[0], Name) else None
            if v is None or v.kind not in OPTIONAL_KINDS or e.kwargs:
                raise self.fail(
                    f"given() takes one optional argument, got '{', '.join(str(a) for a in e.args)}'",
                    "pass a Tensor?, int?, int[]?, Scalar?, ScalarType? or str? argument: given(rounding_mode)",
                )
            return Value("bool", f"{v.code}.has_value()")
        if fn in DTYPE_BUILTINS or fn in CHECK_BUILTINS or fn == "like":
            raise self.fail(
                f"{fn}() is not a shape builtin",
                f"use {fn}() in {'meta.dtype' if fn in DTYPE_BUILTINS else 'meta.checks' if fn in CHECK_BUILTINS else 'meta.layout'}",
            )
        if fn not in SHAPE_BUILTINS and fn != "dims":
            known = SHAPE_BUILTINS + ("dims", "given") + (CHECK_BUILTINS if self.in_check else ())
            raise self.fail(f"unknown builtin '{fn}'", f"use one of: {', '.join(known)}")
        if e.kwargs and fn not in ("reduce", "dims"):
            raise self.fail(f"{fn}() takes no keyword arguments", "pass arguments by position")
        args = [self.expr(a) for a in e.args]
        kinds = [a.kind for a in args]

        def want(*expected: str) -> None:
            ok = len(expected) == len(kinds) and all(k in exp.split("|") for k, exp in zip(kinds, expected))
            if not ok:
                raise self.fail(
                    f"{fn}() takes ({', '.join(_show(x) for x in expected)}), got ({', '.join(_show(k) for k in kinds)})",
                    f"see {fn}() in docs/rules.md",
                )

        def names(i: int) -> str:
            return f'"{e.args[i]}"'

        if fn == "broadcast":
            if not args or any(k not in ("tensor", "tensor?", "ints") for k in kinds):
                raise self.fail(
                    f"broadcast() takes tensors or dim groups, got ({', '.join(_show(k) for k in kinds)})",
                    "write e.g. broadcast(self, other) or broadcast(ba, bb)",
                )

            def item(i: int, a: Value) -> str:
                if a.kind == "tensor":
                    return f"{{{names(i)}, {a.code}.sym_sizes()}}"
                if a.kind == "tensor?":  # an absent tensor broadcasts as a 0-dim one: to anything
                    return f"{{{names(i)}, {a.code}.has_value() ? {a.code}->sym_sizes() : c10::SymIntArrayRef{{}}}}"
                return f'{{"{"*" if isinstance(e.args[i], Name) else ""}{e.args[i]}", {a.code}}}'

            items = ", ".join(item(i, a) for i, a in enumerate(args))
            return Value("ints", f"rules::broadcast(op, {{{items}}})")
        if fn in ("reduce", "dims"):
            # empty=NONE: an empty dim list reduces nothing (torch.all/any), not every dim.
            empty = (
                ""
                if self.kwarg(e, "empty", ("ALL", "NONE"), "ALL") == "ALL"
                else ", /*empty_reduces_all=*/false"
            )
            if fn == "reduce":
                want("tensor", "ints?|ints|int|int?", "bool")
                return Value(
                    "ints",
                    f"rules::reduce(op, {names(0)}, {args[0].code}.sym_sizes(), {_dim_list(args[1])}, "
                    f"{args[2].code}{empty})",
                )
            want("tensor", "ints?|ints|int|int?")
            return Value(
                "dimlist",
                f"rules::reduced_dims(op, {names(0)}, {args[0].code}.dim(), {_dim_list(args[1])}{empty})",
            )
        if fn == "matmul":
            want("tensor", "tensor")
            return Value(
                "ints",
                f"rules::matmul(op, {names(0)}, {args[0].code}.sym_sizes(), {names(1)}, {args[1].code}.sym_sizes())",
            )
        if fn == "split":
            want("tensor", "ints", "int")
            return Value(
                "shapes",
                f"rules::split(op, {names(0)}, {args[0].code}.sym_sizes(), {names(1)}, "
                f"{args[1].code}, {args[2].code})",
            )
        if fn in ("cat", "stack"):
            want("tensors", "int")
            return Value("ints", f"rules::{fn}(op, {names(0)}, {args[0].code}, {args[1].code})")
        if fn == "index":
            want("tensor", "int", "tensor")
            return Value(
                "ints",
                f"rules::index(op, {names(0)}, {args[0].code}.sym_sizes(), {args[1].code}, {names(2)}, {args[2].code}.sym_sizes())",
            )
        if fn == "window":
            want("int", "int", "int", "int", "int", "bool")
            return Value("int", f"rules::window(op, {', '.join(a.code for a in args)})")
        if fn == "len":
            want("tensors|ints|elems")
            return Value("int", f"c10::SymInt(static_cast<int64_t>({args[0].code}.size()))")
        if fn == "numel":
            want("tensor")
            return Value("int", f"{args[0].code}.sym_numel()")
        if fn == "ndim":
            want("tensor")
            return Value("int", f"c10::SymInt({args[0].code}.dim())")
        if fn == "ones":
            want("int")
            return Value("ints", f"rules::ones({args[0].code})")
        if fn == "item":
            want("ints", "int")
            return Value("int", f"rules::item(op, {names(0)}, {args[0].code}, {args[1].code})")
        if fn == "sum":
            want("elems|ints")
            return Value("int", f"rules::sum({args[0].code})")
        want("int", "int")  # max, min
        return Value("int", f"rules::{fn}({args[0].code}, {args[1].code})")

    def dtype_expr(self, e: Expr) -> str:
        if isinstance(e, Cond):
            test = self.condition(e.test)
            return f"({test} ? {self.dtype_expr(e.then)} : {self.dtype_expr(e.otherwise)})"
        if isinstance(e, BinOp) and e.op == "or":
            lhs = e.lhs
            v = self.expr(lhs) if isinstance(lhs, Name) and lhs.id in self.env else None
            if v is None or v.kind != "dtype?":
                raise self.fail(
                    f"the left side of 'or' in a dtype rule must be a ScalarType? argument, got '{lhs}'",
                    "write e.g. 'dtype or promote(self)'",
                )
            return f"({v.code}.has_value() ? rules::Dtypes::of(*{v.code}) : {self.dtype_expr(e.rhs)})"
        if isinstance(e, Name):
            v = self.env.get(e.id)
            if v is not None:
                if v.kind == "tensor":
                    return f"rules::Dtypes::of({v.code}.scalar_type())"
                if v.kind == "dtype":
                    return f"rules::Dtypes::of({v.code})"
                raise self.fail(
                    f"'{e.id}' is {_show(v.kind)}, not a dtype", "use a tensor, a dtype name or promote(...)"
                )
            if e.id in DTYPES:
                return f"rules::Dtypes::of({DTYPES[e.id]})"
            raise self.fail(
                f"'{e.id}' is neither a dtype nor an argument", f"use one of: {', '.join(DTYPES)}"
            )
        if isinstance(e, Call) and e.fn == "promote":
            kind = self.kwarg(e, "kind", PROMOTIONS, "DEFAULT")
            tensors, lists, scalars, optional = [], [], [], []
            for a in e.args:
                v = self.expr(a)
                if v.kind == "tensor":
                    tensors.append(f'{{"{a}", {v.code}}}')
                elif v.kind == "tensors":
                    lists.append(v.code)
                elif v.kind == "scalar":
                    scalars.append(v.code)
                elif v.kind == "scalar?":
                    optional.append(v.code)
                else:
                    raise self.fail(
                        f"promote() takes tensors and Scalars, got {_show(v.kind)} '{a}'",
                        "pass the tensor and Scalar arguments that take part in type promotion",
                    )
            if not tensors and not lists:
                raise self.fail("promote() needs at least one tensor", "pass the tensor inputs")
            return (
                f"rules::promote(op, {{{', '.join(tensors)}}}, {{{', '.join(lists)}}}, {{{', '.join(scalars)}}}, "
                f"rules::Promotion::{kind}" + (f", {{{', '.join(optional)}}})" if optional else ")")
            )
        if isinstance(e, Call) and e.fn == "reduction":
            kind = self.kwarg(e, "kind", REDUCTIONS, "SUM")
            if len(e.args) not in (1, 2):
                raise self.fail(
                    "reduction() takes (tensor, [ScalarType? dtype])",
                    "write e.g. reduction(self, dtype, kind=SUM)",
                )
            t = self.expr(e.args[0])
            if t.kind != "tensor":
                raise self.fail(
                    f"reduction() reduces a tensor, got {_show(t.kind)}", "pass the reduced tensor"
                )
            override = "std::nullopt"
            if len(e.args) == 2:
                o = self.expr(e.args[1])
                if o.kind != "dtype?":
                    raise self.fail(
                        f"reduction()'s second argument must be a ScalarType? argument, got {_show(o.kind)}",
                        "pass the op's 'ScalarType? dtype' argument",
                    )
                override = o.code
            return f'rules::reduction(op, "{e.args[0]}", {t.code}.scalar_type(), {override}, rules::Reduction::{kind})'
        raise self.fail(
            f"'{e}' is not a dtype rule",
            "use promote(...), reduction(...), a dtype name, a tensor, 'dtype or ...', or '... if ... else ...'",
        )

    def kwarg(self, e: Call, key: str, allowed: tuple[str, ...], default: str) -> str:
        kw = dict(e.kwargs)
        extra = set(kw) - {key}
        if extra:
            raise self.fail(f"{e.fn}() has no argument '{min(extra)}'", f"use '{key}=' only")
        v = kw.get(key)
        if v is None:
            return default
        if not isinstance(v, Name) or v.id not in allowed:
            raise self.fail(f"{e.fn}(): unknown {key} '{v}'", f"use one of: {', '.join(allowed)}")
        return v.id

    def check(self, e: Expr) -> None:
        if isinstance(e, Call) and e.fn == "alpha_check":
            args = [self.expr(a) for a in e.args]
            if [a.kind for a in args] != ["scalar", "output"]:
                raise self.fail(
                    "alpha_check() takes (Scalar alpha, output)", "write 'alpha_check(alpha, out)'"
                )
            self.emit(f"rules::check_alpha(op, {args[1].code}_dtypes.result, {args[0].code});")
            return
        if isinstance(e, Call) and e.fn == "integer_power_check":
            args = [self.expr(a) for a in e.args]
            if [a.kind for a in args] != ["scalar", "output"]:
                raise self.fail(
                    "integer_power_check() takes (Scalar exponent, output)",
                    "write 'integer_power_check(exponent, out)'",
                )
            self.emit(f"rules::check_integer_power(op, {args[1].code}_dtypes.result, {args[0].code});")
            return
        if isinstance(e, Call) and e.fn == "same_dtype":
            args = [self.expr(a) for a in e.args]
            if (
                len(args) < 2
                or args[0].kind != "tensor"
                or any(a.kind not in ("tensor", "tensor?") for a in args)
            ):
                raise self.fail(
                    "same_dtype() takes two or more tensors, the first one required (not Tensor?)",
                    "write e.g. 'same_dtype(self, other)' or 'same_dtype(input, weight)'",
                )
            # zero_dim=PROMOTE: a 0-dim tensor after the first may have any dtype (it promotes as a
            # number does: torch.lerp's weight).
            if self.kwarg(e, "zero_dim", ("EXACT", "PROMOTE"), "EXACT") == "PROMOTE":
                first = f'{{"{e.args[0]}", {args[0].code}}}'
                for a, v in zip(e.args[1:], args[1:]):
                    t = v.code if v.kind == "tensor" else f"(*{v.code})"
                    given = "" if v.kind == "tensor" else f"{v.code}.has_value() && "
                    self.emit(
                        f'if ({given}{t}.dim() != 0) rules::check_same_dtype(op, {{{first}, {{"{a}", {t}}}}});'
                    )
                return
            items = ", ".join(f'{{"{a}", {v.code}}}' for a, v in zip(e.args, args) if v.kind == "tensor")
            if sum(v.kind == "tensor" for v in args) > 1:
                self.emit(f"rules::check_same_dtype(op, {{{items}}});")
            first = f'{{"{e.args[0]}", {args[0].code}}}'
            for a, v in zip(e.args, args):
                if v.kind == "tensor?":  # checked against the first tensor when given
                    self.emit(
                        f'if ({v.code}.has_value()) rules::check_same_dtype(op, {{{first}, {{"{a}", *{v.code}}}}});'
                    )
            return
        if isinstance(e, Call) and e.fn == "nonempty":
            args = [self.expr(a) for a in e.args]
            if (
                len(args) != 2
                or args[0].kind != "tensor"
                or args[1].kind not in ("ints?", "ints", "int", "int?")
            ):
                raise self.fail("nonempty() takes (Tensor, dim list)", "write 'nonempty(self, dim)'")
            self.emit(
                f'rules::check_nonempty(op, "{e.args[0]}", {args[0].code}.sym_sizes(), '
                f'rules::reduced_dims(op, "{e.args[0]}", {args[0].code}.dim(), {_dim_list(args[1])}));'
            )
            return
        if isinstance(e, Call) and e.fn == "norm_nonempty":
            args = [self.expr(a) for a in e.args]
            if (
                len(args) != 3
                or args[0].kind not in ("scalar", "scalar?")
                or args[1].kind != "tensor"
                or args[2].kind not in ("ints?", "ints", "int", "int?")
            ):
                raise self.fail(
                    "norm_nonempty() takes (Scalar? p, Tensor, dim list)",
                    "write 'norm_nonempty(p, self, dim)'",
                )
            p = args[0].code if args[0].kind == "scalar?" else f"std::optional<at::Scalar>({args[0].code})"
            self.emit(
                f'rules::check_norm_nonempty(op, "{e.args[1]}", {p}, {args[1].code}.sym_sizes(), '
                f'rules::reduced_dims(op, "{e.args[1]}", {args[1].code}.dim(), {_dim_list(args[2])}));'
            )
            return
        v = self.expr(e)
        if v.kind != "bool":
            raise self.fail(f"a check must be a condition, got {_show(v.kind)} '{e}'", "write e.g. 'n > 0'")
        shown = [n for n in _names(e) if self.env.get(n) and self.env[n].kind == "int"]
        values = "".join(f', " {n}=", {self.env[n].code}' for n in dict.fromkeys(shown))
        self.emit(f"TORCH_CHECK({v.code}, op, \": rule '{e}' does not hold\"{values});")

    def layout(self, out) -> str:
        e = out.layout
        if not (isinstance(e, Call) and e.fn == "like" and e.args and not e.kwargs):
            raise self.fail(
                f"meta.layout.{out.arg} must be 'contiguous' or 'like(<tensors>)', got '{e}'",
                "write e.g. 'like(self, other)' for PyTorch's elementwise stride propagation",
            )
        items = []
        for a in e.args:
            v = self.expr(a)
            if v.kind != "tensor":
                raise self.fail(
                    f"like() takes tensor arguments, got {_show(v.kind)} '{a}'", "name tensor inputs"
                )
            items.append(f'{{"{a}", {v.code}}}')
        return f"elementwise_strides({out.arg}_shape, {{{', '.join(items)}}})"


def _dim_list(v: Value) -> str:
    """A dim argument as at::OptionalIntArrayRef."""
    if v.kind in ("int", "int?"):  # an int? of None reduces every dim (argmax)
        return f"rules::one_dim({v.code})"
    if v.kind == "ints":
        # An int[] argument passes as it is; SymInt[] and computed lists are guarded to ints.
        return f"rules::concrete({v.raw or v.code})"
    return v.code


def _names(e: Expr) -> list[str]:
    if isinstance(e, Name):
        return [e.id]
    if isinstance(e, BinOp):
        return _names(e.lhs) + _names(e.rhs)
    if isinstance(e, UnaryOp):
        return _names(e.operand)
    if isinstance(e, Cond):
        return _names(e.test) + _names(e.then) + _names(e.otherwise)
    if isinstance(e, Call):
        return [n for a in e.args for n in _names(a)]
    if isinstance(e, ShapeList):
        return [n for it in e.items for n in _names(it.value if isinstance(it, Star) else it)]
    return []


_KIND_NAMES = {
    "tensor": "a Tensor",
    "tensors": "a Tensor[]",
    "tensor?": "a Tensor?",
    "int": "an int",
    "ints": "a list of dims",
    "int?": "an int?",
    "ints?": "an int[]?",
    "bool": "a bool",
    "scalar": "a Scalar",
    "scalar?": "a Scalar?",
    "dtype": "a ScalarType",
    "dtype?": "a ScalarType?",
    "float": "a float",
    "str": "a str",
    "str?": "a str?",
    "elems": "per-element dims",
    "dimlist": "a dim list",
    "shapes": "one shape per element of a list",
    "output": "an output",
    "other": "an argument rules cannot use",
}


def _show(kind: str) -> str:
    return " or ".join(_KIND_NAMES.get(k, k) for k in kind.split("|"))


def promoted_tensors(rule) -> tuple[str, ...]:
    """The tensors whose promoted dtype `allowed` (given for every tensor) restricts, as torch checks
    an op's common dtype, not each input: those of the first output's promote(), when every branch
    of its dtype rule promotes the same single tensors. Other tensors are checked one by one."""
    kinds = dict(rule.args)

    def of(e: Expr) -> tuple[str, ...] | None:
        if isinstance(e, Cond):
            then, otherwise = of(e.then), of(e.otherwise)
            return then if then == otherwise else None
        if isinstance(e, Call) and e.fn == "promote":
            names = tuple(
                a.id for a in e.args if isinstance(a, Name) and kinds.get(a.id) in ("tensor", "tensors")
            )
            return None if any(kinds[n] == "tensors" for n in names) else names
        return None

    return (of(rule.outputs[0].dtype) or ()) if rule.outputs else ()


def lower_rule(rule, op: str) -> list[str]:
    """The C++ statements of the meta function's body (before the return)."""
    low = Lowering(rule, op)
    low.run()
    return low.lines


# -- tuning keys and variant conditions (an op's ``kernels:``, codegen/multi_kernel.py) ------------

TUNING_BUILTINS = ("numel", "bucket_pow2", "contiguous", "stride", "innermost")


class TuningLowering(Lowering):
    """Expressions over an impl's arguments: the rule's names plus what only a real tensor has."""

    def call(self, e: Call) -> Value:
        if e.fn not in TUNING_BUILTINS:
            return super().call(e)
        if e.kwargs:
            raise self.fail(f"{e.fn}() takes no keyword arguments", "pass arguments by position")
        args = [self.expr(a) for a in e.args]
        kinds = [a.kind for a in args]
        expected = {
            "numel": ["tensor"],
            "bucket_pow2": ["int"],
            "contiguous": ["tensor"],
            "stride": ["tensor", "int"],
            "innermost": ["tensor", "ints|int|int?|ints?"],
        }[e.fn]
        if len(kinds) != len(expected) or any(k not in x.split("|") for k, x in zip(kinds, expected)):
            raise self.fail(
                f"{e.fn}() takes ({', '.join(_show(x) for x in expected)}), got ({', '.join(_show(k) for k in kinds)})",
                f"see {e.fn}() in docs/rules.md",
            )
        if e.fn == "numel":
            return Value("int", f"c10::SymInt({args[0].code}.numel())")
        if e.fn == "bucket_pow2":
            return Value("int", f"rules::bucket_pow2({args[0].code})")
        if e.fn == "contiguous":
            return Value("bool", f"{args[0].code}.is_contiguous()")
        if e.fn == "stride":
            return Value("int", f"c10::SymInt({args[0].code}.stride(({args[1].code}).expect_int()))")
        dims = args[1]
        if dims.kind == "ints" and dims.raw is not None:  # precomputed reduced_dims: already wrapped
            return Value("bool", f"rules::innermost({args[0].code}, {dims.raw})")
        return Value(
            "bool",
            f'rules::innermost({args[0].code}, rules::reduced_dims(op, "{e.args[0]}", '
            f"{args[0].code}.dim(), {_dim_list(dims)}))",
        )


@dataclass(frozen=True)
class TuningCode:
    lines: tuple[str, ...]  # statements binding the patterns' dims
    key: tuple[str, ...]  # one int64_t expression per key item
    conditions: tuple[str | None, ...]  # one bool expression per condition (None: always)


def lower_tuning(
    rule,
    op: str,
    replaced: set[str],
    values: tuple[tuple[str, str], ...],
    outputs: tuple[str, ...],
    key: tuple[Expr, ...],
    conditions: tuple[Expr | None, ...],
    line: int | None = None,
) -> TuningCode:
    """C++ for a tuning key and variant conditions, given the impl's arguments: the rule's
    arguments except ``replaced`` ones, precomputed ``values`` (name, declared type) and tensor
    ``outputs``. Input patterns of arguments the impl still has are replayed to bind their dims."""
    low = TuningLowering(rule, op)
    low.line = line
    for name, kind in rule.args:
        if name not in replaced:
            low.env[name] = low.arg_value(name, kind)
    for name, declared in values:
        c = cpp_name(name)
        kind = {"int[]": "ints", "int": "int", "SymInt": "int", "bool": "bool"}.get(declared)
        if kind is None:
            continue
        low.env[name] = Value(
            kind,
            {"ints": f"rules::sym({c})", "int": f"c10::SymInt({c})", "bool": c}[kind],
            c if kind == "ints" else None,
        )
    for o in outputs:
        low.env[o] = Value("tensor", cpp_name(o))
    for inp in rule.inputs:
        if inp.arg not in replaced:
            low.pattern(inp.arg, inp.kind, inp.pattern)
    items = []
    for item in key:
        v = low.expr(item)
        if v.kind == "int":
            items.append(f"({v.code}).expect_int()")
        elif v.kind == "bool":
            items.append(f"static_cast<int64_t>({v.code})")
        else:
            raise low.fail(
                f"kernels.key item '{item}' must be an int or a bool, got {_show(v.kind)}",
                "write e.g. bucket_pow2(numel(out)) or innermost(self, reduced_dims)",
            )
    conds = tuple(None if c is None else low.condition(c) for c in conditions)
    return TuningCode(tuple(low.lines), tuple(items), conds)
