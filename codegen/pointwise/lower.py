"""Type-check a pointwise formula and lower it to one C++ expression for CPU and CUDA kernels.

The formula computes in the op's compute type ``T`` (PyTorch's opmath: float for half and
bfloat16 inputs, the common dtype otherwise). Values are numbers of type T or booleans
(comparisons, ``and``/``or``/``not``, isnan, a bool tensor such as where's condition). Because a
kernel is instantiated for every dtype the op allows, the formula is checked once per dtype
category the op can compute in (bool, integral, floating, complex): ``exp`` on an op that
computes in int64 is an error at codegen time, not a compile error or a silent truncation.

Complex values are ordered only by their real parts: ``real(x)``, ``imag(x)`` and ``abs(x)`` are
numbers of T whose imaginary part is 0 (kind ``real``, as literals are), and ``<``/``<=``/``>``/``>=``
take only such values where the op computes in a complex type (logaddexp's larger real part).

Scalar arguments become fields of type T; ``Scalar?`` arguments may only bound a ``clamp``;
comparing a ``str`` argument with a literal is decided once per call on the host, and the
values compared against (plus the argument's default) are the ones the op accepts.
"""

from __future__ import annotations

from dataclasses import dataclass

from structgen.codegen.errors import Problem
from structgen.codegen.model.formula import COMPARISONS, Bin, Call, Lit, Node, Un, Var
from structgen.codegen.model.pointwise import HostCondition, Lowered, Operand

CATEGORIES = ("bool", "integral", "floating", "complex")
NUMERIC = ("integral", "floating", "complex")

