"""The manifest's ``derivatives:`` key, checked and typed: what backward gives each input.

    - func: mul.Tensor(Tensor self, Tensor other) -> Tensor
      structured_delegate: mul.out
      derivatives:                      # on the functional overload, as PyTorch's derivatives.yaml
        self: "sum_to(grad * conj(other), self)"
        other: "sum_to(grad * conj(self), other)"

A formula is an expression of the pointwise formula language (codegen/pointwise/syntax.py) over
the op's arguments, ``grad`` (``grad_<output>`` for an op with several outputs), ``result``
(``result_<output>``) and the functions of codegen/autograd/functions.py. An input may be
``non_differentiable``; ``output_differentiability: [true, false]`` says which outputs carry
gradients; ``derivatives: not_differentiable`` says the op has none (backward raises). A
pointwise op needs no key: its derivatives are derived from its formula (derive.py); a key
written for it overrides the derived formula of the inputs it names.
"""

from __future__ import annotations

import dataclasses

from structgen.codegen import limits
from structgen.codegen.autograd import aten, derive
from structgen.codegen.autograd.functions import FUNCTIONS, SPECIAL
from structgen.codegen.errors import Problem, SpecError
from structgen.codegen.load import LineDict
from structgen.codegen.model.autograd import (
    AUTO_LINEAR,
    NON_DIFFERENTIABLE_INPUT,
    NOT_DIFFERENTIABLE,
    NOT_IMPLEMENTED,
    Apply,
    Autograd,
    Const,
    Expr,
    Gradient,
    Op,
    Ref,
    Select,
    Where,
    WrittenDerivatives,
)
from structgen.codegen.model.formula import (
    COMPARISONS,
    Bin,
    Call,
    Lit,
    Node,
    Un,
    Var,
    free_names,
    operation_count,
    substitute,
)
from structgen.codegen.model.schema import BaseTy, BaseType, FunctionSchema, ListType, OptionalType, Type
from structgen.codegen.pointwise.lower import FUNCTIONS as KERNEL_FUNCTIONS
from structgen.codegen.pointwise.lower import SPECIAL as KERNEL_SPECIAL
from structgen.codegen.pointwise.syntax import FormulaSyntaxError, parse_formula

_ARITHMETIC = ("+", "-", "*", "/", "//", "%")
_MASK = "grad_input_mask"  # which gradients a formula of several inputs must give


class FormulaError(Problem):
    """A derivative formula that does not check."""


def parse_derivatives(
    path: str, entry: LineDict, op: str, schema: FunctionSchema
) -> WrittenDerivatives | None:
    raw = entry.get("derivatives")
    if raw is None:
        return None
    line = entry.line_of("derivatives")

    def fail(problem: str, fix: str, at: int = line) -> SpecError:
        return SpecError(path, at, op, f"derivatives: {problem}", fix)

    if raw == NOT_DIFFERENTIABLE:
        return WrittenDerivatives(line, (), (), None, True)
    if not isinstance(raw, dict):
        raise fail(
            f"expected a mapping of inputs to formulas or '{NOT_DIFFERENTIABLE}', got {raw!r}",
            'write e.g. derivatives: {self: "grad * other"}',
        )
    names = {a.name for a in schema.arguments.all}
    formulas, non_diff, outputs, missing, forward = [], [], None, [], None
    keys: dict[str, str] = {}  # each input's key: backward gives an input one gradient
    for key, value in raw.items():
        at = raw.line_of(key)
        if key == "result":
            if value == AUTO_LINEAR:
                forward = (AUTO_LINEAR, AUTO_LINEAR, at)
                continue
            if not isinstance(value, str):
                raise fail(f"the forward formula must be a string, got {value!r}", "quote the formula", at)
            try:
                forward = (parse_formula(value), value, at)
            except FormulaSyntaxError as e:
                raise fail(
                    f"cannot parse '{value}': {e}", "see docs/autograd.md for the formula syntax", at
                ) from None
            continue
        if key == "output_differentiability":
            if not isinstance(value, list) or not all(isinstance(v, bool) for v in value):
                raise fail(
                    "output_differentiability must be a list of booleans", "write e.g. [true, false]", at
                )
            if len(value) != len(schema.returns):
                raise fail(
                    f"output_differentiability has {len(value)} entries for {len(schema.returns)} outputs",
                    "give one true/false per output",
                    at,
                )
            outputs = tuple(value)
            continue
        inputs = tuple(k.strip() for k in str(key).split(","))
        for name in inputs:
            if name not in names:
                raise fail(
                    f"'{name}' is not an argument of the op", f"use one of: {', '.join(sorted(names))}", at
                )
            if name in keys:
                where = f"'{key}'" if keys[name] == key else f"'{keys[name]}' and '{key}'"
                raise fail(f"'{name}' is named twice, in {where}", f"give '{name}' one entry", at)
            keys[name] = key
        if value == NON_DIFFERENTIABLE_INPUT:
            non_diff.extend(inputs)
            continue
        if value == NOT_IMPLEMENTED:
            missing.extend(inputs)
            continue
        if not isinstance(value, str):
            raise fail(f"the formula of '{key}' must be a string, got {value!r}", "quote the formula", at)
        try:
            node = parse_formula(value)
        except FormulaSyntaxError as e:
            raise fail(
                f"cannot parse '{value}': {e}", "see docs/autograd.md for the formula syntax", at
            ) from None
        formulas.append((inputs, node, value, at))
    return WrittenDerivatives(line, tuple(formulas), tuple(non_diff), outputs, False, tuple(missing), forward)


