"""The rule language's builtins, one row each: where a builtin may appear, the kinds of its
arguments, its result, its keyword options, and its line in docs/rules.md.

The checker (rules/check.py) type-checks calls against this table; the printers (rules/cpp.py,
rules/python.py) print each builtin by name; docs/rules.md's builtin tables are rendered from it
(tests/codegen/test_rule_docs.py keeps them in step). Adding a builtin: a row here, its C++ helper
in csrc/include/structgen/rules.h, a case in each printer that prints the contexts it may appear
in, and a test.
"""

from __future__ import annotations

from dataclasses import dataclass

# Where a builtin may appear: an expression of a shape, int or condition; a dtype rule; a
# `checks:` item; a layout; a multi-kernel tuning key or variant condition (`kernels:`); the axes
# of `meta.index` (read by describe() only, so never printed as C++).
CONTEXTS = ("shape", "dtype", "check", "layout", "tuning", "index")
DIM_ARGUMENT = "ints?|ints|int|int?"  # what reduce/dims/nonempty take as their dim argument


@dataclass(frozen=True)
class Option:
    key: str
    values: tuple[str, ...]
    default: str


@dataclass(frozen=True)
class Builtin:
    name: str
    context: str
    params: tuple[str, ...] | None  # the kinds each argument may have ("a|b"); None: variadic
    result: str
    usage: str  # how docs/rules.md writes a call
    doc: str
    options: tuple[Option, ...] = ()


EMPTY = Option("empty", ("ALL", "NONE"), "ALL")
PROMOTIONS = ("DEFAULT", "NO_OPMATH", "INT_TO_FLOAT", "ALWAYS_BOOL", "COMPLEX_TO_FLOAT", "BOOL_TO_LONG")
REDUCTIONS = ("SUM", "SAME", "FLOAT", "REAL", "BOOL", "LONG", "OPMATH")