# name -> (arity, categories it accepts, result kind: "num", "real" (T, imaginary part 0) or
# "bool", C++ function)
_F = ("floating",)
_FC = ("floating", "complex")
_IF = ("integral", "floating")
FUNCTIONS: dict[str, tuple[int, tuple[str, ...], str, str]] = {
    **{
        f: (1, _FC, "num", f"pw::{f}")
        for f in ("exp", "log", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh", "sigmoid")
    },
    **{f: (1, _F, "num", f"pw::{f}") for f in ("exp2", "expm1", "log2", "erf", "erfc", "normcdf")},
    "abs": (1, ("bool",) + NUMERIC, "real", "pw::abs"),
    "real": (1, NUMERIC, "real", "pw::real"),
    "imag": (1, NUMERIC, "real", "pw::imag"),
    "nan_of": (1, _FC, "num", "pw::nan_of"),
    "sign": (1, ("bool",) + _IF, "num", "pw::sign"),
    **{f: (1, _IF, "num", f"pw::{f}") for f in ("floor", "ceil", "round", "trunc")},
    "pow": (2, NUMERIC + ("bool",), "num", "pw::pow"),
    "pow_scalar": (2, NUMERIC + ("bool",), "num", "pw::pow_scalar"),
    "max": (2, ("bool",) + _IF, "num", "pw::maximum"),
    "min": (2, ("bool",) + _IF, "num", "pw::minimum"),
    "fma": (3, ("bool",) + NUMERIC, "num", "pw::fma"),
    "trunc_div": (2, _IF, "num", "pw::trunc_div"),
    "conj": (1, NUMERIC + ("bool",), "num", "pw::conj"),
    "nonneg_real": (1, NUMERIC + ("bool",), "bool", "pw::nonneg_real"),
    "isnan": (1, CATEGORIES, "bool", "pw::isnan_"),
    "isinf": (1, CATEGORIES, "bool", "pw::isinf_"),
}
SPECIAL = ("where", "clamp", "bool", "select")
_BINARY_OK = {
    "+": ("bool",) + NUMERIC,
    "*": ("bool",) + NUMERIC,
    "-": NUMERIC,
    "/": _FC,
    "//": _IF,
    "%": _IF,
    "&": ("bool", "integral"),
    "|": ("bool", "integral"),
    "^": ("bool", "integral"),
}
_BINARY_CPP = {"//": "pw::floor_div", "%": "pw::remainder"}
_ORDERED = ("<", "<=", ">", ">=")
_WHAT = {"bool": "bool", "integral": "integral", "floating": "floating-point", "complex": "complex"}
_A_TYPE = {
    "bool": "a bool",
    "integral": "an integral",
    "floating": "a floating-point",
    "complex": "a complex",
}


class FormulaError(Problem):
    """A pointwise formula that does not check."""


@dataclass(frozen=True)
class _Val:
    code: str
    kind: str  # num | real (a num whose imaginary part is 0) | bool | str | none


def _cast(v: _Val) -> str:
    """A value as the compute type T."""
    return v.code if v.kind in ("num", "real") else f"T({v.code})"


def _number(*values: _Val) -> str:
    """The kind of arithmetic on ``values``: real where all are."""
    return "real" if all(v.kind == "real" for v in values) else "num"


class _Lowering:
    def __init__(
        self, operands: dict[str, Operand], category: str, never_none: frozenset[str], complex_op: bool
    ):
        self.operands = operands
        self.category = category
        self.complex_op = complex_op  # some dtype computes in a complex type: order by real parts
        self.never_none = never_none  # str? arguments the dtype rule rules out being None here
        self.dead = False  # lowering a select() branch this category never takes: no type checks
        self.used: dict[str, Operand] = {}
        self.conditions: dict[str, HostCondition] = {}
        self.requires: dict[str, str] = {}
        self.selected: set[str] = set()  # str arguments whose values a select() lists

    def need(self, what: str, allowed: tuple[str, ...], fix: str) -> None:
        if self.category not in allowed and not self.dead:
            raise FormulaError(
                f"{what} is not defined on {_WHAT[self.category]} values, and this op computes in "
                f"{_A_TYPE[self.category]} type for {_WHAT[self.category]} inputs",
                fix,
            )

    def node(self, n: Node) -> _Val:
        if isinstance(n, Lit):
            return self.literal(n)
        if isinstance(n, Var):
            return self.var(n)
        if isinstance(n, Un):
            return self.unary(n)
        if isinstance(n, Bin):
            return self.binary(n)
        return self.call(n)

    def literal(self, n: Lit) -> _Val:
        if isinstance(n.value, bool):
            return _Val("true" if n.value else "false", "bool")
        if n.value is None:
            return _Val("", "none")
        if isinstance(n.value, str):
            return _Val(n.value, "str")
        if isinstance(n.value, float) and not n.value.is_integer() and self.category in ("bool", "integral"):
            self.need(
                f"the literal {n.text}",
                _FC,
                "compute in floating point (kind=INT_TO_FLOAT in meta.dtype) or restrict meta.allowed",
            )
        return _Val(f"T({n.text})", "real")

    def var(self, n: Var) -> _Val:
        op = self.operands.get(n.name)
        if op is None:
            raise FormulaError(
                f"unknown name '{n.name}'",
                f"use an argument of the op ({', '.join(self.operands) or 'none'}) or a literal",
            )
        if op.kind in ("scalar?", "str", "str?"):
            what = {"scalar?": "an optional Scalar", "str": "a string", "str?": "an optional string"}[op.kind]
            fix = (
                "use it as a bound of clamp(x, lo, hi)"
                if op.kind == "scalar?"
                else f'compare it with a literal, e.g. {n.name} == "value"'
            )
            raise FormulaError(f"'{n.name}' is {what} and cannot be used as a value", fix)
        self.used[n.name] = op
        return _Val(op.cpp, "bool" if op.kind == "bool_tensor" else "num")

    def unary(self, n: Un) -> _Val:
        v = self.node(n.operand)
        if n.op == "not":
            return _Val(f"!{self.truth(v)}", "bool")
        if n.op == "-":
            if v.kind == "bool" or self.category == "bool":
                raise FormulaError(
                    f"'-{n.operand}' negates a bool value",
                    "use 'not' for logical negation, or exclude bool from meta.allowed",
                )
            return _Val(f"pw::neg({_cast(v)})", _number(v))
        if v.kind == "bool":
            return _Val(f"!{v.code}", "bool")
        self.need(f"'~{n.operand}'", ("bool", "integral"), "use ~ on integral or bool ops only")
        return _Val(f"T(~{v.code})", "num")

    def truth(self, v: _Val) -> str:
        return v.code if v.kind == "bool" else f"pw::truth({v.code})"

    def binary(self, n: Bin) -> _Val:
        if n.op in ("and", "or"):
            # & and | evaluate both sides, which gcc vectorises (the branches of && and || it does
            # not: logical_and ran at 0.02x torch); && and || where the right side divides, whose
            # division by zero raises on the CPU and must not where the left side decides.
            a, b = self.node(n.lhs), self.node(n.rhs)
            op = {"and": "&&", "or": "||"}[n.op] if divides(n.rhs) else {"and": "&", "or": "|"}[n.op]
            return _Val(f"bool({self.truth(a)} {op} {self.truth(b)})", "bool")
        if n.op in COMPARISONS and self.is_mode(n.lhs):
            return self.condition(n)
        a, b = self.node(n.lhs), self.node(n.rhs)
        for side, v in ((n.lhs, a), (n.rhs, b)):
            if v.kind in ("str", "none"):
                raise FormulaError(
                    f"'{side}' can only be compared with a string argument",
                    'write e.g. approximate == "tanh"',
                )
        if n.op in COMPARISONS:
            if n.op in _ORDERED and self.category == "complex" and _number(a, b) != "real" and not self.dead:
                raise FormulaError(
                    f"'{n}' orders complex values",
                    "order their real parts (real(x) < real(y), abs(x) < 1), or compare with == or !=",
                )
            if n.op in _ORDERED and self.complex_op:
                return _Val(f"(pw::real_of({_cast(a)}) {n.op} pw::real_of({_cast(b)}))", "bool")
            return _Val(f"({_cast(a)} {n.op} {_cast(b)})", "bool")
        if n.op in ("&", "|", "^") and a.kind == b.kind == "bool":
            return _Val(f"bool({a.code} {n.op} {b.code})", "bool")
        self.need(f"'{n.op}'", _BINARY_OK[n.op], _binary_fix(n.op))
        if n.op in _BINARY_CPP:
            return _Val(f"{_BINARY_CPP[n.op]}({_cast(a)}, {_cast(b)})", "num")
        kind = _number(a, b) if n.op in ("+", "-", "*", "/") else "num"
        return _Val(f"T({_cast(a)} {n.op} {_cast(b)})", kind)

    def is_mode(self, n: Node) -> bool:
        return (
            isinstance(n, Var) and n.name in self.operands and self.operands[n.name].kind in ("str", "str?")
        )

    def condition(self, n: Bin) -> _Val:
        op = self.operands[n.lhs.name]  # type: ignore[union-attr]
        rhs = n.rhs
        if (
            n.op not in ("==", "!=")
            or not isinstance(rhs, Lit)
            or not (isinstance(rhs.value, str) or (rhs.value is None and op.kind == "str?"))
        ):
            raise FormulaError(
                f"'{n}': a string argument can only be compared (== or !=) with a string literal"
                + (" or None" if op.kind == "str?" else ""),
                f'write e.g. {op.name} == "value"',
            )
        value = rhs.value
        field = f"{op.cpp}_is_{'none' if value is None else _ident(value)}"
        self.conditions[field] = HostCondition(field, op.name, value, op.kind == "str?")
        self.used[op.name] = op
        return _Val(field if n.op == "==" else f"!{field}", "bool")

    def call(self, n: Call) -> _Val:
        if n.fn == "where":
            if len(n.args) != 3:
                raise FormulaError(
                    f"where() takes 3 arguments, got {len(n.args)}", "write where(condition, a, b)"
                )
            c, a, b = (self.node(x) for x in n.args)
            if a.kind == b.kind == "bool":
                return _Val(f"({self.truth(c)} ? {a.code} : {b.code})", "bool")
            return _Val(f"({self.truth(c)} ? {_cast(a)} : {_cast(b)})", _number(a, b))
        if n.fn == "bool":
            if len(n.args) != 1:
                raise FormulaError(f"bool() takes 1 argument, got {len(n.args)}", "write bool(x)")
            return _Val(self.truth(self.node(n.args[0])), "bool")
        if n.fn == "clamp":
            return self.clamp(n)
        if n.fn == "select":
            return self.select(n)
        spec = FUNCTIONS.get(n.fn)
        if spec is None:
            known = sorted(list(FUNCTIONS) + list(SPECIAL))
            raise FormulaError(f"unknown function '{n.fn}'", f"use one of: {', '.join(known)}")
        arity, categories, result, cpp = spec
        if len(n.args) != arity:
            raise FormulaError(
                f"{n.fn}() takes {arity} argument{'s' if arity != 1 else ''}, got {len(n.args)}",
                f"write {n.fn}({', '.join('x' + str(i) for i in range(arity))})",
            )
        self.need(f"{n.fn}()", categories, _function_fix(categories))
        args = ", ".join(_cast(self.node(a)) for a in n.args)
        return _Val(f"{cpp}({args})", result)

    def select(self, n: Call) -> _Val:
        """``select(mode, "a", x, "b", y)``: the branch of the str argument's value; the listed
        values are exactly the ones the op accepts (any other raises before the kernel runs)."""
        usage = 'write select(mode, "value1", expr1, "value2", expr2, ...)'
        if len(n.args) < 3 or len(n.args) % 2 == 0 or not self.is_mode(n.args[0]):
            raise FormulaError(f"'{n}' is not a select over a string argument", usage)
        arg = n.args[0]
        op = self.operands[arg.name]  # type: ignore[union-attr]
        branches = []
        for lit, expr in zip(n.args[1::2], n.args[2::2]):
            if not isinstance(lit, Lit) or not (
                isinstance(lit.value, str) or (lit.value is None and op.kind == "str?")
            ):
                raise FormulaError(f"select(): '{lit}' is not a string literal", usage)
            cond = self.condition(Bin("==", arg, lit))
            # e.g. div's None branch (true division) on integers: the dtype rule makes the result
            # float whenever rounding_mode is None, so the integer kernel never takes it.
            dead, self.dead = self.dead, self.dead or (lit.value is None and op.name in self.never_none)
            branches.append((cond.code, self.node(expr)))
            self.dead = dead
        self.selected.add(op.name)
        kinds = {v.kind for _, v in branches}
        if kinds == {"bool"}:
            code = branches[-1][1].code
            for cond, v in reversed(branches[:-1]):
                code = f"({cond} ? {v.code} : {code})"
            return _Val(code, "bool")
        code = _cast(branches[-1][1])
        for cond, v in reversed(branches[:-1]):
            code = f"({cond} ? {_cast(v)} : {code})"
        return _Val(code, "num")

    def clamp(self, n: Call) -> _Val:
        if len(n.args) != 3:
            raise FormulaError(f"clamp() takes 3 arguments, got {len(n.args)}", "write clamp(x, lo, hi)")
        self.need("clamp()", ("bool",) + _IF, "clamp is for real values")
        x = _cast(self.node(n.args[0]))
        bounds = []
        optional = []
        for b in n.args[1:]:
            op = self.operands.get(b.name) if isinstance(b, Var) else None
            if op is not None and op.kind == "scalar?":
                self.used[op.name] = op
                optional.append(op)
                bounds.append(f"has_{op.cpp}, {op.cpp}")
            else:
                bounds.append(f"true, {_cast(self.node(b))}")
        if len(optional) == 2:  # as torch.clamp: a clamp with no bound is a mistake
            lo, hi = optional
            self.requires[f"{lo.cpp}.has_value() || {hi.cpp}.has_value()"] = (
                f"at least one of '{lo.name}' or '{hi.name}' must not be None"
            )
        return _Val(f"pw::clamp({x}, {bounds[0]}, {bounds[1]})", "num")


def _binary_fix(op: str) -> str:
    if op == "/":
        return (
            "'/' is true division: compute in floating point (kind=INT_TO_FLOAT in meta.dtype), or use // or"
            " trunc_div()"
        )
    if op in ("&", "|", "^"):
        return "bitwise operators take integral or bool values; use and/or for logic"
    if op == "-":
        return "exclude bool from meta.allowed (torch rejects bool subtraction too)"
    return "restrict meta.allowed to the dtypes the operator is defined for"


def _function_fix(categories: tuple[str, ...]) -> str:
    if "integral" not in categories:
        return (
            "compute in floating point: add kind=INT_TO_FLOAT to the promote() in meta.dtype, or restrict"
            " meta.allowed"
        )
    return f"restrict meta.allowed to {', '.join(_WHAT[c] for c in categories)} dtypes"


def _ident(text: str) -> str:
    return "".join(ch if ch.isalnum() else "_" for ch in text)


def lower_formula(
    formula: Node,
    operands: tuple[Operand, ...],
    categories: tuple[str, ...],
    never_none: dict[str, frozenset[str]] | None = None,
) -> Lowered:
    """Check ``formula`` for every compute category and lower it (the C++ text is the same for all).
    ``never_none[category]``: str? arguments that cannot be None when the op computes in that
    category (the dtype rule says so), so select() branches for None are not checked there."""
    by_name = {o.name: o for o in operands}
    code = None
    lowering = None
    complex_op = "complex" in categories
    for category in categories:
        lowering = _Lowering(by_name, category, (never_none or {}).get(category, frozenset()), complex_op)
        v = lowering.node(formula)
        if v.kind in ("str", "none"):
            raise FormulaError("the formula's value is a string", "compute a number or a condition")
        code = v.code
    assert lowering is not None and code is not None
    used = lowering.used
    unused = [o.name for o in operands if o.kind in ("tensor", "bool_tensor") and o.name not in used]
    if unused:
        raise FormulaError(
            f"tensor argument '{unused[0]}' is not used by the formula",
            "use it in the formula or remove it from the schema",
        )
    checks = []
    for o in operands:
        if o.kind in ("str", "str?") and o.name in used:
            values = [c.value for c in lowering.conditions.values() if c.arg == o.name]
            if o.default is not None and o.name not in lowering.selected:
                default = None if o.default == "None" else o.default.strip("\"'")
                if default not in values:
                    values.insert(0, default)
            checks.append(_mode_check(o, tuple(dict.fromkeys(values))))
    checks += [f'TORCH_CHECK({cond}, op, ": {message}");' for cond, message in lowering.requires.items()]
    return Lowered(
        expr=code,
        tensors=tuple(
            (o.name, "bool" if o.kind == "bool_tensor" else "T")
            for o in operands
            if o.kind in ("tensor", "bool_tensor")
        ),
        scalars=tuple(o.name for o in operands if o.kind == "scalar" and o.name in used),
        optional_scalars=tuple(o.name for o in operands if o.kind == "scalar?" and o.name in used),
        conditions=tuple(lowering.conditions.values()),
        in_storage=_in_storage(formula, by_name),
        checks=tuple(checks),
    )


def divides(n: Node) -> bool:
    """Whether evaluating n may divide integers (and so raise ZeroDivisionError on the CPU)."""
    if isinstance(n, Bin):
        return n.op in _BINARY_CPP or divides(n.lhs) or divides(n.rhs)
    if isinstance(n, Un):
        return divides(n.operand)
    if isinstance(n, Call):
        return n.fn == "trunc_div" or any(divides(a) for a in n.args)
    return False


def _in_storage(n: Node, operands: dict[str, Operand]) -> bool:
    """Whether the formula's value is a promoted tensor input with its sign kept, flipped or
    cleared, picked by bool tensor inputs: exact in the storage dtype (Lowered.in_storage)."""
    if isinstance(n, Var):
        return operands[n.name].kind == "tensor"
    if isinstance(n, Un) and n.op == "-":
        return _in_storage(n.operand, operands)
    if isinstance(n, Call) and n.fn == "abs" and len(n.args) == 1:
        return _in_storage(n.args[0], operands)
    if isinstance(n, Call) and n.fn == "where" and len(n.args) == 3:
        c, a, b = n.args
        picks = isinstance(c, Var) and operands[c.name].kind == "bool_tensor"
        return picks and _in_storage(a, operands) and _in_storage(b, operands)
    return False


def _mode_check(o: Operand, values: tuple[str | None, ...]) -> str:
    """TORCH_CHECK that a str argument has one of ``values`` (None: a None str?)."""
    optional = o.kind == "str?"
    tests = []
    for v in values:
        if v is None:
            tests.append(f"!{o.cpp}.has_value()")
        elif optional:
            tests.append(f'({o.cpp}.has_value() && *{o.cpp} == "{v}")')
        else:
            tests.append(f'{o.cpp} == "{v}"')
    expected = ", ".join("None" if v is None else f"'{v}'" for v in values)
    actual = f'({o.cpp}.has_value() ? std::string(*{o.cpp}) : std::string("None"))' if optional else o.cpp
    return (
        f'TORCH_CHECK({" || ".join(tests)}, op, ": {o.name} must be one of {expected}, got \'", '
        f'{actual}, "\'");'
    )