# ---------------------------------------------------------------------------------------------
# ---------------------------------------------------------------------------------------------
# Kinds of arguments


def arg_kind(t: Type) -> str:
    if t == BaseType(BaseTy.Tensor):
        return "tensor"
    if t == OptionalType(BaseType(BaseTy.Tensor)):
        return "tensor?"
    if isinstance(t, ListType) and t.elem == BaseType(BaseTy.Tensor):
        return "tensors"
    if isinstance(t, BaseType) and t.name in (BaseTy.Scalar, BaseTy.float, BaseTy.int, BaseTy.SymInt):
        return "scalar"
    if t == BaseType(BaseTy.bool):
        return "bool"
    if isinstance(t, OptionalType) and t.elem == BaseType(BaseTy.Scalar):
        return "scalar?"
    if isinstance(t, OptionalType) and t.elem == BaseType(BaseTy.str) or t == BaseType(BaseTy.str):
        return "str"
    if isinstance(t, ListType) or (isinstance(t, OptionalType) and isinstance(t.elem, ListType)):
        return "ints"
    if isinstance(t, OptionalType) and t.elem in (BaseType(BaseTy.int), BaseType(BaseTy.SymInt)):
        return "ints"  # int? dim: a reduction's dims
    return "other"


def _fits(kind: str, param: str) -> bool:
    if param == "any":
        return kind != "mask"
    if param == "value":
        return kind in ("tensor", "scalar")
    if param in ("like", "likes"):
        return kind == param
    if param == "tensor?":
        return kind in ("tensor", "tensor?")
    if param == "scalar?":
        return kind in ("scalar", "scalar?", "none")
    if param == "scalar":
        return kind == "scalar"
    if param == "ints":
        return kind in ("ints", "scalar", "none")
    if param == "int[]":  # an ATen int[]: a list, or one dim (a one-element list)
        return kind in ("ints", "scalar")
    if param == "int":  # an ATen int
        return kind == "scalar"
    return kind == param


# ---------------------------------------------------------------------------------------------
# The checker


