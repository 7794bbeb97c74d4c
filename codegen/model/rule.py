"""A structured op's ``meta:`` rule as written: each part parsed (rules/syntax.py) and placed,
with the line it came from, before the checker (rules/check.py) types it into the IR."""

from __future__ import annotations

from dataclasses import dataclass

from structgen.codegen.model.rule_ir import MetaIR
from structgen.codegen.model.rule_tree import Expr, Pattern


@dataclass(frozen=True)
class InputRule:
    arg: str
    kind: str  # tensor | tensors
    pattern: Pattern
    line: int


@dataclass(frozen=True)
class OutputRule:
    arg: str
    shape: Expr
    dtype: Expr
    layout: Expr | None  # None: contiguous; else like(...)
    line: int  # of its meta.shape rule
    dtype_line: int
    layout_line: int
    is_list: bool = False  # a Tensor(a!)[] output: its shape gives one shape per element (split)


@dataclass(frozen=True)
class Check:
    expr: Expr
    line: int


@dataclass(frozen=True)
class CombineBy:
    """A combine chosen by an int argument's value (a loss's ``reduction``: 1 mean, 2 add); a
    value not listed reduces nothing (reduction='none' keeps every dim)."""

    arg: str
    cases: tuple[tuple[int, str], ...]


@dataclass(frozen=True)
class IndexKind:
    """``meta.index: {whole: "dims(self, dim)"}``: axes of an input whose index dims are not
    parallel (softmax's dim must stay whole; cumsum's dim is scanned). Also ``meta.positions:
    {indices: "trailing(self, 2)"}`` (kind ``positions``): ``output`` holds flat positions over
    these axes of the input: an output (max_pool's indices, argmax) or an input the op reads the
    other at (index_select's index)."""

    kind: str  # whole | scanned | diagonal | positions
    tensor: str  # the tensor argument the axes belong to: dims(<tensor>, ...)
    axes: Expr
    line: int
    output: str | None = None  # positions: the output or input that holds them
    offset: str | None = None  # diagonal: the int argument that names the diagonal


@dataclass(frozen=True)
class Rule:
    args: tuple[tuple[str, str], ...]  # (argument name, rule kind) of the meta function's arguments
    inputs: tuple[InputRule, ...]
    outputs: tuple[OutputRule, ...]
    checks: tuple[Check, ...]
    allowed: tuple[tuple[str | None, tuple[str, ...]], ...]  # (argument or None: every tensor, dtypes)
    precomputed: tuple[tuple[str, Expr, str, int], ...]  # name, rule, declared type, line
    combine: str | CombineBy | None
    index: tuple[IndexKind, ...] = ()
    ir: MetaIR | None = None  # the checked rule (rules/check.py), set by parse_rule
    # meta.vmap_as: (call text or cases, line): the call of another structured op that computes a batch of
    # this one's calls when every tensor gets a leading batch axis (mm's: "bmm(self, mat2)"); the
    # manifest binds it (codegen/composite.py), vmap proves it per call with describe()
    vmap_as: tuple[str | list, int] | None = None
    # meta.affine: (output, weight, bias, line): the output is the op's with weight and bias None,
    # times weight plus bias (layer_norm); vmap batches per-example weights so
    affine: tuple[str, str, str, int] | None = None


@dataclass(frozen=True)
class Defaults:
    """What an op kind's rule may leave out, already parsed (pointwise ops: the elementwise
    shape and layout of their one output), and the line errors about them point at."""

    shape: Expr
    layout: Expr
    line: int
