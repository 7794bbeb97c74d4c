"""Symbolic derivatives of pointwise formulas (the manifest's ``pointwise:``).

``derivative(formula, x)`` is the formula's partial derivative with respect to the tensor
argument ``x``, as another formula of the same language, simplified; the gradient the op hands
``x`` in backward is ``grad * conj(derivative)`` (codegen/autograd/formulas.py). Where the
function is not differentiable, torch's conventions hold (docs/autograd.md):

- abs, sign, relu-like max with a constant: abs'(0) = sign(0) = 0;
- max/min of two values that tie: each gets half (torch.maximum's rule);
- clamp: the gradient passes at the bounds (x == lo or x == hi), as torch.clamp's: it passes
  where ``clamp(x, lo, hi) == x`` (a NaN x gets none);
- floor, ceil, round, trunc, sign, comparisons, //, trunc_div, isnan: zero (piecewise constant);
- where(c, a, b): c is not differentiated.

A subexpression equal to the whole formula is written ``result`` (exp' = result), so backward
reads the saved output instead of computing it again.
"""

from __future__ import annotations

import math

from structgen.codegen.model.formula import COMPARISONS, Bin, Call, Lit, Node, Un, Var

ZERO = Lit(0, "0")
ONE = Lit(1, "1")
RESULT = Var("result")
# Functions whose value is piecewise constant: derivative zero wherever it exists.
_FLAT = {"floor", "ceil", "round", "trunc", "sign", "isnan", "isinf", "trunc_div", "bool", "nan_of"}
_LOGICAL = {"and", "or", "&", "|", "^", "//", *COMPARISONS}


class NotDifferentiable(ValueError):
    """A formula construct with no derivative rule (the fix names the manifest override)."""


def _num(value: float) -> Lit:
    if float(value).is_integer() and abs(value) < 2**53:
        return Lit(int(value), str(int(value)))
    return Lit(value, repr(value))


def _is(n: Node, value: float) -> bool:
    return (
        isinstance(n, Lit)
        and isinstance(n.value, int | float)
        and not isinstance(n.value, bool)
        and n.value == value
    )


def _const(n: Node) -> bool:
    return isinstance(n, Lit) and isinstance(n.value, int | float) and not isinstance(n.value, bool)


def is_real_constant(n: Node) -> bool:
    """A number literal (its conjugate is itself)."""
    return _const(n)


def add(a: Node, b: Node) -> Node:
    if _is(a, 0):
        return b
    if _is(b, 0):
        return a
    if _const(a) and _const(b):
        return _num(a.value + b.value)
    if isinstance(b, Un) and b.op == "-":
        return sub(a, b.operand)
    return Bin("+", a, b)


def sub(a: Node, b: Node) -> Node:
    if _is(b, 0):
        return a
    if _is(a, 0):
        return neg(b)
    if _const(a) and _const(b):
        return _num(a.value - b.value)
    if a == b:
        return ZERO
    return Bin("-", a, b)


def mul(a: Node, b: Node) -> Node:
    if _is(a, 0) or _is(b, 0):
        return ZERO
    if _is(a, 1):
        return b
    if _is(b, 1):
        return a
    if _is(a, -1):
        return neg(b)
    if _is(b, -1):
        return neg(a)
    if _const(a) and _const(b):
        return _num(a.value * b.value)
    if _const(b):  # constants first: 2 * x
        a, b = b, a
    if isinstance(a, Un) and a.op == "-":
        return neg(mul(a.operand, b))
    if isinstance(b, Un) and b.op == "-":
        return neg(mul(a, b.operand))
    return Bin("*", a, b)


def div(a: Node, b: Node) -> Node:
    if _is(a, 0):
        return ZERO
    if _is(b, 1):
        return a
    if _const(a) and _const(b) and b.value != 0:
        return _num(a.value / b.value)
    return Bin("/", a, b)


def neg(a: Node) -> Node:
    if _const(a):
        return _num(-a.value)
    if isinstance(a, Un) and a.op == "-":
        return a.operand
    return Un("-", a)


def where(c: Node, a: Node, b: Node) -> Node:
    if a == b:
        return a
    return Call("where", (c, a, b))


def depends(n: Node, x: str) -> bool:
    if isinstance(n, Var):
        return n.name == x
    if isinstance(n, Lit):
        return False
    if isinstance(n, Un):
        return depends(n.operand, x)
    if isinstance(n, Bin):
        return depends(n.lhs, x) or depends(n.rhs, x)
    return any(depends(a, x) for a in n.args)


def derivative(formula: Node, x: str) -> Node:
    """d formula / d x, simplified, with ``result`` for the formula itself."""
    return _Derive(x, formula).d(formula)


