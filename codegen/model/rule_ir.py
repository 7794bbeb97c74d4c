"""The rule language's typed IR: what the checker (rules/check.py) makes of a rule, once, and what
the printers read (rules/cpp.py: the meta function and the multi-kernel choosers; rules/python.py:
the index-space functions behind describe()).

Every expression carries its kind, the rule language's type (docs/rules.md §3): int, ints (a list
of dims), bool, tensor, tensors, tensor?, dtypes (a dtype rule's result), ... Statements are the
meta function's steps in order: match each input's pattern, compute each output's shape and
dtypes, check allowed dtypes and conditions, compute layouts and precomputed values. Nothing here
is C++ or Python text; names of arguments and dims are the manifest's.
"""

from __future__ import annotations

from dataclasses import dataclass

# ---------------------------------------------------------------------------------------------
# Expressions


@dataclass(frozen=True)
class Arg:
    """An argument of the op, or a value an impl receives in its place (a precomputed value, an
    output tensor: the multi-kernel choosers' expressions)."""

    name: str
    kind: str


@dataclass(frozen=True)
class Bound:
    """A name an input pattern binds: one dim (int), a group (ints), per-element dims (elems)."""

    name: str
    kind: str


@dataclass(frozen=True)
class OutputRef:
    """An output in a check (alpha_check(alpha, out)): its dtypes, once computed."""

    name: str
    kind: str = "output"


@dataclass(frozen=True)
class IntLit:
    value: int
    kind: str = "int"


@dataclass(frozen=True)
class BoolLit:
    value: bool
    kind: str = "bool"


@dataclass(frozen=True)
class Unary:
    op: str  # "-" (int) | "not" (bool)
    operand: Expr
    kind: str


@dataclass(frozen=True)
class Binary:
    """Arithmetic (+ - * // %: int), comparisons and and/or (bool); == and != also compare two
    shapes element by element (``shapes``)."""

    op: str
    lhs: Expr
    rhs: Expr
    kind: str
    shapes: bool = False


@dataclass(frozen=True)
class Compare:
    """A comparison of values that are not shape ints: ``numbers`` (a Scalar or float with a
    Scalar, float or int, compared exactly as Python compares numbers: cdist's ``p >= 0``) or
    ``dtypes`` (a tensor's or ScalarType argument's dtype with another or a named one, == and !=
    only: ``dtype(self) != uint8``)."""

    op: str
    lhs: Expr
    rhs: Expr
    of: str  # "numbers" | "dtypes"
    kind: str = "bool"


@dataclass(frozen=True)
class Select:
    """``then if test else otherwise``, for ints, shapes, bools and dtype rules alike."""

    test: Expr
    then: Expr
    otherwise: Expr
    kind: str


@dataclass(frozen=True)
class SizesOf:
    """A tensor used as a shape: its sizes."""

    tensor: Expr
    kind: str = "ints"


@dataclass(frozen=True)
class Splice:
    """``*x`` in a shape literal: the dims of a shape."""

    value: Expr


@dataclass(frozen=True)
class ShapeLiteral:
    items: tuple[Expr | Splice, ...]
    kind: str = "ints"


@dataclass(frozen=True)
class Given:
    """Whether an optional argument was passed."""

    arg: Arg
    kind: str = "bool"


@dataclass(frozen=True)
class Call:
    """A builtin (rules/builtins.py) applied to checked arguments. ``labels`` are how messages
    name each argument (its rule text; a group inside broadcast() as ``*g``); ``options`` are
    its keyword options, resolved to their values (``empty=NONE``, ``kind=INT_TO_FLOAT``);
    ``context`` the builtin table's (a tuning ``numel`` is a real tensor's, not a SymInt)."""

    fn: str
    args: tuple[Expr, ...]
    labels: tuple[str, ...]
    kind: str
    options: tuple[tuple[str, str], ...] = ()
    context: str = "shape"

    def option(self, key: str, default: str) -> str:
        return dict(self.options).get(key, default)


@dataclass(frozen=True)
class DtypeName:
    """A dtype written in the rule (``long``, ``float32``)."""

    name: str
    kind: str = "dtype"


@dataclass(frozen=True)
class DtypeOf:
    """A dtype rule that is one dtype: a tensor's, a ScalarType argument's, or a named one."""

    source: Arg | DtypeName
    kind: str = "dtypes"


@dataclass(frozen=True)
class DtypeOr:
    """``dtype or <rule>``: the ScalarType? argument when given, else the rule."""

    arg: Arg
    otherwise: Expr
    kind: str = "dtypes"