BUILTINS = (
    # -- shapes and ints ----------------------------------------------------------------------
    Builtin(
        "broadcast",
        "shape",
        None,
        "ints",
        "broadcast(x, ...)",
        "PyTorch broadcasting of tensors and/or groups (a group is named `*g` in messages); an absent "
        "`Tensor?` counts as 0-dim, so it broadcasts to anything",
    ),
    Builtin(
        "reduce",
        "shape",
        ("tensor", DIM_ARGUMENT, "bool"),
        "ints",
        "reduce(t, dim, keepdim)",
        "`t`'s shape without the reduced dims (kept as 1 with keepdim); `dim`: `int[]?`, `int[]`, `int`, "
        "`int?` or a computed list; None or `[]` reduces all; with `empty=NONE`, `[]` reduces none "
        "(torch.all/any)",
        (EMPTY,),
    ),
    Builtin(
        "reduce_all",
        "shape",
        ("ints",),
        "ints",
        "reduce_all(x)",
        "no dims: every dim of `x` reduced away (a loss's `reduction` mean or sum: "
        "`reduce_all(broadcast(self, target))`, which still checks that they broadcast); describe() "
        "takes them as reduced index dims",
    ),
    Builtin(
        "dims",
        "shape",
        ("tensor", DIM_ARGUMENT),
        "dimlist",
        "dims(t, dim)",
        "the sorted, wrapped reduced dims (a dim list; only for `precomputed`); takes `empty=` like `reduce`",
        (EMPTY,),
    ),
    Builtin("matmul", "shape", ("tensor", "tensor"), "ints", "matmul(a, b)", "torch.matmul's shape"),
    Builtin("cat", "shape", ("tensors", "int"), "ints", "cat(ts, dim)", "torch.cat's shape"),
    Builtin("stack", "shape", ("tensors", "int"), "ints", "stack(ts, dim)", "torch.stack's shape"),
    Builtin(
        "split",
        "shape",
        ("tensor", "ints", "int"),
        "shapes",
        "split(t, sizes, dim)",
        "one shape per piece of torch.split_with_sizes: `t`'s shape with dim `dim` of size `sizes[i]`; "
        "only as the whole shape of a `Tensor(a!)[]` output",
    ),
    Builtin(
        "index",
        "shape",
        ("tensor", "int", "tensor"),
        "ints",
        "index(src, dim, idx)",
        "`src.shape[:dim] + idx.shape + src.shape[dim+1:]`",
    ),
    Builtin(
        "gather",
        "shape",
        ("tensor", "int", "tensor"),
        "ints",
        "gather(src, dim, idx)",
        "torch.gather's shape, `idx`'s, checked against `src`: the same rank (0-dim counts as 1-dim), "
        "and no larger than `src` in any dim but `dim`",
    ),
    Builtin(
        "window",
        "shape",
        ("int", "int", "int", "int", "int", "bool"),
        "int",
        "window(n, k, s, p, d, ceil_mode)",
        "the output length of a sliding window",
    ),
    Builtin(
        "len",
        "shape",
        ("tensors|ints|elems",),
        "int",
        "len(x)",
        "number of tensors in a Tensor[], of dims in a group/`int[]`, of per-element values",
    ),
    Builtin("ndim", "shape", ("tensor",), "int", "ndim(t)", "`t.dim()`"),
    Builtin(
        "numel",
        "shape",
        ("tensor",),
        "int",
        "numel(t)",
        "`t.numel()` (batch_norm: `not training or numel(input) > 0`)",
    ),
    Builtin(
        "sum",
        "shape",
        ("elems|ints",),
        "int",
        "sum(x)",
        "sum of per-element dims (`sum(c)`) or of a group's dims",
    ),
    Builtin("max", "shape", ("int", "int"), "int", "max(a, b)", "the larger of two ints"),
    Builtin("min", "shape", ("int", "int"), "int", "min(a, b)", "the smaller of two ints"),
    Builtin(
        "item",
        "shape",
        ("ints", "int"),
        "int",
        "item(x, i)",
        "element `i` of an `int[]` argument, Python's negative indices included: `item(kernel_size, -1)`",
    ),
    Builtin(
        "ones",
        "shape",
        ("int",),
        "ints",
        "ones(n)",
        "`n` dims of size 1 (layer_norm's statistics: `[*batch, *ones(len(normalized_shape))]`)",
    ),
    Builtin(
        "int",
        "shape",
        ("scalar",),
        "int",
        "int(x)",
        "a Scalar as an int, truncated toward zero as torch's integral paths read a bound "
        "(Scalar.toLong(): hardtanh's `int(min_val) >= 0`); a Scalar also compares with ints and "
        "Scalars as it is, exactly as Python compares numbers",
    ),
    Builtin(
        "dtype",
        "shape",
        ("tensor",),
        "dtype",
        "dtype(t)",
        "`t`'s dtype, compared with `==`/`!=` to a dtype name or a ScalarType argument, in `checks:` "
        "only (`dtype(self) != uint8 or int(min_val) >= 0`)",
    ),
    Builtin(
        "given",
        "shape",
        ("tensor?|int?|ints?|scalar?|dtype?|str?",),
        "bool",
        "given(x)",
        "whether the optional argument `x` was passed (not None)",
    ),
    # -- dtype rules --------------------------------------------------------------------------
    Builtin(
        "promote",
        "dtype",
        None,
        "dtypes",
        "promote(x, ..., kind=K)",
        "torch.result_type of tensors, Tensor[]s and Scalars, then kind K (the promotion table below)",
        (Option("kind", PROMOTIONS, "DEFAULT"),),
    ),
    Builtin(
        "reduction",
        "dtype",
        None,
        "dtypes",
        "reduction(t, [dtype], kind=K)",
        "a reduction's result dtype from its input's and an optional `ScalarType?` "
        "(the reduction table below)",
        (Option("kind", REDUCTIONS, "SUM"),),
    ),
    # -- checks -------------------------------------------------------------------------------
    Builtin(
        "alpha_check",
        "check",
        ("scalar", "output"),
        "check",
        "alpha_check(alpha, out)",
        "add/sub's rules for `alpha` against the output's dtype",
    ),
    Builtin(
        "integer_power_check",
        "check",
        ("scalar", "output"),
        "check",
        "integer_power_check(exponent, out)",
        "an integral result of a negative integral Scalar power raises (torch.pow)",
    ),
    Builtin(
        "fits_check",
        "check",
        ("scalar|scalar?", "output"),
        "check",
        "fits_check(min, out, dtypes=D)",
        "the number converts to the output's dtype without overflow, or raises (torch.clamp_min); "
        "`dtypes=INTEGRAL`: only an integral output's (torch.where rounds 1e5 into float16, refuses "
        "1000 for int8)",
        (Option("dtypes", ("ALL", "INTEGRAL"), "ALL"),),
    ),
    Builtin(
        "same_dtype",
        "check",
        None,
        "check",
        "same_dtype(a, b, ...)",
        "two or more tensors of one dtype (a `Tensor?` after the first when given; `zero_dim=PROMOTE`: "
        "0-dim ones after the first may differ)",
        (Option("zero_dim", ("EXACT", "PROMOTE"), "EXACT"),),
    ),
    Builtin(
        "nonempty",
        "check",
        ("tensor", DIM_ARGUMENT),
        "check",
        "nonempty(t, dim)",
        "every reduced dim of `t` has elements (reductions with no identity: amax, amin)",
    ),
    Builtin(
        "norm_nonempty",
        "check",
        ("scalar|scalar?", "tensor", DIM_ARGUMENT),
        "check",
        "norm_nonempty(p, t, dim)",
        "a p-norm with no identity (p < 0 or p = inf) has elements in every reduced dim",
    ),
    # -- layout -------------------------------------------------------------------------------
    Builtin(
        "like",
        "layout",
        None,
        "strides",
        "like(t, ...)",
        "TensorIterator's stride propagation from the tensors `t, ...`",
    ),
    # -- axes of index dims that are not parallel (`meta.index`, docs/rules.md) -----------------
    Builtin(
        "trailing",
        "index",
        ("tensor", "int"),
        "dimlist",
        "trailing(t, n)",
        "the last `n` axes of `t` (layer_norm's normalized dims)",
    ),
    # -- multi-kernel tuning keys and conditions (`kernels:`, docs/multi_kernel.md) -------------
    Builtin("numel", "tuning", ("tensor",), "int", "numel(t)", "`t.numel()` of a real tensor"),
    Builtin(
        "bucket_pow2",
        "tuning",
        ("int",),
        "int",
        "bucket_pow2(n)",
        "`n` rounded up to a power of two (shape buckets)",
    ),
    Builtin("contiguous", "tuning", ("tensor",), "bool", "contiguous(t)", "`t.is_contiguous()`"),
    Builtin("stride", "tuning", ("tensor", "int"), "int", "stride(t, d)", "`t.stride(d)`"),
    Builtin(
        "innermost",
        "tuning",
        ("tensor", "ints|int|int?|ints?"),
        "bool",
        "innermost(t, dims)",
        "whether the reduced `dims` are `t`'s innermost, densely laid out",
    ),
)


def builtin(name: str, context: str) -> Builtin | None:
    """The builtin ``name`` as usable in ``context`` (tuning expressions also take shape ones,
    with tuning's own numel)."""
    for b in BUILTINS:
        if b.name == name and b.context == context:
            return b
    if context in ("tuning", "index"):
        return builtin(name, "shape")
    return None


def names(context: str) -> tuple[str, ...]:
    return tuple(b.name for b in BUILTINS if b.context == context)


def docs_table(context: str) -> str:
    """The Markdown table of ``context``'s builtins in docs/rules.md."""
    rows = ["| builtin | meaning | result |", "|---|---|---|"]
    for b in BUILTINS:
        if b.context == context:
            rows.append(f"| `{b.usage}` | {b.doc} | {_KINDS.get(b.result, b.result)} |")
    return "\n".join(rows)


_KINDS = {
    "ints": "a shape",
    "int": "an int",
    "bool": "a bool",
    "dimlist": "a dim list",
    "shapes": "one shape per element",
    "dtypes": "a dtype rule",
    "check": "a check",
    "strides": "a layout",
    "dtype": "a dtype",
}