class _Derive:
    def __init__(self, x: str, root: Node):
        self.x = x
        self.root = root

    def v(self, n: Node) -> Node:
        """A value inside a derivative: the saved output where it is the whole formula."""
        return RESULT if n == self.root else n

    def d(self, n: Node) -> Node:
        if not depends(n, self.x):
            return ZERO
        if isinstance(n, Var):
            return ONE
        if isinstance(n, Un):
            if n.op == "-":
                return neg(self.d(n.operand))
            return ZERO  # ~, not: logical
        if isinstance(n, Bin):
            return self.binary(n)
        assert isinstance(n, Call)
        return self.call(n)

    def binary(self, n: Bin) -> Node:
        a, b = n.lhs, n.rhs
        if n.op in _LOGICAL:
            return ZERO
        da, db = self.d(a), self.d(b)
        if n.op == "+":
            return add(da, db)
        if n.op == "-":
            return sub(da, db)
        if n.op == "*":
            return add(mul(da, b), mul(a, db))
        if n.op == "/":
            # (a/b)' = a'/b - (a/b) b'/b
            return sub(div(da, b), div(mul(self.v(n), db), b))
        if n.op == "%":  # a - floor(a/b) * b, as torch.remainder's backward
            return sub(da, mul(Bin("//", a, b), db))
        raise NotDifferentiable(f"no derivative rule for '{n.op}'")

    def call(self, n: Call) -> Node:
        f, args = n.fn, n.args
        if f in _FLAT:
            return ZERO
        if f == "where":
            c, a, b = args
            return where(c, self.d(a), self.d(b))
        if f == "select":  # select(mode, v1, e1, v2, e2, ...): differentiate each branch
            return Call("select", (args[0], *(self.d(a) if i % 2 else a for i, a in enumerate(args[1:]))))
        if f == "clamp":  # within the bounds, both inclusive (clamp leaves x as it is there)
            x, lo, hi = args
            return where(Bin("==", Call("clamp", (x, lo, hi)), x), self.d(x), ZERO)
        if f in ("max", "min"):
            return self.extremum(n)
        if f == "pow" or f == "pow_scalar":
            return self.power(n)
        if f == "fma":
            a, b, c = args
            return add(add(mul(self.d(a), b), mul(a, self.d(b))), self.d(c))
        (u,) = args
        du = self.d(u)
        value = self.v(n)
        rule = {
            "exp": lambda: value,
            "exp2": lambda: mul(_num(math.log(2)), value),
            "expm1": lambda: add(value, ONE),
            "log": lambda: div(ONE, u),
            "log2": lambda: div(ONE, mul(_num(math.log(2)), u)),
            "log1p": lambda: div(ONE, add(u, ONE)),
            "sqrt": lambda: div(_num(0.5), value),
            "rsqrt": lambda: mul(_num(-0.5), mul(value, mul(value, value))),
            "sin": lambda: Call("cos", (u,)),
            "cos": lambda: neg(Call("sin", (u,))),
            "tan": lambda: add(ONE, mul(value, value)),
            "tanh": lambda: sub(ONE, mul(value, value)),
            "sigmoid": lambda: mul(value, sub(ONE, value)),
            "erf": lambda: mul(_num(2 / math.sqrt(math.pi)), Call("exp", (neg(mul(u, u)),))),
            "erfc": lambda: mul(_num(-2 / math.sqrt(math.pi)), Call("exp", (neg(mul(u, u)),))),
            "normcdf": lambda: mul(
                _num(1 / math.sqrt(2 * math.pi)), Call("exp", (mul(_num(-0.5), mul(u, u)),))
            ),
            "abs": lambda: Call("sign", (u,)),
        }.get(f)
        if rule is None:
            raise NotDifferentiable(f"no derivative rule for {f}()")
        return mul(rule(), du)

    def extremum(self, n: Call) -> Node:
        """max/min (torch.maximum/minimum): the larger (smaller) side's derivative, half each on
        a tie; NaN propagates (a NaN side takes the gradient, as torch's)."""
        a, b = n.args
        da, db = self.d(a), self.d(b)
        wins = Bin(">" if n.fn == "max" else "<", a, b)
        loses = Bin("<" if n.fn == "max" else ">", a, b)
        tie = mul(_num(0.5), add(da, db))
        return where(wins, da, where(loses, db, where(Bin("==", a, b), tie, add(da, db))))

    def power(self, n: Call) -> Node:
        """pow(a, b): b a^(b-1) a' + a^b log(a) b', with torch's zeros: no a-gradient where b == 0,
        no b-gradient where a == 0 and b >= 0."""
        a, b = n.args
        da, db = self.d(a), self.d(b)
        fn = n.fn
        base = ZERO
        if not _is(da, 0):
            if _const(b):
                base = mul(mul(b, Call(fn, (a, _num(b.value - 1)))), da)
            else:
                base = where(Bin("==", b, ZERO), ZERO, mul(mul(b, Call(fn, (a, sub(b, ONE)))), da))
        exponent = ZERO
        if not _is(db, 0):
            grow = mul(mul(self.v(n), Call("log", (a,))), db)
            exponent = where(Bin("and", Bin("==", a, ZERO), Call("nonneg_real", (b,))), ZERO, grow)
        return add(base, exponent)
