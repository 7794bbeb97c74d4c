"""Type-check a rule once and turn it into the typed IR (model/rule_ir.py) that every printer reads.

Each expression gets its kind; a kind mismatch, an unbound name or an unknown builtin raises
RuleError with the rule's line (rules/model.py makes it a SpecError). The printers only print.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from structgen.codegen import dtypes
from structgen.codegen.model import rule_ir as ir
from structgen.codegen.model.rule import Rule
from structgen.codegen.model.rule_tree import (
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
from structgen.codegen.rules import builtins


@dataclass
class RuleError(Exception):  # not frozen: raising sets __traceback__
    problem: str
    fix: str
    line: int | None = None


# What a failed condition prints of the values it names.
_SHOWN = ("int", "tensor", "scalar", "float", "dtype")
OPTIONAL_KINDS = ("tensor?", "int?", "ints?", "scalar?", "dtype?", "str?")
# The kinds of the op's arguments that expressions can use (rules/model.py arg_kind).
USABLE_KINDS = (
    "tensor",
    "tensors",
    "tensor?",
    "int",
    "ints",
    "int?",
    "ints?",
    "bool",
    "scalar",
    "scalar?",
    "dtype",
    "dtype?",
    "float",
    "str",
    "str?",
)
# A precomputed value's declared type -> the kind its rule must compute, and the kind it has
# where the impl receives it (the multi-kernel choosers).
PRECOMPUTED_RULE_KINDS = {"int[]": "dimlist", "int": "int", "SymInt": "int", "bool": "bool"}
PRECOMPUTED_VALUE_KINDS = {"int[]": "ints", "int": "int", "SymInt": "int", "bool": "bool"}


def argument(name: str, kind: str) -> ir.Arg:
    return ir.Arg(name, kind if kind in USABLE_KINDS else "other")


@dataclass
class Checker:
    rule: Rule
    # "tuning" adds the multi-kernel builtins (numel of a real tensor, ...), "index" meta.index's
    context: str = "shape"
    env: dict[str, ir.Expr] = field(default_factory=dict)
    statements: list[ir.Statement] = field(default_factory=list)
    line: int | None = None
    in_check: bool = False

    def fail(self, problem: str, fix: str) -> RuleError:
        return RuleError(problem, fix, self.line)

    # -- the whole rule --------------------------------------------------------------------------

    def meta(self) -> ir.MetaIR:
        rule = self.rule
        for name, kind in rule.args:
            self.env[name] = argument(name, kind)
        for inp in rule.inputs:
            self.line = inp.line
            self.pattern(inp.arg, inp.kind, inp.pattern)
        for out in rule.outputs:
            self.line = out.line
            if out.arg in self.env:
                raise self.fail(f"output '{out.arg}' has the name of a bound dim", "rename the dim")
            shape = self.expr(out.shape)
            if shape.kind == "tensor":
                shape = ir.SizesOf(shape)
            if out.is_list:
                if shape.kind != "shapes":
                    raise self.fail(
                        f"meta.shape.{out.arg}: '{out.arg}' is a Tensor[] output, so its rule must give one "
                        f"shape per element, got {show(shape.kind)}",
                        "write e.g. 'split(self, split_sizes, dim)'",
                    )
            elif shape.kind == "shapes":
                raise self.fail(
                    f"meta.shape.{out.arg} gives one shape per element of a list, but '{out.arg}' is "
                    "a single Tensor",
                    f"declare '{out.arg}' as 'Tensor(a!)[] {out.arg}', or give one shape",
                )
            elif shape.kind != "ints":
                raise self.fail(
                    f"meta.shape.{out.arg} must be a shape (a list of dims), got {show(shape.kind)}",
                    "write e.g. '[*batch, n, m]' or 'broadcast(self, other)'",
                )
            self.statements.append(ir.OutputShape(out.arg, shape, out.is_list))
            self.line = out.dtype_line
            self.statements.append(ir.OutputDtypes(out.arg, self.dtype_expr(out.dtype)))
        promoted = promoted_tensors(rule)
        for arg, allowed in rule.allowed:
            if arg is None and promoted:
                self.statements.append(ir.AllowedPromoted(promoted, rule.outputs[0].arg, allowed))
            for name, kind in rule.args:
                if (arg is not None and name != arg) or (arg is None and name in promoted):
                    continue
                if kind in ("tensor", "tensor?", "tensors") or (kind == "scalar" and arg == name):
                    self.statements.append(ir.Allowed(ir.Arg(name, kind), allowed))
        for out in rule.outputs:
            self.env[out.arg] = ir.OutputRef(out.arg)
        self.in_check = True
        for chk in rule.checks:
            self.line = chk.line
            self.check(chk.expr)
        self.in_check = False
        for out in rule.outputs:
            self.line = out.layout_line
            if out.is_list:
                continue  # elements are contiguous (model.py rejects a layout)
            like = () if out.layout is None else self.layout(out)
            self.statements.append(ir.OutputStrides(out.arg, like))
        for name, expr, declared, line in rule.precomputed:
            self.line = line
            v = self.expr(expr)
            if v.kind != PRECOMPUTED_RULE_KINDS.get(declared):
                raise self.fail(
                    f"meta.precomputed.{name} computes {show(v.kind)}, but '{name}' is declared '{declared}'",
                    "declare int[] for dims(...), int for int rules, bool for conditions",
                )
            self.statements.append(ir.Precomputed(name, v))
        index = []
        self.context = "index"
        for ik in rule.index:
            self.line = ik.line
            v = self.expr(ik.axes)
            key = ik.output if ik.kind == "positions" else ik.kind
            if v.kind != "dimlist":
                where = f"meta.positions.{ik.output}" if ik.kind == "positions" else f"meta.index.{ik.kind}"
                raise self.fail(
                    f"{where} must give axes of '{ik.tensor}' (dims(...)), got {show(v.kind)}",
                    f"write e.g. '{key}: \"dims({ik.tensor}, dim)\"'",
                )
            index.append(ir.IndexKind(ik.kind, ik.tensor, v, ik.output, ik.offset))
        self.context = "shape"
        return ir.MetaIR(tuple(self.statements), tuple(o.arg for o in rule.outputs), tuple(index))

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
                want = "ints" if isinstance(it, PGroup) else ("elems" if it.per_element else "int")
                if self.env[it.name].kind != want:
                    raise self.fail(
                        f"'{it.name}' is bound as {show(self.env[it.name].kind)} and as {show(want)}",
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
                    f"pattern {pattern} of '{arg}' binds '{unbound.name}', but '{arg}' is optional "
                    "(Tensor?): "
                    "its pattern is checked only when it is given, so it cannot bind a dim",
                    f"bind '{unbound.name}' in a required tensor's pattern, or use '_' here",
                )
        # What this pattern binds first is declared before the length expressions are checked.
        declares: list[ir.Bound] = []
        for it in pattern.items:
            if isinstance(it, PDim | PGroup) and it.name not in self.env:
                kind_of = "ints" if isinstance(it, PGroup) else ("elems" if it.per_element else "int")
                bound = ir.Bound(it.name, kind_of)
                declares.append(bound)
                self.env[it.name] = bound
        first = {b.name for b in declares}
        lengths = {
            g.name: self.int_expr(g.length, f"the length of {g}") for g in groups if g.length is not None
        }
        items: list[ir.PatternItem] = []
        for it in pattern.items:
            if isinstance(it, PAny):
                items.append(ir.AnyDim())
            elif isinstance(it, PLiteral):
                items.append(ir.LiteralDim(it.size))
            elif isinstance(it, PDim):
                items.append(ir.DimItem(it.name, it.name in first, it.per_element))
            elif it in arg_groups:
                items.append(ir.GroupItem(it.name, False, argument=ir.Arg(it.name, "ints")))
            else:
                items.append(ir.GroupItem(it.name, it.name in first, lengths.get(it.name)))
        self.statements.append(ir.MatchPattern(arg, kind, str(pattern), tuple(items), tuple(declares)))

    # -- expressions -----------------------------------------------------------------------------

    def int_expr(self, e: Expr, what: str) -> ir.Expr:
        return self.int_value(self.expr(e), e, what)

    def int_value(self, v: ir.Expr, e: Expr, what: str) -> ir.Expr:
        if v.kind != "int":
            raise self.fail(
                f"{what} must be an int, got {show(v.kind)} '{e}'",
                "use a dim, an int argument or arithmetic on them",
            )
        return v

    def expr(self, e: Expr) -> ir.Expr:
        if isinstance(e, Num):
            return ir.IntLit(e.value)
        if isinstance(e, Name):
            if e.id in ("True", "False"):
                return ir.BoolLit(e.id == "True")
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
            items: list[ir.Expr | ir.Splice] = []
            for item in e.items:
                if isinstance(item, Star):
                    v = self.expr(item.value)
                    if v.kind == "tensor":
                        v = ir.SizesOf(v)
                    if v.kind != "ints":
                        raise self.fail(
                            f"'*{item.value}' must splice a list of dims, got {show(v.kind)}",
                            "splice a group ('*batch'), a tensor's shape ('*self') or broadcast(...)",
                        )
                    items.append(ir.Splice(v))
                else:
                    items.append(self.int_expr(item, f"shape item {item}"))
            return ir.ShapeLiteral(tuple(items))
        if isinstance(e, Cond):
            test = self.condition(e.test)
            a, b = self.expr(e.then), self.expr(e.otherwise)
            if a.kind != b.kind or a.kind not in ("int", "ints", "bool"):
                raise self.fail(
                    f"both sides of '{e}' must be ints, shapes or bools of one kind, "
                    f"got {show(a.kind)} and {show(b.kind)}",
                    "make both branches the same kind of value",
                )
            return ir.Select(test, a, b, a.kind)
        if isinstance(e, UnaryOp):
            if e.op == "-":
                return ir.Unary("-", self.int_expr(e.operand, "the operand of -"), "int")
            v = self.expr(e.operand)
            if v.kind != "bool":
                raise self.fail(f"'not' needs a bool, got {show(v.kind)}", "compare values first")
            return ir.Unary("not", v, "bool")
        if isinstance(e, BinOp):
            if e.op in ("and", "or"):
                a, b = self.expr(e.lhs), self.expr(e.rhs)
                if a.kind != "bool" or b.kind != "bool":
                    raise self.fail(
                        f"'{e.op}' needs bools, got {show(a.kind)} and {show(b.kind)}",
                        "use 'or' between dtypes only in meta.dtype",
                    )
                return ir.Binary(e.op, a, b, "bool")
            comparison = e.op in ("==", "!=", "<", "<=", ">", ">=")
            if comparison and (dtypes_compared := self.dtype_comparison(e)) is not None:
                return dtypes_compared
            lv, rv = self.expr(e.lhs), self.expr(e.rhs)
            if e.op in ("==", "!=") and lv.kind == "ints" and rv.kind == "ints":
                return ir.Binary(e.op, lv, rv, "bool", shapes=True)  # lists (addmm: self expands to [n, m])
            numbers = {lv.kind, rv.kind}
            if comparison and numbers & {"scalar", "float"}:
                if not numbers <= {"scalar", "float", "int"}:
                    raise self.fail(
                        f"'{e}' compares {show(lv.kind)} with {show(rv.kind)}",
                        "compare a Scalar or float with a number, an int or another Scalar: 'p >= 0'",
                    )
                return ir.Compare(e.op, lv, rv, "numbers")
            a = self.int_value(lv, e.lhs, f"the left side of '{e.op}'")
            b = self.int_value(rv, e.rhs, f"the right side of '{e.op}'")
            return ir.Binary(e.op, a, b, "bool" if comparison else "int")
        assert isinstance(e, Call)
        return self.call(e)

    def dtype_comparison(self, e: BinOp) -> ir.Compare | None:
        """``dtype(t) == uint8``, ``dtype != float32`` (a ScalarType argument): a comparison of
        dtypes, or None where neither side is one. Only in meta.checks: describe() has no dtypes."""
        lhs, rhs = self.dtype_side(e.lhs), self.dtype_side(e.rhs)
        if lhs is None and rhs is None:
            return None
        if lhs is None or rhs is None or e.op not in ("==", "!="):
            raise self.fail(
                f"'{e}' compares a dtype with something else, or orders dtypes",
                "compare two dtypes with == or !=: 'dtype(self) != uint8'",
            )
        if not self.in_check:
            raise self.fail(f"'{e}' compares dtypes outside meta.checks", "move the condition to meta.checks")
        return ir.Compare(e.op, lhs, rhs, "dtypes")

    def dtype_side(self, e: Expr) -> ir.Expr | None:
        """A dtype an expression names: dtype(t), a ScalarType argument or a dtype name; else None."""
        if isinstance(e, Call) and e.fn == "dtype":
            return self.expr(e)
        if isinstance(e, Name):
            v = self.env.get(e.id)
            if v is not None:
                return v if v.kind == "dtype" else None
            if e.id in dtypes.RULE_NAMES:
                return ir.DtypeName(e.id)
        return None

    def condition(self, e: Expr) -> ir.Expr:
        v = self.expr(e)
        if v.kind != "bool":
            raise self.fail(
                f"the condition '{e}' must be a bool, got {show(v.kind)}",
                "test e.g. given(rounding_mode) or a comparison",
            )
        return v

    def want(self, e: Call, args: list[ir.Expr], expected: tuple[str, ...], fix: str = "") -> None:
        kinds = [a.kind for a in args]
        ok = len(expected) == len(kinds) and all(k in x.split("|") for k, x in zip(kinds, expected))
        if not ok:
            raise self.fail(
                f"{e.fn}() takes ({', '.join(show(x) for x in expected)}), "
                f"got ({', '.join(show(k) for k in kinds)})",
                fix or f"see {e.fn}() in docs/rules.md",
            )

    def want_same_dtype(self, args: list[ir.Expr]) -> None:
        if (
            len(args) < 2
            or args[0].kind != "tensor"
            or any(a.kind not in ("tensor", "tensor?") for a in args)
        ):
            raise self.fail(
                "same_dtype() takes two or more tensors, the first one required (not Tensor?)",
                "write e.g. 'same_dtype(self, other)' or 'same_dtype(input, weight)'",
            )

    def call(self, e: Call) -> ir.Expr:
        fn = e.fn
        own = builtins.builtin(fn, self.context) if self.context in ("tuning", "index") else None
        if own is not None and own.context == self.context:
            if e.kwargs:
                raise self.fail(f"{fn}() takes no keyword arguments", "pass arguments by position")
            args = [self.expr(a) for a in e.args]
            self.want(e, args, own.params)
            return ir.Call(fn, tuple(args), tuple(str(a) for a in e.args), own.result, context=self.context)
        if fn == "given":
            v = self.env.get(e.args[0].id) if len(e.args) == 1 and isinstance(e.args[0], Name) else None
            if v is None or v.kind not in OPTIONAL_KINDS or e.kwargs:
                raise self.fail(
                    f"given() takes one optional argument, got '{', '.join(str(a) for a in e.args)}'",
                    "pass a Tensor?, int?, int[]?, Scalar?, ScalarType? or str? argument: "
                    "given(rounding_mode)",
                )
            assert isinstance(v, ir.Arg)
            return ir.Given(v)
        if fn in builtins.names("index"):
            raise self.fail(
                f"{fn}() gives axes for meta.index and meta.positions only",
                f"use it in meta.index: {{whole: {fn}(...)}}",
            )
        if fn in builtins.names("dtype") or fn in builtins.names("check") or fn == "like":
            where = (
                "meta.dtype"
                if fn in builtins.names("dtype")
                else "meta.checks"
                if fn in builtins.names("check")
                else "meta.layout"
            )
            raise self.fail(f"{fn}() is not a shape builtin", f"use {fn}() in {where}")
        shape = builtins.builtin(fn, "shape")
        if shape is None:
            known = builtins.names("shape") + (builtins.names("check") if self.in_check else ())
            known = tuple(n for n in known if n != "given") + ("given",)
            raise self.fail(f"unknown builtin '{fn}'", f"use one of: {', '.join(known)}")
        if e.kwargs and not shape.options:
            raise self.fail(f"{fn}() takes no keyword arguments", "pass arguments by position")
        args = [self.expr(a) for a in e.args]
        labels = tuple(str(a) for a in e.args)
        if fn == "broadcast":
            if not args or any(a.kind not in ("tensor", "tensor?", "ints") for a in args):
                raise self.fail(
                    f"broadcast() takes tensors or dim groups, got ({', '.join(show(a.kind) for a in args)})",
                    "write e.g. broadcast(self, other) or broadcast(ba, bb)",
                )
            # A group is named *g in messages; a computed shape by its text.
            labels = tuple(
                f"*{s}" if a.kind == "ints" and isinstance(s, Name) else str(s) for a, s in zip(args, e.args)
            )
            return ir.Call(fn, tuple(args), labels, "ints")
        options = tuple((o.key, self.kwarg(e, o.key, o.values, o.default)) for o in shape.options)
        assert shape.params is not None
        self.want(e, args, shape.params)
        return ir.Call(fn, tuple(args), labels, shape.result, options)

    def dtype_expr(self, e: Expr) -> ir.Expr:
        if isinstance(e, Cond):
            test = self.condition(e.test)
            return ir.Select(test, self.dtype_expr(e.then), self.dtype_expr(e.otherwise), "dtypes")
        if isinstance(e, BinOp) and e.op == "or":
            lhs = e.lhs
            v = self.expr(lhs) if isinstance(lhs, Name) and lhs.id in self.env else None
            if v is None or v.kind != "dtype?":
                raise self.fail(
                    f"the left side of 'or' in a dtype rule must be a ScalarType? argument, got '{lhs}'",
                    "write e.g. 'dtype or promote(self)'",
                )
            assert isinstance(v, ir.Arg)
            return ir.DtypeOr(v, self.dtype_expr(e.rhs))
        if isinstance(e, Name):
            v = self.env.get(e.id)
            if v is not None:
                if v.kind in ("tensor", "dtype"):
                    assert isinstance(v, ir.Arg)
                    return ir.DtypeOf(v)
                raise self.fail(
                    f"'{e.id}' is {show(v.kind)}, not a dtype", "use a tensor, a dtype name or promote(...)"
                )
            if e.id in dtypes.RULE_NAMES:
                return ir.DtypeOf(ir.DtypeName(e.id))
            raise self.fail(
                f"'{e.id}' is neither a dtype nor an argument", f"use one of: {', '.join(dtypes.RULE_NAMES)}"
            )
        if isinstance(e, Call) and e.fn == "promote":
            kind = self.kwarg(e, "kind", builtins.PROMOTIONS, "DEFAULT")
            args = []
            for a in e.args:
                v = self.expr(a)
                if v.kind not in ("tensor", "tensors", "scalar", "scalar?"):
                    raise self.fail(
                        f"promote() takes tensors and Scalars, got {show(v.kind)} '{a}'",
                        "pass the tensor and Scalar arguments that take part in type promotion",
                    )
                args.append(v)
            if not any(v.kind in ("tensor", "tensors") for v in args):
                raise self.fail("promote() needs at least one tensor", "pass the tensor inputs")
            labels = tuple(str(a) for a in e.args)
            return ir.Call("promote", tuple(args), labels, "dtypes", (("kind", kind),), context="dtype")
        if isinstance(e, Call) and e.fn == "reduction":
            kind = self.kwarg(e, "kind", builtins.REDUCTIONS, "SUM")
            if len(e.args) not in (1, 2):
                raise self.fail(
                    "reduction() takes (tensor, [ScalarType? dtype])",
                    "write e.g. reduction(self, dtype, kind=SUM)",
                )
            t = self.expr(e.args[0])
            if t.kind != "tensor":
                raise self.fail(
                    f"reduction() reduces a tensor, got {show(t.kind)}", "pass the reduced tensor"
                )
            args = [t]
            if len(e.args) == 2:
                o = self.expr(e.args[1])
                if o.kind != "dtype?":
                    raise self.fail(
                        f"reduction()'s second argument must be a ScalarType? argument, got {show(o.kind)}",
                        "pass the op's 'ScalarType? dtype' argument",
                    )
                args.append(o)
            labels = tuple(str(a) for a in e.args)
            return ir.Call("reduction", tuple(args), labels, "dtypes", (("kind", kind),), context="dtype")
        raise self.fail(
            f"'{e}' is not a dtype rule",
            "use promote(...), reduction(...), a dtype name, a tensor, 'dtype or ...', "
            "or '... if ... else ...'",
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
        own = builtins.builtin(e.fn, "check") if isinstance(e, Call) else None
        if own is not None:
            assert isinstance(e, Call)
            args = [self.expr(a) for a in e.args]
            if e.fn == "same_dtype":
                self.want_same_dtype(args)
            else:
                assert own.params is not None
                self.want(e, args, own.params, fix=f"write '{own.usage}'")
            if e.kwargs and not own.options:
                raise self.fail(f"{e.fn}() takes no keyword arguments", f"write '{own.usage}'")
            options = tuple((o.key, self.kwarg(e, o.key, o.values, o.default)) for o in own.options)
            labels = tuple(str(a) for a in e.args)
            self.statements.append(
                ir.Check(ir.Call(e.fn, tuple(args), labels, "check", options, "check"), str(e))
            )
            return
        v = self.expr(e)
        if v.kind != "bool":
            raise self.fail(f"a check must be a condition, got {show(v.kind)} '{e}'", "write e.g. 'n > 0'")
        shown = tuple(dict.fromkeys(n for n in _names(e) if self.env.get(n) and self.env[n].kind in _SHOWN))
        self.statements.append(ir.Check(v, str(e), tuple((n, self.env[n]) for n in shown)))

    def layout(self, out) -> tuple[tuple[str, ir.Expr], ...]:
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
                    f"like() takes tensor arguments, got {show(v.kind)} '{a}'", "name tensor inputs"
                )
            items.append((str(a), v))
        return tuple(items)


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


def show(kind: str) -> str:
    """A kind (or 'a|b') as messages name it."""
    return " or ".join(_KIND_NAMES.get(k, k) for k in kind.split("|"))


def promoted_tensors(rule: Rule) -> tuple[str, ...]:
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


def check_rule(rule: Rule) -> ir.MetaIR:
    """The rule's meta function as IR; RuleError for the first problem."""
    return Checker(rule).meta()


