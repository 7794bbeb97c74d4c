"""Bad ``meta:`` rules: each stops with file:line: op: problem — fix, the line being the rule's own.

Every case is a one-entry manifest. ``entry()`` lays it out as

    1  - func: <schema>
    2    structured: True
    3    dispatch: {CPU: kernel_out_cpu}
       (precomputed lines, if any)
    4    meta: ...            (a flow mapping stays on this line; a block starts on line 5)

so the expected line numbers below can be counted from that picture.
"""

import textwrap

import pytest
from structgen.codegen.errors import SpecError
from structgen.codegen.gen import generate
from structgen.codegen.manifest import load_manifest

from tests.codegen.manifest_helpers import load_error, run_cli, write_manifest

OP = (
    "myop.out(Tensor self, Tensor other, int dim, bool keepdim, Scalar alpha, ScalarType? dtype, *, "
    "Tensor(a!) out) -> Tensor(a!)"
)
CAT = "mycat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)"
NORM = "mynorm.out(Tensor self, Tensor? weight, *, Tensor(a!) out) -> Tensor(a!)"
NEG = "neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"
PRECOMPUTED = "  precomputed:\n  - dim -> int[] reduced_dims\n"  # two lines: meta moves to line 6


def precomputed_with(rule: str) -> str:
    return f"  precomputed:\n  - dim -> int[] reduced_dims = {rule}\n"


DTYPES = (
    "float16, half, bfloat16, float32, float, float64, double, complex64, complex128, uint8, int8, int16, "
    "int32, int64, long, bool"
)


def entry(meta: str, func: str = OP, precomputed: str = "") -> str:
    head = f"- func: {func}\n  structured: True\n  dispatch: {{CPU: kernel_out_cpu}}\n{precomputed}"
    if meta.startswith("{") or "\n" not in meta:
        return head + f"  meta: {meta}\n"
    return head + "  meta:\n" + textwrap.indent(meta, "    ")


def at(line: int, problem: str, func: str = OP) -> str:
    return f"native_functions.yaml:{line}: {func}: {problem}"


SYNTAX_FIX = " — see docs/rules.md for the syntax"
UNBOUND = "is not bound: it is neither an argument nor a dim of a pattern"

