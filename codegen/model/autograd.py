"""An op's derivatives as the model holds them: the ``derivatives:`` key as written, and the
checked, typed IR of each gradient and the forward-mode formula. Data only: autograd/formulas.py
builds them; autograd/cpp.py and dest/autograd.py print them.
"""

from __future__ import annotations

from dataclasses import dataclass

from structgen.codegen.model.formula import Node

NOT_DIFFERENTIABLE = "not_differentiable"
NON_DIFFERENTIABLE_INPUT = "non_differentiable"  # no gradient, silently (an index, a mask)
NOT_IMPLEMENTED = "not_implemented"  # backward raises if the input requires grad (as torch's)
AUTO_LINEAR = "auto_linear"  # forward mode: the op is linear in its tensors, applied to tangents


@dataclass(frozen=True)
class Function:
    name: str
    params: tuple[str, ...]
    result: str  # tensor | tensors | scalar | bool
    cpp: str  # the C++ function the printed call names
    doc: str
    tensorize: bool = False  # a number argument is passed as a 0-dim tensor (ATen's elementwise)
    # A function of a `mask`: the gradients it gives, one per input of the formula of several
    # inputs that calls it (its C++ takes a std::array<bool, gradients>)
    gradients: int = 0
    header: str | None = None  # the include its C++ needs beyond the glue's (an ATen operator's)


# As written


@dataclass(frozen=True)
class WrittenDerivatives:
    """The ``derivatives:`` key of a functional entry, parsed but not yet checked against its
    structured op (that needs the out= overload's outputs and formula: resolve())."""

    line: int
    # inputs (one, or several sharing a formula that gives one gradient each), formula, text, line
    formulas: tuple[tuple[tuple[str, ...], Node, str, int], ...]
    non_differentiable: tuple[str, ...]
    output_differentiability: tuple[bool, ...] | None
    not_differentiable: bool  # derivatives: not_differentiable
    not_implemented: tuple[str, ...] = ()
    # `result:` forward-mode formula over primals and tangents (<input>_t), or AUTO_LINEAR
    forward: tuple[Node | str, str, int] | None = None


# Typed IR


@dataclass(frozen=True)
class Ref:
    """An argument, ``grad``/``grad_<out>`` or ``result``/``result_<out>``."""

    name: str
    kind: str
    role: str  # arg | grad | result


@dataclass(frozen=True)
class Const:
    value: int | float | bool | str | None
    text: str
    kind: str  # scalar | bool | str | none


@dataclass(frozen=True)
class Op:
    op: str  # an operator of the formula language: + - * / // % == ... and or not neg
    args: tuple[Expr, ...]
    kind: str


@dataclass(frozen=True)
class Apply:
    fn: Function
    args: tuple[Expr, ...]
    kind: str


@dataclass(frozen=True)
class Where:
    cond: Expr
    then: Expr
    otherwise: Expr
    kind: str


@dataclass(frozen=True)
class Select:
    """select(mode, v1, e1, v2, e2, ...): the branch of the str argument's value (None too)."""

    arg: Ref
    cases: tuple[tuple[str | None, Expr], ...]
    kind: str


Expr = Ref | Const | Op | Apply | Where | Select


@dataclass(frozen=True)
class Gradient:
    """Backward's value for one differentiable input (a Tensor[] input: one per element), or for
    several that share one formula (``input, weight, bias: native_layer_norm_backward(...)``),
    which then gives one gradient each, in order."""

    inputs: tuple[str, ...]
    expr: Expr
    text: str  # the formula as written or derived, for errors and docs
    derived: bool
    # A pointwise op's gradient that is one pointwise formula (then sum_to the input, where the
    # formula says so): what a generated fused backward kernel computes (codegen/autograd/fused.py)
    kernel: Node | None = None
    kernel_sum_to: bool = False
    kernel_scale: Expr | None = None  # a number the kernel's result is multiplied by (alpha)
    fused: str | None = None  # the generated backward op that computes kernel
    fused_args: tuple[str, ...] = ()  # its arguments: grad, the op's arguments, result


@dataclass(frozen=True)
class Autograd:
    """An op's derivatives: the gradient of each differentiable input, and which outputs carry
    gradients (an integer or bool output never does)."""

    gradients: tuple[Gradient, ...]
    outputs: tuple[str, ...]  # the outputs' names (the out= overload's); () for a Tensor[] output
    output_differentiability: tuple[bool, ...]
    line: int
    list_output: bool = False  # one Tensor[] output: formulas read `grads`
    # Forward mode (jvp): the output's tangent over primals and <input>_t tangents; AUTO_LINEAR:
    # the op applied to the tangents; None: forward AD raises (not implemented)
    forward: Expr | str | None = None
    tangents: tuple[str, ...] = ()  # the inputs whose tangents forward mode reads