def check_tuning(
    rule: Rule,
    replaced: set[str],
    values: tuple[tuple[str, str], ...],
    outputs: tuple[str, ...],
    key: tuple[Expr, ...],
    conditions: tuple[tuple[Expr | None, int], ...],
    key_line: int | None = None,
) -> ir.TuningIR:
    """A tuning key and variant conditions (each with its line) over the impl's arguments: the
    rule's arguments except ``replaced`` ones, precomputed ``values`` (name, declared type) and
    tensor ``outputs``. Input patterns of arguments the impl still has bind their dims."""
    c = Checker(rule, context="tuning")
    c.line = key_line
    for name, kind in rule.args:
        if name not in replaced:
            c.env[name] = argument(name, kind)
    for name, declared in values:
        kind = PRECOMPUTED_VALUE_KINDS.get(declared)
        if kind is not None:
            c.env[name] = ir.Arg(name, kind)
    for o in outputs:
        c.env[o] = ir.Arg(o, "tensor")
    for inp in rule.inputs:
        if inp.arg not in replaced:
            c.pattern(inp.arg, inp.kind, inp.pattern)
    items = []
    for item in key:
        v = c.expr(item)
        if v.kind not in ("int", "bool"):
            raise c.fail(
                f"kernels.key item '{item}' must be an int or a bool, got {show(v.kind)}",
                "write e.g. bucket_pow2(numel(out)) or innermost(self, reduced_dims)",
            )
        items.append(v)
    conds = []
    for cond, line in conditions:
        c.line = line
        conds.append(None if cond is None else c.condition(cond))
    patterns = tuple(s for s in c.statements if isinstance(s, ir.MatchPattern))
    return ir.TuningIR(patterns, tuple(items), tuple(conds))