CASES = {
    # -- syntax ------------------------------------------------------------------------------------
    "pattern_unexpected_character": (
        entry('shape:\n  self: "[n, $k]"\n  out: "[n]"\n'),
        at(6, "meta.shape.self: cannot parse '[n, $k]': unexpected character '$' at column 5" + SYNTAX_FIX),
    ),
    "pattern_missing_open_bracket": (
        entry('shape:\n  self: "n, k]"\n  out: "[n]"\n'),
        at(6, "meta.shape.self: cannot parse 'n, k]': expected '[' at column 1, found 'n'" + SYNTAX_FIX),
    ),
    "pattern_trailing_text": (
        entry('shape:\n  self: "[n] k"\n  out: "[n]"\n'),
        at(6, "meta.shape.self: cannot parse '[n] k': unexpected 'k' at column 5" + SYNTAX_FIX),
    ),
    "pattern_element_not_i": (
        entry(
            'shape:\n  tensors: "[c[j]]"\n  out: "[sum(c)]"\ndtype:\n  out: "promote(tensors)"\n', func=CAT
        ),
        at(
            6,
            "meta.shape.tensors: cannot parse '[c[j]]': expected 'i' at column 4, found 'j'" + SYNTAX_FIX,
            func=CAT,
        ),
    ),
    "expression_unexpected_character": (
        entry('shape:\n  out: "[*self] @ 2"\n'),
        at(
            6, "meta.shape.out: cannot parse '[*self] @ 2': unexpected character '@' at column 9" + SYNTAX_FIX
        ),
    ),
    "expression_missing_close_paren": (
        entry('shape:\n  out: "[*self]"\nchecks: ["(dim + 1 > 0"]\n'),
        at(
            7,
            "meta.checks: cannot parse '(dim + 1 > 0': expected ')' at column 13, found the end" + SYNTAX_FIX,
        ),
    ),
    "expression_empty": (
        entry('shape:\n  out: ""\n'),
        at(6, "meta.shape.out: cannot parse '': expected a value at column 1, found the end" + SYNTAX_FIX),
    ),
    # -- names and patterns ------------------------------------------------------------------------
    "unbound_name_in_output_shape": (
        entry('shape:\n  self: "[n, k]"\n  out: "[n, m]"\n'),
        at(7, f"'m' {UNBOUND} — bind it in a pattern (e.g. 'self: \"[..., m]\"') or use an argument"),
    ),
    "two_variadic_groups": (
        entry('shape:\n  self: "[*a, n, *b]"\n  out: "[n]"\n'),
        at(
            6,
            "pattern [*a, n, *b] of 'self' has two variadic groups (*a, *b) — keep one '*group' per "
            "pattern, or fix a group's length: '*pre:dim'",
        ),
    ),
    "same_name_twice_in_pattern": (
        entry('shape:\n  self: "[n, n]"\n  out: "[n]"\n'),
        at(
            6,
            "pattern [n, n] of 'self' uses 'n' twice — use distinct names within one pattern (equal dims "
            "across patterns share a name)",
        ),
    ),
    "pattern_binds_an_argument": (
        entry('shape:\n  self: "[dim, k]"\n  out: "[k]"\n'),
        at(
            6,
            "pattern [dim, k] of 'self' binds 'dim', which is an argument — name dims differently from the "
            "op's arguments (an int[] argument may be a group whose values the dims must equal: "
            "'*normalized_shape')",
        ),
    ),
    "per_element_dim_on_single_tensor": (
        entry('shape:\n  self: "[c[i], k]"\n  out: "[k]"\n'),
        at(
            6,
            "pattern [c[i], k]: 'c[i]' is per element, but 'self' is a single tensor — write 'c' "
            "(per-element dims exist only for Tensor[] arguments)",
        ),
    ),
    "name_bound_as_group_and_dim": (
        entry('shape:\n  self: "[*n]"\n  other: "[n]"\n  out: "[n]"\n'),
        at(7, "'n' is bound as a list of dims and as an int — use one name per kind of thing"),
    ),
    "per_element_dim_in_expression": (
        entry(
            'shape:\n  tensors: "[*pre:dim, c[i], *post]"\n  out: "[*pre, c[i], *post]"\n'
            'dtype:\n  out: "promote(tensors)"\n',
            func=CAT,
        ),
        at(7, "'c[i]' cannot be used in an expression — use sum(c) or len(c)", func=CAT),
    ),
    "group_length_not_an_int": (
        entry(
            'shape:\n  tensors: "[*pre:tensors, c[i], *post]"\n  out: "[*pre, sum(c), *post]"\n'
            'dtype:\n  out: "promote(tensors)"\n',
            func=CAT,
        ),
        at(
            6,
            "the length of *pre:tensors must be an int, got a Tensor[] 'tensors' — use a dim, an int "
            "argument or arithmetic on them",
            func=CAT,
        ),
    ),
    # -- meta.shape keys ---------------------------------------------------------------------------
    "pattern_on_non_tensor_argument": (
        entry('shape:\n  dim: "[n]"\n  out: "[n]"\n'),
        at(
            6,
            "meta.shape.dim: 'dim' is not a Tensor, Tensor? or Tensor[] argument, so it has no shape — give "
            "patterns to tensor arguments only",
        ),
    ),
    "shape_key_not_an_argument": (
        entry('shape:\n  input: "[n]"\n  out: "[n]"\n'),
        at(
            6,
            "meta.shape.input: 'input' is not an argument of this op — use one of: self, other, dim, "
            "keepdim, alpha, dtype, out",
        ),
    ),
    "output_without_shape_rule": (
        entry('shape:\n  self: "[n]"\ndtype:\n  out: self\n'),
        at(
            5,
            "meta.shape has no rule for output 'out' — add 'out: <shape expression>' to meta.shape, e.g. "
            "'out: broadcast(self, other)'",
        ),
    ),
    "shape_rule_not_a_shape": (
        entry('shape:\n  out: "ndim(self)"\n'),
        at(
            6,
            "meta.shape.out must be a shape (a list of dims), got an int — write e.g. '[*batch, n, m]' or "
            "'broadcast(self, other)'",
        ),
    ),
    "shape_rule_not_a_string": (
        entry("shape:\n  out: [1, 2]\n"),
        at(6, "meta.shape.out must be a string of rule text, got [1, 2] — quote the rule"),
    ),
    # -- builtins ----------------------------------------------------------------------------------
    "unknown_builtin": (
        entry('shape:\n  out: "broadcat(self, other)"\n'),
        at(
            6,
            "unknown builtin 'broadcat' — use one of: broadcast, reduce, reduce_all, dims, matmul, cat, "
            "stack, split, index, gather, window, len, ndim, numel, sum, max, min, item, ones, int, dtype, "
            "given",
        ),
    ),
    "reduce_wrong_argument_kinds": (
        entry('shape:\n  out: "reduce(self, keepdim, dim)"\n'),
        at(
            6,
            "reduce() takes (a Tensor, an int[]? or a list of dims or an int or an int?, a bool), got (a"
            " Tensor, a bool, an int) — see reduce() in docs/rules.md",
        ),
    ),
    "matmul_with_an_int": (
        entry('shape:\n  out: "matmul(self, 3)"\n'),
        at(6, "matmul() takes (a Tensor, a Tensor), got (a Tensor, an int) — see matmul() in docs/rules.md"),
    ),
    "cat_of_a_single_tensor": (
        entry('shape:\n  out: "cat(self, dim)"\n'),
        at(6, "cat() takes (a Tensor[], an int), got (a Tensor, an int) — see cat() in docs/rules.md"),
    ),
    "builtin_with_keyword": (
        entry('shape:\n  out: "broadcast(self, other=other)"\n'),
        at(6, "broadcast() takes no keyword arguments — pass arguments by position"),
    ),
    "dtype_builtin_in_shape": (
        entry('shape:\n  out: "promote(self)"\n'),
        at(6, "promote() is not a shape builtin — use promote() in meta.dtype"),
    ),
    # -- meta.dtype (flow style: the whole rule is on line 4) ---------------------------------------
    "unknown_promotion_kind": (
        entry('{shape: {out: "[*self]"}, dtype: {out: "promote(self, other, kind=FLOATY)"}}'),
        at(
            4,
            "promote(): unknown kind 'FLOATY' — use one of: DEFAULT, NO_OPMATH, INT_TO_FLOAT, ALWAYS_BOOL, "
            "COMPLEX_TO_FLOAT, BOOL_TO_LONG",
        ),
    ),
    "promote_of_an_int": (
        entry('{shape: {out: "[*self]"}, dtype: {out: "promote(self, dim)"}}'),
        at(
            4,
            "promote() takes tensors and Scalars, got an int 'dim' — pass the tensor and Scalar arguments "
            "that take part in type promotion",
        ),
    ),
    "or_after_a_tensor": (
        entry('{shape: {out: "[*self]"}, dtype: {out: "self or float32"}}'),
        at(
            4,
            "the left side of 'or' in a dtype rule must be a ScalarType? argument, got 'self' — write e.g. "
            "'dtype or promote(self)'",
        ),
    ),
    "or_after_an_int": (
        entry('{shape: {out: "[*self]"}, dtype: {out: "dim or float32"}}'),
        at(
            4,
            "the left side of 'or' in a dtype rule must be a ScalarType? argument, got 'dim' — write e.g. "
            "'dtype or promote(self)'",
        ),
    ),
    "given_of_a_required_argument": (
        entry('{shape: {out: "[*self]"}, dtype: {out: "float32 if given(dim) else promote(self)"}}'),
        at(
            4,
            "given() takes one optional argument, got 'dim' — pass a Tensor?, int?, int[]?, Scalar?, "
            "ScalarType? or str? argument: given(rounding_mode)",
        ),
    ),
    "optional_tensor_pattern_binds_a_dim": (
        entry('shape:\n  self: "[n, c]"\n  weight: "[c, k]"\n  out: "[n, c]"\n', func=NORM),
        at(
            7,
            "pattern [c, k] of 'weight' binds 'k', but 'weight' is optional (Tensor?): its pattern is checked"
            " only when it is given, so it cannot bind a dim — bind 'k' in a required tensor's pattern, or"
            " use '_' here",
            func=NORM,
        ),
    ),
    "same_dtype_of_an_optional_first": (
        entry('{shape: {out: "[*self]"}, checks: ["same_dtype(weight, self)"]}', func=NORM),
        at(
            4,
            "same_dtype() takes two or more tensors, the first one required (not Tensor?) — write e.g. "
            "'same_dtype(self, other)' or 'same_dtype(input, weight)'",
            func=NORM,
        ),
    ),
    "condition_not_a_bool": (
        entry('{shape: {out: "[*self]"}, dtype: {out: "float32 if ndim(self) else promote(self)"}}'),
        at(
            4,
            "the condition 'ndim(self)' must be a bool, got an int — test e.g. given(rounding_mode) or a "
            "comparison",
        ),
    ),
    "conditional_shape_of_two_kinds": (
        entry('{shape: {out: "[*self] if given(dtype) else ndim(self)"}}'),
        at(
            4,
            "both sides of '[*self] if given(dtype) else ndim(self)' must be ints, shapes or bools of one "
            "kind, got a list of dims and an int — make both branches the same kind of value",
        ),
    ),
    "conditional_without_else": (
        entry('{shape: {out: "[*self]"}, dtype: {out: "float32 if given(dtype)"}}'),
        at(
            4,
            "meta.dtype.out: cannot parse 'float32 if given(dtype)': expected 'else' at column 24, found "
            "the end" + SYNTAX_FIX,
        ),
    ),
    "unknown_dtype_name": (
        entry('{shape: {out: "[*self]"}, dtype: {out: float33}}'),
        at(4, f"'float33' is neither a dtype nor an argument — use one of: {DTYPES}"),
    ),
    "dtype_of_an_int_argument": (
        entry('{shape: {out: "[*self]"}, dtype: {out: dim}}'),
        at(4, "'dim' is an int, not a dtype — use a tensor, a dtype name or promote(...)"),
    ),
    "dtype_key_not_an_output": (
        entry('shape:\n  out: "[*self]"\ndtype:\n  self: float32\n'),
        at(8, "meta.dtype.self: 'self' is not an output — use one of: out"),
    ),
    "dtype_parse_error": (
        entry('shape:\n  out: "[*self]"\ndtype:\n  out: "promote(self) $"\n'),
        at(
            8,
            "meta.dtype.out: cannot parse 'promote(self) $': unexpected character '$' at column 15"
            + SYNTAX_FIX,
        ),
    ),
    # -- meta.layout -------------------------------------------------------------------------------
    "layout_neither_contiguous_nor_like": (
        entry('{shape: {out: "[*self]"}, layout: {out: channels_last}}'),
        at(
            4,
            "meta.layout.out must be 'contiguous' or 'like(<tensors>)', got 'channels_last' — write e.g. "
            "'like(self, other)' for PyTorch's elementwise stride propagation",
        ),
    ),
    "like_of_a_non_tensor": (
        entry('{shape: {out: "[*self]"}, layout: {out: "like(self, dim)"}}'),
        at(4, "like() takes tensor arguments, got an int 'dim' — name tensor inputs"),
    ),
    # -- meta.allowed ------------------------------------------------------------------------------
    "allowed_unknown_dtype_group": (
        entry('shape:\n  out: "[*self]"\nallowed: [floating, quantized]\n'),
        at(
            7,
            "meta.allowed: unknown dtype or group 'quantized' — use floating, complex, integral, bool or "
            "one of: float16, bfloat16, float32, float64, complex64, complex128, uint8, int8, int16, "
            "int32, int64, bool",
        ),
    ),
    "allowed_not_a_list": (
        entry('shape:\n  out: "[*self]"\nallowed: floating\n'),
        at(
            7,
            "'meta.allowed' must be a list of dtypes or dtype groups — write e.g. [floating, complex]; "
            "groups: floating, complex, integral, bool",
        ),
    ),
    "allowed_on_non_tensor_argument": (
        entry('shape:\n  out: "[*self]"\nallowed:\n  self: [floating]\n  dim: [int64]\n'),
        at(9, "meta.allowed.dim: 'dim' is not a tensor or Scalar argument — use one of: self, other, alpha"),
    ),
    # -- meta.checks (flow list: the check is on the 'checks' line) ---------------------------------
    "check_not_a_condition": (
        entry('shape:\n  out: "[*self]"\nchecks: ["dim > 0", "dim + 1"]\n'),
        at(7, "a check must be a condition, got an int 'dim + 1' — write e.g. 'n > 0'"),
    ),
    "alpha_check_arguments_swapped": (
        entry('shape:\n  out: "[*self]"\nchecks: ["alpha_check(out, alpha)"]\n'),
        at(
            7,
            "alpha_check() takes (a Scalar, an output), got (an output, a Scalar) — write "
            "'alpha_check(alpha, out)'",
        ),
    ),
    "alpha_check_of_an_int": (
        entry('shape:\n  out: "[*self]"\nchecks: ["alpha_check(dim, out)"]\n'),
        at(
            7,
            "alpha_check() takes (a Scalar, an output), got (an int, an output) — write "
            "'alpha_check(alpha, out)'",
        ),
    ),
    "fits_check_unknown_dtypes": (
        entry('shape:\n  out: "[*self]"\nchecks: ["fits_check(alpha, out, dtypes=FLOATING)"]\n'),
        at(7, "fits_check(): unknown dtypes 'FLOATING' — use one of: ALL, INTEGRAL"),
    ),
    "alpha_check_with_a_keyword": (
        entry('shape:\n  out: "[*self]"\nchecks: ["alpha_check(alpha, out, dtypes=INTEGRAL)"]\n'),
        at(7, "alpha_check() takes no keyword arguments — write 'alpha_check(alpha, out)'"),
    ),
    "same_dtype_of_one_tensor": (
        entry('shape:\n  out: "[*self]"\nchecks: ["same_dtype(self)"]\n'),
        at(
            7,
            "same_dtype() takes two or more tensors, the first one required (not Tensor?) — write e.g. "
            "'same_dtype(self, other)' or 'same_dtype(input, weight)'",
        ),
    ),
    "checks_not_a_list": (
        entry('shape:\n  out: "[*self]"\nchecks: "dim > 0"\n'),
        at(7, "'meta.checks' must be a list of expressions — write e.g. ['n > 0']"),
    ),
    "check_and_of_an_int": (
        entry('shape:\n  out: "[*self]"\nchecks: ["dim and keepdim"]\n'),
        at(7, "'and' needs bools, got an int and a bool — use 'or' between dtypes only in meta.dtype"),
    ),
    # -- meta.precomputed --------------------------------------------------------------------------
    "meta_precomputed_is_written_where_declared": (
        entry('shape:\n  out: "[*self]"\nprecomputed:\n  reduced: "dims(self, dim)"\n'),
        at(
            7,
            "meta.precomputed is written where each value is declared — write '- dim -> int[] "
            "reduced_dims = dims(self, dim)' in the entry's 'precomputed' list",
        ),
    ),
    "precomputed_value_without_rule": (
        entry('shape:\n  out: "[*self]"\n', precomputed=PRECOMPUTED),
        at(
            4,
            "precomputed value 'reduced_dims' has no rule — write it after the declaration: "
            "'... reduced_dims = <expression>' (e.g. dims(self, dim))",
        ),
    ),
    # -- the meta key itself -----------------------------------------------------------------------
    "unknown_meta_key": (
        entry('shape:\n  out: "[*self]"\nshapes:\n  out: "[*self]"\n'),
        at(
            7,
            "unknown meta key 'shapes' — use only: shape, dtype, layout, allowed, checks, combine, index, "
            "positions, vmap_as, affine",
        ),
    ),
    "meta_on_non_structured_entry": (
        "- func: neg(Tensor self) -> Tensor\n  dispatch: {CPU: neg_cpu}\n  meta: custom\n",
        at(
            3,
            "'meta' needs 'structured: True' — move the meta rule to the structured out= overload",
            func="neg(Tensor self) -> Tensor",
        ),
    ),
    "structured_without_meta": (
        f"- func: {NEG}\n  structured: True\n  dispatch: {{CPU: neg_out_cpu}}\n",
        at(
            1,
            "a structured op needs a meta rule — add 'meta: {shape: {out: ...}}' (see docs/rules.md) or "
            "'meta: custom' and define the meta function in csrc/ops/<family>/meta.cpp",
            func=NEG,
        ),
    ),
    "meta_is_a_number": (
        entry("3", func=NEG),
        at(
            4,
            "'meta' must be a rule mapping or 'custom', got 3 — write 'meta: {shape: {out: "
            "\"broadcast(self, other)\"}}' or 'meta: custom'",
            func=NEG,
        ),
    ),
    "meta_shape_not_a_mapping": (
        entry('shape: ["[*self]"]\n'),
        at(5, "'meta.shape' must map argument names to rule text — write e.g. 'shape: {out: ...}'"),
    ),
    "unknown_combine": (
        entry('shape:\n  out: "[*self]"\ncombine: median\n'),
        at(
            7,
            "meta.combine: unknown combine 'median' — use one of: add, mul, max, min, and, or, logaddexp, "
            "mean, argmax, argmin",
        ),
    ),
    "unknown_index_kind": (
        entry('shape:\n  out: "[*self]"\nindex:\n  windowed: "dims(self, 0)"\n'),
        at(8, "meta.index: unknown index-dim kind 'windowed' — use one of: whole, scanned, diagonal"),
    ),
    "index_not_axes_of_a_tensor": (
        entry('shape:\n  out: "[*self]"\nindex: {whole: "[0]"}\n'),
        at(
            7,
            "meta.index.whole: '[0]' does not name axes of a tensor argument — write dims(<tensor "
            "argument>, <dims>), e.g. 'dims(self, dim)', or trailing(<tensor argument>, <count>)",
        ),
    ),
    "trailing_outside_meta_index": (
        entry('shape:\n  out: "[*self]"\nchecks: ["len(trailing(self, 1)) == 1"]\n'),
        at(
            7,
            "trailing() gives axes for meta.index and meta.positions only — use it in meta.index: "
            "{whole: trailing(...)}",
        ),
    ),
    "positions_of_an_unknown_output": (
        entry('shape:\n  out: "[*self]"\npositions: {indices: "dims(self, 0)"}\n'),
        at(
            7,
            "meta.positions: 'indices' is not an output or a tensor input — name the tensor that holds "
            "positions: one of out, or an input the op reads another at (index_select's index)",
        ),
    ),
    "positions_not_axes_of_a_tensor": (
        entry('shape:\n  out: "[*self]"\npositions: {out: "[0]"}\n'),
        at(
            7,
            "meta.positions.out: '[0]' does not name axes of a tensor argument — write the axes the "
            "positions count over, e.g. 'trailing(self, 2)' (max_pool2d's indices) or 'dims(self, dim)' "
            "(argmax)",
        ),
    ),
    "positions_not_a_dim_list": (
        entry('shape:\n  out: "[*self]"\npositions: {out: "dims(self)"}\n'),
        at(
            7,
            "dims() takes (a Tensor, an int[]? or a list of dims or an int or an int?), got (a Tensor) — "
            "see dims() in docs/rules.md",
        ),
    ),
    "argmax_combine_without_positions": (
        entry('shape:\n  out: "reduce(self, dim, keepdim)"\ncombine: argmax\n'),
        at(
            7,
            "meta.combine: argmax merges positions, but meta.positions names none for 'out' — add "
            "'positions: {out: \"dims(self, dim)\"}' (the axes its positions count over)",
        ),
    ),
    "index_axes_of_an_output": (
        entry('shape:\n  out: "[*self]"\nindex: {scanned: "dims(out, 0)"}\n'),
        at(
            7,
            "meta.index.scanned: 'dims(out, 0)' does not name axes of a tensor argument — write "
            "dims(<tensor argument>, <dims>), e.g. 'dims(self, dim)', or trailing(<tensor argument>, "
            "<count>)",
        ),
    ),
    "pattern_missing_close_bracket": (
        entry('shape:\n  self: "[n, k"\n  out: "[n]"\n'),
        at(
            6,
            "meta.shape.self: cannot parse '[n, k': expected ',' or ']' at column 6, found the end"
            + SYNTAX_FIX,
        ),
    ),
    "call_missing_close_paren": (
        entry('shape:\n  out: "broadcast(self, other"\n'),
        at(
            6,
            "meta.shape.out: cannot parse 'broadcast(self, other': expected ',' or ')' at column 22, found "
            "the end" + SYNTAX_FIX,
        ),
    ),
    "dtype_error_points_at_dtype_line": (
        entry('shape:\n  out: "[*self]"\ndtype:\n  out: float33\n'),
        at(8, f"'float33' is neither a dtype nor an argument — use one of: {DTYPES}"),
    ),
    "promotion_kind_error_points_at_dtype_line": (
        entry('shape:\n  out: "[*self]"\ndtype:\n  out: "promote(self, kind=FLOATY)"\n'),
        at(
            8,
            "promote(): unknown kind 'FLOATY' — use one of: DEFAULT, NO_OPMATH, INT_TO_FLOAT, ALWAYS_BOOL, "
            "COMPLEX_TO_FLOAT, BOOL_TO_LONG",
        ),
    ),
    "layout_error_points_at_layout_line": (
        entry('shape:\n  out: "[*self]"\nlayout:\n  out: "like(self, dim)"\n'),
        at(8, "like() takes tensor arguments, got an int 'dim' — name tensor inputs"),
    ),
    "precomputed_error_points_at_precomputed_line": (
        entry('shape:\n  out: "[*self]"\n', precomputed=precomputed_with("dims(self, keepdim)")),
        at(
            4,
            "dims() takes (a Tensor, an int[]? or a list of dims or an int or an int?), got (a Tensor, a"
            " bool) — see dims() in docs/rules.md",
        ),
    ),
}