class _Checker:
    """Checks one key's formulas against its scope: ``what`` names the scope in the message of
    a name outside it, ``elsewhere`` says why a name of the other key's scope is not in it."""

    def __init__(self, scope: dict[str, Ref], what: str, elsewhere: dict[str, str]):
        self.scope = scope
        self.what = what
        self.elsewhere = elsewhere
        self.mask = 0  # the inputs of a formula of several: grad_input_mask says which are needed

    def expr(self, n: Node) -> Expr:
        if isinstance(n, Lit):
            if isinstance(n.value, bool):
                return Const(n.value, n.text, "bool")
            if isinstance(n.value, int | float):
                return Const(n.value, n.text, "scalar")
            return Const(n.value, n.text, "none" if n.value is None else "str")
        if isinstance(n, Var):
            if n.name == _MASK and self.mask > 1:
                return Ref(n.name, "mask", "mask")
            ref = self.scope.get(n.name)
            if ref is None:
                why = self.elsewhere.get(n.name)
                raise FormulaError(
                    f"'{n.name}' is {why}" if why else f"'{n.name}' is neither {self.what}",
                    f"use one of: {', '.join(sorted(self.scope))}",
                )
            return ref
        if isinstance(n, Un):
            v = self.expr(n.operand)
            if n.op == "-":
                return Op("neg", (self.value(v, n),), v.kind)
            if n.op == "not":
                return Op("not", (v,), "tensor" if v.kind == "tensor" else "bool")
            raise FormulaError(f"'{n}': no gradient formula uses '{n.op}'", "write it another way")
        if isinstance(n, Bin):
            return self.binary(n)
        assert isinstance(n, Call)
        return self.call(n)

    def value(self, v: Expr, n: Node) -> Expr:
        if v.kind not in ("tensor", "scalar"):
            raise FormulaError(f"'{n}' needs a tensor or a number, got a {v.kind}", "see docs/autograd.md")
        return v

    def binary(self, n: Bin) -> Expr:
        a, b = self.expr(n.lhs), self.expr(n.rhs)
        if n.op in ("and", "or"):
            if a.kind == b.kind == "bool":
                return Op(n.op, (a, b), "bool")
            if {a.kind, b.kind} <= {"tensor", "bool"}:
                return Op(n.op, (a, b), "tensor")
            raise FormulaError(f"'{n}': '{n.op}' joins conditions", "compare values first")
        if n.op in ("==", "!=") and {a.kind, b.kind} == {"str"} | (
            {"none"} if "none" in (a.kind, b.kind) else {"str"}
        ):
            if not isinstance(a, Ref):
                a, b = b, a
            if not isinstance(a, Ref) or not isinstance(b, Const):
                raise FormulaError(f"'{n}': compare a str argument with a literal", 'write mode == "trunc"')
            return Op(n.op, (a, b), "bool")  # decided once, on the host
        self.value(a, n.lhs)
        self.value(b, n.rhs)
        tensor = "tensor" in (a.kind, b.kind)
        if n.op in COMPARISONS:
            return Op(n.op, (a, b), "tensor" if tensor else "bool")
        if n.op in _ARITHMETIC:
            return Op(n.op, (a, b), "tensor" if tensor else "scalar")
        raise FormulaError(f"'{n}': no gradient formula uses '{n.op}'", "write it another way")

    def call(self, n: Call) -> Expr:
        if n.fn == "where":
            if len(n.args) != 3:
                raise FormulaError(f"where() takes 3 arguments, got {len(n.args)}", "write where(cond, a, b)")
            c, a, b = (self.expr(x) for x in n.args)
            if c.kind not in ("tensor", "bool"):
                raise FormulaError(f"'{n}': the condition must be a comparison", "write where(x > 0, a, b)")
            self.value(a, n.args[1])
            self.value(b, n.args[2])
            kind = "tensor" if "tensor" in (a.kind, b.kind, c.kind) else "scalar"
            return Where(c, a, b, kind)
        if n.fn == "select":
            arg = self.expr(n.args[0]) if n.args else None
            if not isinstance(arg, Ref) or arg.kind != "str" or len(n.args) % 2 != 1:
                raise FormulaError(
                    f"'{n}' is not a select over a string argument", 'write select(mode, "a", x, ...)'
                )
            cases = []
            for i in range(1, len(n.args), 2):
                label = n.args[i]
                if not isinstance(label, Lit) or not (label.value is None or isinstance(label.value, str)):
                    raise FormulaError(
                        f"select(): '{label}' is not a string or None", 'write select(mode, "a", x)'
                    )
                cases.append((label.value, self.value(self.expr(n.args[i + 1]), n.args[i + 1])))
            kind = "tensor" if any(e.kind == "tensor" for _, e in cases) else "scalar"
            return Select(arg, tuple(cases), kind)
        fn = FUNCTIONS.get(n.fn)
        if fn is None:
            return self.aten_call(n)
        if len(n.args) != len(fn.params):
            raise FormulaError(
                f"{fn.name}() takes {len(fn.params)} arguments, got {len(n.args)}",
                f"see {fn.name} in docs/autograd.md",
            )
        args = []
        for param, x in zip(fn.params, n.args, strict=True):
            v = self.like(x, param) if param in ("like", "likes") else self.expr(x)
            if not _fits(v.kind, param):
                raise FormulaError(
                    f"{fn.name}(): '{x}' is a {v.kind}, where a {param} goes",
                    f"see {fn.name} in docs/autograd.md",
                )
            if param == "mask" and fn.gradients != self.mask:
                raise FormulaError(
                    f"{fn.name}() gives {fn.gradients} gradients, for the {self.mask} inputs here",
                    f"name its {fn.gradients} inputs (see {fn.name} in docs/autograd.md)",
                )
            args.append(v)
        kind = fn.result
        if kind == "cond":  # a condition: a bool tensor, or a host bool for a number
            kind = "tensor" if any(a.kind == "tensor" for a in args) else "bool"
        if kind == "value":
            kind = "tensor" if any(a.kind == "tensor" for a in args) else "scalar"
        return Apply(fn, tuple(args), kind)

    def aten_call(self, n: Call) -> Expr:
        args = tuple(self.expr(x) for x in n.args)
        try:
            fn = aten.resolve(n.fn, [a.kind for a in args], _fits, [*FUNCTIONS, *SPECIAL])
        except aten.CallError as e:
            raise FormulaError(e.problem, e.fix) from None
        return Apply(fn, args, "tensor")

    def like(self, n: Node, param: str) -> Expr:
        ref = self.expr(n)
        want = ("tensor", "tensor?") if param == "like" else ("tensors",)
        if not isinstance(ref, Ref) or ref.kind not in want or ref.role != "arg":
            raise FormulaError(
                f"'{n}' must name a {'Tensor' if param == 'like' else 'Tensor[]'} argument (its shape and "
                "dtype are meant)",
                "write e.g. sum_to(grad, self)",
            )
        return Ref(ref.name, param, ref.role)


