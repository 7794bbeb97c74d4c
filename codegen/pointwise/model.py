"""The manifest's ``pointwise:`` key: a formula from which CPU and CUDA kernels are generated.

    - func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
      structured: True
      pointwise: "self + alpha * other"
      meta: {checks: ["alpha_check(alpha, out)"]}

A pointwise entry needs no ``dispatch`` (its kernels are generated) and its ``meta`` rule
defaults to what every elementwise op shares: ``shape: broadcast(<tensors>)``,
``layout: like(<tensors>)``, ``dtype: promote(<tensors>)``. The dtype rule must be a
``promote(...)`` (any kind but COMPLEX_TO_FLOAT): the promoted arguments are brought to the
common dtype, other tensor arguments keep their one allowed dtype (where's bool condition).
"""

from __future__ import annotations

from dataclasses import dataclass

from structgen.codegen import dtypes as dtype_table
from structgen.codegen import limits
from structgen.codegen.api.names import cpp_name
from structgen.codegen.errors import SpecError
from structgen.codegen.load import LineDict
from structgen.codegen.model.pointwise import Operand, PointwiseKernel
from structgen.codegen.model.rule import Defaults, Rule
from structgen.codegen.model.rule_tree import Call, Cond, Name, ShapeList, Star
from structgen.codegen.model.schema import Argument, BaseTy, BaseType, FunctionSchema, OptionalType
from structgen.codegen.pointwise.lower import FormulaError, lower_formula
from structgen.codegen.pointwise.syntax import FormulaSyntaxError, parse_formula

# Which formula category a dtype computes in: its group.
CATEGORY = {d.name: d.group for d in dtype_table.DTYPES}
# The dtypes generated CUDA kernels take (CUDA's own types; no complex in device code).
CUDA_TYPES = {d.name: d.cuda_type for d in dtype_table.DTYPES if d.cuda_type is not None}
KINDS = ("DEFAULT", "NO_OPMATH", "INT_TO_FLOAT", "ALWAYS_BOOL", "BOOL_TO_LONG")


def elementwise_defaults(schema: FunctionSchema, line: int) -> Defaults | None:
    """The meta rule a pointwise op may leave out: its one output broadcasts the tensor inputs
    and takes their layout as TensorIterator does."""
    tensors = tuple(Name(a.name) for a in schema.arguments.non_out if a.type == BaseType(BaseTy.Tensor))
    if not tensors or len(schema.arguments.out) != 1:
        return None
    shape = Call("broadcast", tensors) if len(tensors) > 1 else ShapeList((Star(tensors[0]),))
    return Defaults(shape, Call("like", tensors), line)


def _operand_kind(a: Argument) -> str | None:
    t = a.type
    if t == BaseType(BaseTy.Tensor):
        return "tensor"
    if t == BaseType(BaseTy.Scalar):
        return "scalar"
    if t == BaseType(BaseTy.str):
        return "str"
    if isinstance(t, OptionalType) and t.elem == BaseType(BaseTy.Scalar):
        return "scalar?"
    if isinstance(t, OptionalType) and t.elem == BaseType(BaseTy.str):
        return "str?"
    return None


@dataclass(frozen=True)
class _Promotion:
    """The output's dtype rule as kernels see it: ``promote(args, kind=...)``, or, for
    ``promote(...) if given(x) else promote(..., kind=...)``, two kinds and the str? argument
    ``x`` whose None-ness picks one."""

    promoted: tuple[str, ...]
    kinds: tuple[str, ...]  # (kind,) or (kind if given, kind if None)
    given: str | None = None


def _promotion(rule: Rule, d=None) -> _Promotion:
    """The output's dtype rule as a _Promotion, or FormulaError."""
    d = rule.outputs[0].dtype if d is None else d
    if isinstance(d, Name) and (d.id, "tensor") in rule.args:
        return _Promotion((d.id,), ("DEFAULT",))
    if isinstance(d, Call) and d.fn == "promote" and all(isinstance(a, Name) for a in d.args):
        kind = dict(d.kwargs).get("kind")
        return _Promotion(tuple(a.id for a in d.args), (kind.id if isinstance(kind, Name) else "DEFAULT",))
    if (
        isinstance(d, Cond)
        and isinstance(d.test, Call)
        and d.test.fn == "given"
        and len(d.test.args) == 1
        and isinstance(d.test.args[0], Name)
        and (d.test.args[0].id, "str?") in rule.args
    ):
        a, b = _promotion(rule, d.then), _promotion(rule, d.otherwise)
        kinds = a.kinds + b.kinds
        if a.promoted != b.promoted or len(kinds) != 2 or ("ALWAYS_BOOL" in kinds and kinds[0] != kinds[1]):
            raise FormulaError(
                f"both branches of '{d}' must be promote() over the same arguments, "
                "with a bool result in both or neither",
                "differ only in the promotion kind, e.g. INT_TO_FLOAT vs DEFAULT",
            )
        return _Promotion(a.promoted, kinds, d.test.args[0].id)
    raise FormulaError(
        f"a pointwise op's dtype rule must be promote(...), got '{d}'",
        'write e.g. meta: {dtype: {out: "promote(self, other, kind=ALWAYS_BOOL)"}}',
    )