Expr = (
    Arg
    | Bound
    | OutputRef
    | IntLit
    | BoolLit
    | Unary
    | Binary
    | Compare
    | Select
    | SizesOf
    | ShapeLiteral
    | Given
    | Call
    | DtypeName
    | DtypeOf
    | DtypeOr
)


# ---------------------------------------------------------------------------------------------
# Patterns


@dataclass(frozen=True)
class AnyDim:
    """``_``: one dim of any size."""


@dataclass(frozen=True)
class LiteralDim:
    size: int


@dataclass(frozen=True)
class DimItem:
    """``n`` (binds or compares one dim) or ``c[i]`` (collects one dim per element)."""

    name: str
    first: bool  # this pattern binds the name (else an earlier one did: compare)
    per_element: bool = False


@dataclass(frozen=True)
class GroupItem:
    """``*g`` (free: the dims left over), ``*g:pos`` (``length``: the dims before ``pos``), or
    ``*shape`` of an int[] argument (``argument``: the dims must equal its values)."""

    name: str
    first: bool
    length: Expr | None = None
    argument: Arg | None = None

    @property
    def free(self) -> bool:
        return self.length is None and self.argument is None


PatternItem = AnyDim | LiteralDim | DimItem | GroupItem


# ---------------------------------------------------------------------------------------------
# Statements


@dataclass(frozen=True)
class MatchPattern:
    """Match input ``arg`` (a tensor, each tensor of a Tensor[], or a Tensor? when given)
    against its pattern: check its rank and literal dims, bind new names, compare bound ones."""

    arg: str
    kind: str  # tensor | tensors | tensor?
    text: str  # the pattern as written, which messages quote
    items: tuple[PatternItem, ...]
    declares: tuple[Bound, ...]  # the names this pattern binds first, in order


@dataclass(frozen=True)
class OutputShape:
    out: str
    shape: Expr  # ints, or one shape per element (kind "shapes") for a Tensor(a!)[] output
    is_list: bool


@dataclass(frozen=True)
class OutputDtypes:
    out: str
    dtypes: Expr  # kind "dtypes": result, compute and promoted dtype


@dataclass(frozen=True)
class AllowedPromoted:
    """``allowed`` for every tensor: the tensors the first output's promote() promotes are
    checked by their promoted dtype (as torch checks an op's common dtype)."""

    tensors: tuple[str, ...]
    output: str
    dtypes: tuple[str, ...]


@dataclass(frozen=True)
class Allowed:
    """``allowed`` of one tensor argument (each element of a Tensor[], a Tensor? when given)."""

    arg: Arg
    dtypes: tuple[str, ...]


@dataclass(frozen=True)
class Check:
    """A ``checks:`` item: a check builtin (Call of kind "check") or a condition, which must
    hold; ``shown`` are the ints and tensors (their sizes) its message prints."""

    test: Expr
    text: str
    shown: tuple[tuple[str, Expr], ...] = ()


@dataclass(frozen=True)
class OutputStrides:
    """The output's layout: contiguous (``like`` empty) or torch's elementwise stride
    propagation from the named tensors."""

    out: str
    like: tuple[tuple[str, Expr], ...]


@dataclass(frozen=True)
class Precomputed:
    name: str
    value: Expr  # int, bool or dimlist


Statement = (
    MatchPattern
    | OutputShape
    | OutputDtypes
    | AllowedPromoted
    | Allowed
    | Check
    | OutputStrides
    | Precomputed
)


@dataclass(frozen=True)
class IndexKind:
    """Axes (a dimlist of ``tensor``) whose index dims have ``kind`` (whole | scanned | diagonal,
    whose ``offset`` argument names the diagonal), or over which ``output`` holds flat positions
    (kind positions). Only the index-space function reads it: the meta function has nothing to
    compute for it."""

    kind: str
    tensor: str
    axes: Expr
    output: str | None = None
    offset: str | None = None


@dataclass(frozen=True)
class MetaIR:
    """A rule's meta function: its statements, and the first output, whose dtypes give the op's
    compute and common dtype; ``index`` the dims that are not parallel (describe() and sharding)."""

    statements: tuple[Statement, ...]
    outputs: tuple[str, ...]
    index: tuple[IndexKind, ...] = ()

    @property
    def patterns(self) -> tuple[MatchPattern, ...]:
        return tuple(s for s in self.statements if isinstance(s, MatchPattern))


@dataclass(frozen=True)
class TuningIR:
    """A multi-kernel chooser's key and variant conditions over the impl's arguments, after the
    input patterns that bind the dims they name (codegen/multi_kernel.py)."""

    patterns: tuple[MatchPattern, ...]
    key: tuple[Expr, ...]  # ints or bools
    conditions: tuple[Expr | None, ...]  # bools; None: always eligible