def _uses(e: Expr) -> set[str]:
    if isinstance(e, Ref):
        return {e.name}
    if isinstance(e, Const):
        return set()
    if isinstance(e, Where):
        return _uses(e.cond) | _uses(e.then) | _uses(e.otherwise)
    if isinstance(e, Select):
        return {e.arg.name}.union(*(_uses(x) for _, x in e.cases))
    return set().union(*(_uses(a) for a in e.args))


# ---------------------------------------------------------------------------------------------
# An op's derivatives


def resolve(
    path: str,
    op: str,
    functional: FunctionSchema,
    outputs: tuple[str, ...],
    output_dtypes_float: tuple[bool, ...],
    written: WrittenDerivatives | None,
    pointwise: Node | None,
    differentiable_inputs: tuple[str, ...],
    list_output: bool = False,
) -> Autograd | None:
    """The op's derivatives, or None when it has none (backward raises): the written formulas,
    and for a pointwise op the derived ones of every input the key does not name.
    ``differentiable_inputs``: the tensor arguments that may take floating dtypes."""
    line = written.line if written is not None else 0

    def fail(problem: str, fix: str, at: int = line) -> SpecError:
        return SpecError(path, at, op, f"derivatives: {problem}", fix)

    if written is not None and written.not_differentiable:
        return None
    if written is None and pointwise is None:
        return None  # no key: not differentiable yet (the manifest check asks for one where it must)
    if list_output:  # a Tensor[] output: grads holds one gradient per element (some undefined)
        outputs = ()
    scope, checker = _backward_scope(functional, outputs, list_output)
    if list_output and written is not None and written.output_differentiability:
        raise fail(
            "output_differentiability: each element of a Tensor[] output carries a gradient by its dtype",
            "remove output_differentiability",
        )
    differentiability = (
        ()
        if list_output
        else written.output_differentiability
        if written and written.output_differentiability
        else output_dtypes_float
    )
    many = len(outputs) > 1
    # The gradients of outputs that carry none: backward never gets them (undefined tensors).
    silent = {
        ("grad_" + o if many else "grad"): o
        for o, carries in zip(outputs, differentiability, strict=True)
        if not carries
    }
    gradients = _written_gradients(written, scope, checker, silent, fail) if written else []
    checker.mask = 0
    if pointwise is not None:
        named = {name for names_, *_ in (written.formulas if written else ()) for name in names_}
        skipped = named | set(written.non_differentiable if written else ())
        gradients += _derived_gradients(pointwise, differentiable_inputs, skipped, checker, fail, line or 1)
    for name in written.not_implemented if written else ():
        base = op.split("(")[0]
        raises = Apply(
            FUNCTIONS["not_implemented"], (Const(base, base, "str"), Const(name, name, "str")), "tensor"
        )
        gradients.append(Gradient((name,), raises, NOT_IMPLEMENTED, False))
    _check_covered(gradients, written, differentiable_inputs, outputs, differentiability, fail)
    if pointwise is not None and len(outputs) == 1:
        gradients = [_with_kernel(g, scope, pointwise, checker) for g in gradients]
    carrying = [o for o, carries in zip(outputs, differentiability, strict=True) if carries]
    if written is not None and written.forward is not None and not list_output and len(carrying) != 1:
        raise fail(
            f"result: forward mode gives the tangent of the one output that carries a gradient, and "
            f"this op has {len(carrying)} ({', '.join(carrying) or 'none'})",
            "mark the others false in output_differentiability (torch gives them no tangent), or remove "
            "'result' (forward AD then raises NotImplementedError, as for an op without one)",
            written.forward[2],
        )
    want = "tensors" if list_output else "tensor"
    forward, tangents = _forward(written, pointwise, scope, differentiable_inputs, gradients, fail, want)
    return Autograd(tuple(gradients), outputs, tuple(differentiability), line, list_output, forward, tangents)