def _kernel_dtypes(
    allowed: set[str], scalars: bool, kind: str, promoted_allowed: set[str]
) -> tuple[str, ...]:
    """Every common dtype promotion can produce from the allowed input dtypes, of those the
    op's `allowed` lets through (it restricts the promoted dtype, before the kind)."""
    cats = {CATEGORY[d] for d in allowed}
    if scalars:  # a bool tensor with an int Scalar is int64; an int tensor with 2.5 is float
        if "bool" in cats:
            cats.add("integral")
        if cats & {"bool", "integral"}:
            cats.add("floating")
    cats = {CATEGORY[d] for d in dtype_table.NAMES if CATEGORY[d] in cats and d in promoted_allowed}
    if kind == "INT_TO_FLOAT" and cats & {"bool", "integral"}:
        cats -= {"bool", "integral"}
        cats.add("floating")
    if kind == "BOOL_TO_LONG" and "bool" in cats:
        cats.discard("bool")
        cats.add("integral")
    return tuple(d for d in dtype_table.NAMES if CATEGORY[d] in cats)


def parse_pointwise(
    path: str, entry: LineDict, op: str, schema: FunctionSchema, rule: Rule
) -> PointwiseKernel:
    text = entry["pointwise"]
    line = entry.line_of("pointwise")

    def fail(problem: str, fix: str) -> SpecError:
        return SpecError(path, line, op, f"pointwise: {problem}", fix)

    if not isinstance(text, str) or not text.strip():
        raise fail(
            f"the formula must be a string, got {text!r}", 'write e.g. pointwise: "self + alpha * other"'
        )
    try:
        formula = parse_formula(text)
    except FormulaSyntaxError as e:
        raise fail(f"cannot parse '{text}': {e}", "see docs/pointwise.md for the formula syntax") from None
    if len(rule.outputs) != 1:
        raise fail("a pointwise op writes exactly one output", "declare one 'Tensor(a!) out'")
    try:
        promotion = _promotion(rule)
    except FormulaError as e:
        raise fail(e.problem, e.fix) from None
    promoted, kinds = promotion.promoted, promotion.kinds
    for kind in kinds:
        if kind not in KINDS:
            raise fail(
                f"promotion kind {kind} is not supported by generated kernels",
                f"use one of: {', '.join(KINDS)}",
            )

    allowed = dict(rule.allowed)
    everything = allowed.get(None, dtype_table.NAMES)
    operands = []
    promoted_dtypes: set[str] = set()
    for a in schema.arguments.non_out:
        k = _operand_kind(a)
        if k is None:
            raise fail(
                f"argument '{a.name}' has type {a.type}, which formulas cannot use",
                "pointwise formulas take Tensor, Scalar, Scalar?, str and str? arguments",
            )
        if k == "tensor" and a.name not in promoted:
            if tuple(allowed.get(a.name, ())) != ("bool",):
                raise fail(
                    f"tensor '{a.name}' is not promoted, so it must have one dtype",
                    f"add it to promote(...) in meta.dtype, or 'allowed: {{{a.name}: [bool]}}'",
                )
            k = "bool_tensor"
        elif k == "tensor":
            promoted_dtypes |= set(allowed.get(a.name, everything))
        operands.append(Operand(a.name, k, cpp_name(a.name), a.default))
    tensors = [o for o in operands if o.kind in ("tensor", "bool_tensor")]
    if not tensors or len(tensors) > limits.MAX_POINTWISE_TENSORS:
        raise fail(
            f"a pointwise op takes 1 to {limits.MAX_POINTWISE_TENSORS} tensors, this one takes "
            f"{len(tensors)}",
            "split the formula into several ops",
        )
    scalars_promoted = any(o.kind in ("scalar", "scalar?") and o.name in promoted for o in operands)
    by_kind = [_kernel_dtypes(promoted_dtypes, scalars_promoted, kind, set(everything)) for kind in kinds]
    dtypes = tuple(d for d in dtype_table.NAMES if any(d in ds for ds in by_kind))
    categories = tuple(dict.fromkeys(CATEGORY[d] for d in dtypes))
    never_none = {}
    if promotion.given is not None:  # categories only the 'given' branch's promotion produces
        if_none = {CATEGORY[d] for d in by_kind[1]}
        never_none = {c: frozenset({promotion.given}) for c in categories if c not in if_none}
    try:
        lowered = lower_formula(formula, tuple(operands), categories, never_none)
    except FormulaError as e:
        raise fail(e.problem, e.fix) from None
    return PointwiseKernel(text, line, lowered, dtypes, promoted, kinds, promotion.given, formula)
