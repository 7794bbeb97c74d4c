"""Bad pointwise formulas stop codegen with file:line, the schema, the problem and a fix.

Each case is one out= entry; the expected text is the whole message, so a vaguer or misplaced
error fails here. The formula sits on line 3 of every manifest.
"""

import pytest

from tests.codegen.manifest_helpers import load_error

UNARY = "- func: f.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
BINARY = "- func: f.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
MODE = "- func: f.out(Tensor self, *, str mode='a', Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
U = "f.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"
B = "f.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)"
M = "f.out(Tensor self, *, str mode='a', Tensor(a!) out) -> Tensor(a!)"
OPT = (
    "- func: f.out(Tensor self, Tensor other, *, str? mode, Tensor(a!) out) -> Tensor(a!)\n  structured:"
    " True\n"
)
O = "f.out(Tensor self, Tensor other, *, str? mode, Tensor(a!) out) -> Tensor(a!)"
FLOAT_FIX = (
    "compute in floating point: add kind=INT_TO_FLOAT to the promote() in meta.dtype, or restrict"
    " meta.allowed"
)

CASES = {
    "syntax": (
        UNARY + '  pointwise: "self +"\n',
        (
            f"native_functions.yaml:3: {U}: pointwise: cannot parse 'self +': expected a value at column 7, "
            "found the end — see docs/pointwise.md for the formula syntax"
        ),
    ),
    "unknown_name": (
        UNARY + '  pointwise: "self + bias"\n',
        (
            f"native_functions.yaml:3: {U}: pointwise: unknown name 'bias' — use an argument of the op "
            "(self) or a literal"
        ),
    ),
    "unknown_function": (
        UNARY + '  pointwise: "expp(self)"\n',
        (
            f"native_functions.yaml:3: {U}: pointwise: unknown function 'expp' — use one of: abs, bool, ceil,"
            " clamp, conj, cos, erf, erfc, exp, exp2, expm1, floor, fma, imag, isinf, isnan, log, log1p,"
            " log2, max, min, nan_of, nonneg_real, normcdf, pow, pow_scalar, real, round, rsqrt, select,"
            " sigmoid, sign, sin, sqrt, tan, tanh, trunc, trunc_div, where"
        ),
    ),
    "arity": (
        BINARY + '  pointwise: "max(self)"\n',
        f"native_functions.yaml:3: {B}: pointwise: max() takes 2 arguments, got 1 — write max(x0, x1)",
    ),
    "float_function_on_integers": (
        UNARY + '  pointwise: "exp(self)"\n  meta: {allowed: [integral]}\n',
        (
            f"native_functions.yaml:3: {U}: pointwise: exp() is not defined on integral values, and this op"
            f" computes in an integral type for integral inputs — {FLOAT_FIX}"
        ),
    ),
    "true_division_of_integers": (
        BINARY + '  pointwise: "self / other"\n',
        (
            f"native_functions.yaml:3: {B}: pointwise: '/' is not defined on integral values, and this op"
            " computes in an integral type for integral inputs — '/' is true division: compute in floating"
            " point (kind=INT_TO_FLOAT in meta.dtype), or use // or trunc_div()"
        ),
    ),
    # The None branch is pruned on integers only where the dtype rule makes None give floats.
    "true_division_in_none_branch_without_conditional_dtype": (
        OPT + '  pointwise: "select(mode, None, self / other, \\"floor\\", self // other)"\n  meta: {allowed:'
        " [floating, integral]}\n",
        (
            f"native_functions.yaml:3: {O}: pointwise: '/' is not defined on integral values, and this op"
            " computes in an integral type for integral inputs — '/' is true division: compute in floating"
            " point (kind=INT_TO_FLOAT in meta.dtype), or use // or trunc_div()"
        ),
    ),
    "conditional_dtype_over_different_arguments": (
        OPT + '  pointwise: "self + other"\n  meta: {dtype: {out: "promote(self) if given(mode) else'
        ' promote(self, other)"}}\n',
        (
            f"native_functions.yaml:3: {O}: pointwise: both branches of 'promote(self) if given(mode) else"
            " promote(self, other)' must be promote() over the same arguments, with a bool result in both or"
            " neither — differ only in the promotion kind, e.g. INT_TO_FLOAT vs DEFAULT"
        ),
    ),
    "bitwise_on_floats": (
        BINARY + '  pointwise: "self & other"\n  meta: {allowed: [floating]}\n',
        (
            f"native_functions.yaml:3: {B}: pointwise: '&' is not defined on floating-point values, and this"
            " op computes in a floating-point type for floating-point inputs — bitwise operators take"
            " integral or bool values; use and/or for logic"
        ),
    ),
    "ordering_complex": (
        BINARY
        + '  pointwise: "self < other"\n  meta: {dtype: {out: "promote(self, other, kind=ALWAYS_BOOL)"}}\n',
        (
            f"native_functions.yaml:3: {B}: pointwise: 'self < other' orders complex values — order their"
            " real parts (real(x) < real(y), abs(x) < 1), or compare with == or !="
        ),
    ),
    "ordering_a_complex_value_with_a_real_one": (
        BINARY
        + '  pointwise: "where(real(self) < other, self, other)"\n'
        + '  meta: {dtype: {out: "promote(self, other)"}}\n',
        (
            f"native_functions.yaml:3: {B}: pointwise: 'real(self) < other' orders complex values — order"
            " their real parts (real(x) < real(y), abs(x) < 1), or compare with == or !="
        ),
    ),
    "fractional_literal_on_integers": (
        UNARY + '  pointwise: "self * 0.5"\n  meta: {allowed: [integral]}\n',
        (
            f"native_functions.yaml:3: {U}: pointwise: the literal 0.5 is not defined on integral values, and"
            " this op computes in an integral type for integral inputs — compute in floating point"
            " (kind=INT_TO_FLOAT in meta.dtype) or restrict meta.allowed"
        ),
    ),
    "unused_tensor": (
        BINARY + '  pointwise: "exp(self)"\n  meta: {allowed: [floating]}\n',
        (
            f"native_functions.yaml:3: {B}: pointwise: tensor argument 'other' is not used by the formula — "
            "use it in the formula or remove it from the schema"
        ),
    ),
    "mode_as_value": (
        MODE + '  pointwise: "self * mode"\n  meta: {allowed: [floating]}\n',
        (
            f"native_functions.yaml:3: {M}: pointwise: 'mode' is a string and cannot be used as a value — "
            'compare it with a literal, e.g. mode == "value"'
        ),
    ),
    "dtype_rule_not_promote": (
        UNARY + '  pointwise: "-self"\n  meta: {dtype: {out: "float32"}}\n',
        (
            f"native_functions.yaml:3: {U}: pointwise: a pointwise op's dtype rule must be "
            "promote(...), got 'float32' — write e.g. meta: {dtype: {out: \"promote(self, other, "
            'kind=ALWAYS_BOOL)"}}'
        ),
    ),
    "with_dispatch": (
        UNARY + '  pointwise: "-self"\n  dispatch: {CPU: f_cpu}\n',
        (
            f"native_functions.yaml:4: {U}: the kernels of a pointwise op are generated from its formula "
            "— remove 'dispatch'"
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_formula_message(tmp_path, name):
    text, expected = CASES[name]
    assert str(load_error(tmp_path, text)) == expected