def _backward_scope(
    functional: FunctionSchema, outputs: tuple[str, ...], list_output: bool
) -> tuple[dict[str, Ref], _Checker]:
    """What a backward formula may read (the arguments, grad(s), result(s)), and its checker,
    which names the tangents and the mask as another scope's."""
    scope = {a.name: Ref(a.name, arg_kind(a.type), "arg") for a in functional.arguments.all}
    many = len(outputs) > 1
    if list_output:
        scope["grads"] = Ref("grads", "tensors", "grad")
    for name in outputs:
        grad, result = ("grad_" + name, "result_" + name) if many else ("grad", "result")
        scope[grad] = Ref(grad, "tensor", "grad")
        scope[result] = Ref(result, "tensor", "result")
    tangents = [f"{a.name}_t" for a in functional.arguments.all if arg_kind(a.type) in ("tensor", "tensor?")]
    checker = _Checker(
        scope,
        "an argument, grad nor result",
        dict.fromkeys(tangents, "a tangent, which only the forward formula (result:) reads")
        | {_MASK: "for a formula of several inputs ('input, weight: ...'): which of their gradients to give"},
    )
    return scope, checker


def _written_gradients(
    written: WrittenDerivatives, scope: dict[str, Ref], checker: _Checker, silent: dict[str, str], fail
) -> list[Gradient]:
    """The written formulas, checked: tensor inputs only, the kind each must give, and no read
    of an output's gradient that is never defined."""
    gradients = []
    for inputs, node, text, at in written.formulas:
        for name in inputs:
            kind = scope[name].kind
            if kind not in ("tensor", "tensor?", "tensors"):
                raise fail(
                    f"'{name}' is a {kind} argument: only tensors have gradients", f"remove '{name}'", at
                )
        label = ", ".join(inputs)
        checker.mask = len(inputs)
        try:
            expr = checker.expr(node)
        except FormulaError as e:
            raise fail(f"{label}: {e.problem}", e.fix, at) from None
        want = "tensors" if len(inputs) > 1 or scope[inputs[0]].kind == "tensors" else "tensor"
        if expr.kind != want:
            raise fail(f"{label}: '{text}' gives a {expr.kind}, not a {want}", "multiply by grad", at)
        if len(inputs) > 1 and not (isinstance(expr, Apply) and expr.fn.gradients):
            raise fail(
                f"{label}: '{text}' does not give one gradient per input: a formula of several inputs "
                f"calls a function that takes {_MASK}",
                "call one of those (docs/autograd.md), or give each input its own formula",
                at,
            )
        read = sorted(_uses(expr) & silent.keys())
        if read:
            raise fail(
                f"{label}: '{text}' reads {read[0]}, but output '{silent[read[0]]}' carries no gradient "
                "(output_differentiability), so it is never defined",
                f"mark '{silent[read[0]]}' true in output_differentiability, or do not read {read[0]}",
                at,
            )
        gradients.append(Gradient(inputs, expr, text, False))
    return gradients