# Cases whose message or line is wrong today: the expected text is the correct one.
XFAIL_CASES = {
    "check_in_block_list_points_at_its_item": (
        entry('shape:\n  out: "[*self]"\nchecks:\n- "dim > 0"\n- "dim + 1"\n'),
        at(9, "a check must be a condition, got an int 'dim + 1' — write e.g. 'n > 0'"),
        "YAML list items keep no line: every check is reported at the 'checks:' key line",
    ),
}


def test_layout_of_entry_matches_the_line_numbers():
    """The line numbers above rely on entry()'s layout."""
    lines = entry('shape:\n  out: "[*self]"\n', precomputed=PRECOMPUTED).splitlines()
    assert lines[3] == "  precomputed:" and lines[5] == "  meta:" and lines[6] == "    shape:"
    assert entry('{shape: {out: "[*self]"}}').splitlines()[3] == '  meta: {shape: {out: "[*self]"}}'


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_rule_message(tmp_path, name):
    text, expected = CASES[name]
    assert str(load_error(tmp_path, text)) == expected


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason))
        for name, (_, _, reason) in sorted(XFAIL_CASES.items())
    ],
)
def test_bad_rule_message_known_wrong(tmp_path, name):
    text, expected, _ = XFAIL_CASES[name]
    assert str(load_error(tmp_path, text)) == expected