def _derived_gradients(
    pointwise: Node, inputs: tuple[str, ...], skipped: set[str], checker: _Checker, fail, line: int
) -> list[Gradient]:
    """A pointwise op's gradients from its formula's symbolic derivative, for the inputs the
    key does not name: sum_to(grad * conj(d), input)."""
    gradients = []
    for name in inputs:
        if name in skipped:
            continue
        try:
            d = derive.derivative(pointwise, name)
        except derive.NotDifferentiable as e:
            raise fail(f"{name}: {e}", f'write its formula: derivatives: {{{name}: "..."}}', line) from None
        if d == derive.ZERO:  # piecewise constant (floor, a rounded division): zeros
            formula = Call("sum_to", (Call("zeros_like", (Var("grad"),)), Var(name)))
        else:
            conj = d if derive.is_real_constant(d) else Call("conj", (d,))
            formula = Call("sum_to", (derive.mul(Var("grad"), conj), Var(name)))
        try:
            gradients.append(Gradient((name,), checker.expr(formula), str(formula), True))
        except FormulaError as e:
            raise fail(f"{name}: the derived '{formula}': {e.problem}", e.fix, line) from None
    return gradients


def _check_covered(gradients, written, differentiable_inputs, outputs, differentiability, fail) -> None:
    """Every differentiable input has a gradient (or is said to have none), and every output
    that carries a gradient is read by some formula."""
    covered = {n for g in gradients for n in g.inputs} | set(written.non_differentiable if written else ())
    missing = [n for n in differentiable_inputs if n not in covered]
    if missing:
        raise fail(
            f"no formula for the tensor input(s) {', '.join(missing)}",
            f"give each a formula, or write '{missing[0]}: {NON_DIFFERENTIABLE_INPUT}'",
        )
    used = set().union(*(_uses(g.expr) for g in gradients)) if gradients else set()
    many = len(outputs) > 1
    for name, carries in zip(outputs, differentiability, strict=True):
        grad = "grad_" + name if many else "grad"
        if carries and many and grad not in used:
            raise fail(
                f"output '{name}' carries a gradient, but no formula reads {grad}",
                f"read {grad} in a formula, or mark it false in output_differentiability",
            )


def _with_kernel(g: Gradient, scope: dict[str, Ref], pointwise: Node, checker: _Checker) -> Gradient:
    """The gradient with its kernel formula, where it has one: its tensor part, the factors that
    are numbers only (alpha) kept apart as ``kernel_scale``, so inputs whose gradients differ by
    a number share one kernel (add_relu's self and other). The kernel reads the saved output
    where the formula does; where that is one tensor more than a kernel takes, it computes the
    output again (pow's exponent); a formula of still more tensors stays unfused."""
    found = _kernel(g, scope)
    if found is None:
        return g
    node, scale = _split_scale(found[0], scope)

    def tensors(n: Node) -> set[str]:
        return {
            x
            for x in free_names(n)
            if x in ("grad", "result") or scope.get(x, Ref(x, "", "")).kind == "tensor"
        }

    if len(tensors(node)) > limits.MAX_POINTWISE_TENSORS:
        node = substitute(node, "result", pointwise)
    if len(tensors(node)) > limits.MAX_POINTWISE_TENSORS or operation_count(node) < 2:
        return g
    scale_expr = None if scale is None else checker.expr(scale)
    return dataclasses.replace(g, kernel=node, kernel_sum_to=found[1], kernel_scale=scale_expr)


def _split_scale(n: Node, scope: dict[str, Ref]) -> tuple[Node, Node | None]:
    """A product's factors of numbers only (no tensor) apart from the rest."""
    factors: list[Node] = []

    def flatten(x: Node) -> None:
        if isinstance(x, Bin) and x.op == "*":
            flatten(x.lhs)
            flatten(x.rhs)
        else:
            factors.append(x)

    flatten(n)

    def numeric(x: Node) -> bool:
        return all(scope[v].kind in ("scalar", "scalar?") for v in free_names(x) if v in scope)

    scalars = [f for f in factors if numeric(f) and free_names(f)]
    rest = [f for f in factors if f not in scalars]
    if not scalars or not rest:
        return n, None

    def product(xs: list[Node]) -> Node:
        out = xs[0]
        for x in xs[1:]:
            out = Bin("*", out, x)
        return out

    return product(rest), product(scalars)


def _kernel(g: Gradient, scope: dict[str, Ref]) -> tuple[Node, bool] | None:
    """The pointwise formula of a gradient `sum_to(<formula>, x)` (or `<formula>` alone): one
    of a single input, over the op's arguments, grad and result, made of what generated kernels
    compute (codegen/pointwise/lower.py)."""
    if len(g.inputs) != 1 or g.text == NOT_IMPLEMENTED:
        return None
    node = parse_formula(g.text)
    summed = (
        isinstance(node, Call)
        and node.fn == "sum_to"
        and len(node.args) == 2
        and node.args[1] == Var(g.inputs[0])
    )
    if summed:
        node = node.args[0]
    names = {
        n
        for n, r in scope.items()
        if r.kind in ("tensor", "scalar", "scalar?", "str", "bool") or n == "result"
    }
    # One ATen op or none (grad, grad * other) is as fast unfused: only longer chains get kernels.
    return (node, summed) if _kernel_node(node, names) else None


def _kernel_node(n: Node, names: set[str]) -> bool:
    if isinstance(n, Lit):
        return True
    if isinstance(n, Var):
        return n.name in names
    if isinstance(n, Un):
        return _kernel_node(n.operand, names)
    if isinstance(n, Bin):
        return _kernel_node(n.lhs, names) and _kernel_node(n.rhs, names)
    known = n.fn in KERNEL_FUNCTIONS or n.fn in KERNEL_SPECIAL
    return known and all(_kernel_node(a, names) for a in n.args)


def _forward(written, pointwise, scope, differentiable_inputs, gradients, fail, want):
    """Forward mode: the written `result:` formula, auto_linear, or for a pointwise op the sum of
    each input's derivative times its tangent (f'(z) t: no conjugate in forward mode). The formula
    gives the tangent of the output that carries a gradient (statistics beside it get none, as
    torch's), or of each element of a Tensor[] output (``want``: tensors)."""
    inputs = tuple(n for n in differentiable_inputs if scope[n].kind in ("tensor", "tensor?"))
    tangent_scope = {n: r for n, r in scope.items() if r.role != "grad"}
    tangent_scope |= {f"{n}_t": Ref(f"{n}_t", "tensor", "tangent") for n in inputs}
    backward = [n for n, r in scope.items() if r.role == "grad"] + [_MASK]
    checker = _Checker(
        tangent_scope,
        "an argument, result nor a tangent (<input>_t)",
        dict.fromkeys(
            backward, "backward's: forward mode has none (a forward formula gives the output's tangent)"
        ),
    )
    if written is not None and written.forward is not None:
        node, text, at = written.forward
        if node == AUTO_LINEAR:  # every input with a gradient takes its tangent
            with_gradient = {n for g in gradients if g.text != NOT_IMPLEMENTED for n in g.inputs}
            return AUTO_LINEAR, tuple(n for n in differentiable_inputs if n in with_gradient)
        try:
            expr = checker.expr(node)
        except FormulaError as e:
            raise fail(f"result: {e.problem}", e.fix, at) from None
        if expr.kind != want:
            fix = "give one tangent per element" if want == "tensors" else "multiply by a tangent"
            raise fail(f"result: '{text}' gives a {expr.kind}, not a {want}", fix, at)
        return expr, tuple(n for n in inputs if f"{n}_t" in _uses(expr))
    if pointwise is None:
        return None, ()
    derived = {n for g in gradients if g.derived for n in g.inputs}
    total = derive.ZERO
    for name in inputs:
        if name not in derived and not any(name in g.inputs for g in gradients):
            continue
        total = derive.add(total, derive.mul(derive.derivative(pointwise, name), Var(f"{name}_t")))
    if total == derive.ZERO:
        return None, ()
    expr = checker.expr(total)
    return expr, tuple(n for n in inputs if f"{n}_t" in _uses(expr))


def uses(autograd: Autograd) -> set[str]:
    """The names the formulas read (arguments, grads, results): what backward must keep."""
    return set().union(*(_uses(g.expr) for g in autograd.gradients))