def test_precomputed_rule_must_match_declared_type(tmp_path):
    text = entry('shape:\n  out: "[*self]"\n', precomputed=precomputed_with("True"))
    error = load_error(tmp_path, text)
    assert error.line == 4
    assert "reduced_dims" in error.problem and "int[]" in error.problem


def test_unknown_builtin_in_checks_suggests_check_builtins(tmp_path):
    error = load_error(tmp_path, entry('shape:\n  out: "[*self]"\nchecks: ["alpha_chek(alpha, out)"]\n'))
    assert error.line == 7
    assert "'alpha_chek'" in error.problem
    assert "alpha_check" in error.fix and "same_dtype" in error.fix


def test_unbound_name_fix_names_an_argument_of_the_op(tmp_path):
    text = entry(
        'shape:\n  tensors: "[*pre:dim, c[i], *post]"\n  out: "[*pre, m, *post]"\n'
        'dtype:\n  out: "promote(tensors)"\n',
        func=CAT,
    )
    error = load_error(tmp_path, text)
    assert error.line == 7 and "'m' is not bound" in error.problem
    assert "'self:" not in error.fix and "'tensors:" in error.fix


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason=(
        "a group length naming a dim bound by a later pattern is reported as "
        "'neither an argument nor a dim of a pattern', which is false"
    ),
)
def test_group_length_bound_by_a_later_pattern(tmp_path):
    text = entry('shape:\n  self: "[*pre:n, k]"\n  other: "[n]"\n  out: "[k]"\n')
    path = write_manifest(tmp_path, text)
    try:
        load_manifest(path)  # accepting it (binding in dependency order) is correct too
    except SpecError as e:
        assert UNBOUND not in e.problem, str(e)


def test_default_dtype_promotes_tensor_list_inputs(tmp_path):
    text = entry('shape:\n  tensors: "[*pre:dim, c[i], *post]"\n  out: "[*pre, sum(c), *post]"\n', func=CAT)
    manifest = load_manifest(write_manifest(tmp_path, text))
    (out,) = manifest.functions[0].rule.outputs
    assert str(out.dtype) == "promote(tensors)"


def test_cli_exit_status_and_nothing_written(tmp_path):
    text, expected = CASES["two_variadic_groups"]
    proc, out = run_cli(tmp_path, text)
    assert proc.returncode == 2
    assert proc.stderr.strip() == expected
    assert proc.stdout == ""
    assert not out.exists()


def test_cat_like_pattern_generates_per_element_loop(tmp_path):
    text = (
        entry(
            'shape:\n  tensors: "[*pre:dim, c[i], *post]"\n  out: "[*pre, sum(c), *post]"\n'
            'dtype:\n  out: "promote(tensors)"\n',
            func=CAT,
        )
        + "- func: mycat(Tensor[] tensors, int dim=0) -> Tensor\n  structured_delegate: mycat.out\n"
        + "  derivatives: not_differentiable\n"
    )
    manifest = load_manifest(write_manifest(tmp_path, text))
    out = tmp_path / "generated"
    generate(manifest, out, shards=2)
    metas = [p.read_text() for p in sorted((out / "src").glob("meta_*.cpp"))]
    assert len(metas) == 2
    (meta,) = [m for m in metas if "mycat" in m]
    assert "// tensors: [*pre:dim, c[i], *post]" in meta
    assert 'rules::check_nonempty(op, "tensors", tensors);' in meta
    assert "for (size_t i = 0; i < tensors.size(); ++i) {" in meta
    assert "std::vector<c10::SymInt> d_c;" in meta
    assert "d_c.push_back(so_sizes[at]);" in meta  # one size per element of the list
    assert "c10::SymInt(dim), so_rank);" in meta  # *pre has length dim
    assert "const int64_t len_post = so_rank - (1 + len_pre);" in meta
    assert "rules::Dims{rules::sum(d_c)}" in meta
    assert "rules::promote(op, {}, {tensors}, {}, rules::Promotion::DEFAULT)" in meta


def test_precomputed_rule_of_a_hand_written_meta_function(tmp_path):
    error = load_error(tmp_path, entry_custom(precomputed_with("dims(self, dim)")))
    assert error.line == 4
    assert "hand-written (meta: custom)" in error.problem and error.fix == "remove the '= ...' rule"


def entry_custom(precomputed: str) -> str:
    return (
        f"- func: {OP}\n  structured: True\n  dispatch: {{CPU: kernel_out_cpu}}\n{precomputed}  meta:"
        " custom\n"
    )
