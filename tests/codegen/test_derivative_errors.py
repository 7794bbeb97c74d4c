"""A bad `derivatives:` key stops the generator with file:line: op: problem — fix, and a good one
gives the op its gradients (docs/autograd.md)."""

from __future__ import annotations

import pytest
from structgen.codegen.manifest import load_manifest

from tests.codegen.manifest_helpers import load_error, write_manifest

MUL_OUT = (
    "- func: mymul.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)\n"
    "  structured: True\n  dispatch: {CPU: mymul_out_cpu}\n"
    '  meta: {shape: {out: "broadcast(self, other)"}}\n'
)
FUNC = "mymul(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"


def functional(derivatives: str) -> str:
    return MUL_OUT + f"- func: {FUNC}\n  structured_delegate: mymul.out\n" + derivatives


def at(line: int, problem: str, func: str = FUNC) -> str:
    return f"native_functions.yaml:{line}: {func}: derivatives: {problem}"


# An op of two outputs, and one of a Tensor[] output (their functionals start on line 5).
MINMAX = (
    "- func: minmax.out(Tensor self, *, Tensor(a!) lo, Tensor(b!) hi) -> (Tensor(a!) lo, Tensor(b!) hi)\n"
    "  structured: True\n  dispatch: {CPU: minmax_out_cpu}\n  meta: custom\n"
    "- func: minmax(Tensor self) -> (Tensor lo, Tensor hi)\n  structured_delegate: minmax.out\n"
)
MINMAX_FUNC = "minmax(Tensor self) -> (Tensor lo, Tensor hi)"
PIECES = (
    "- func: pieces.out(Tensor self, SymInt[] sizes, *, Tensor(a!)[] out) -> ()\n"
    "  structured: True\n  dispatch: {CPU: pieces_out_cpu}\n  meta: custom\n"
    "- func: pieces(Tensor self, SymInt[] sizes) -> Tensor[]\n  structured_delegate: pieces.out\n"
    '  derivatives:\n    self: "split_backward(grads, self, sizes, 0)"\n'
)
PIECES_FUNC = "pieces(Tensor self, SymInt[] sizes) -> Tensor[]"


CASES = {
    "no_key": (
        functional(""),
        at(
            5,
            "the op takes floating tensors (self, other) but says nothing of their gradients — give each a "
            'formula (derivatives: {self: "..."}, docs/autograd.md) or write '
            "'derivatives: not_differentiable'",
        ),
    ),
    "missing_input": (
        functional('  derivatives:\n    self: "grad * other"\n'),
        at(
            7,
            "no formula for the tensor input(s) other — give each a formula, or write 'other: "
            "non_differentiable'",
        ),
    ),
    "unknown_name": (
        functional('  derivatives:\n    self: "grad * othr"\n    other: "grad"\n'),
        at(
            8,
            "self: 'othr' is neither an argument, grad nor result — use one of: alpha, grad, other, result, "
            "self",
        ),
    ),
    "unknown_function": (
        functional('  derivatives:\n    self: "grad * cosine(other)"\n    other: "grad"\n'),
        at(
            8,
            "self: unknown function cosine(): not in the table of docs/autograd.md, nor ATen's operators — "
            "did you mean sin or cos or sign? call a function of that table or an ATen operator "
            "(torch.ops.aten)",
        ),
    ),
    "aten_call_of_no_overload": (
        functional('  derivatives:\n    self: "flip(grad)"\n    other: "grad"\n'),
        at(
            8,
            "self: ATen's flip() has no overload for arguments (tensor) — pass what one of these takes: "
            "flip(Tensor self, int[] dims) -> Tensor",
        ),
    ),
    "aten_call_of_a_number_for_a_tensor": (
        functional('  derivatives:\n    self: "grad * cumsum(2, 0)"\n    other: "grad"\n'),
        at(
            8,
            "self: ATen's cumsum() has no overload for arguments (scalar, scalar) — pass what one of these "
            "takes: cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",
        ),
    ),
    "not_a_tensor": (
        functional('  derivatives:\n    self: "grad"\n    other: "grad"\n    alpha: "grad"\n'),
        at(10, "'alpha' is a scalar argument: only tensors have gradients — remove 'alpha'"),
    ),
    "not_an_argument": (
        functional('  derivatives:\n    self: "grad"\n    oter: "grad"\n'),
        at(9, "'oter' is not an argument of the op — use one of: alpha, other, self"),
    ),
    "unparseable": (
        functional('  derivatives:\n    self: "grad *"\n    other: "grad"\n'),
        at(
            8,
            "cannot parse 'grad *': expected a value at column 7, found the end — see docs/autograd.md for"
            " the formula syntax",
        ),
    ),
    "scalar_result": (
        functional('  derivatives:\n    self: "alpha"\n    other: "grad"\n'),
        at(8, "self: 'alpha' gives a scalar, not a tensor — multiply by grad"),
    ),
    "wrong_kind": (
        functional('  derivatives:\n    self: "sum_to(grad, alpha)"\n    other: "grad"\n'),
        at(
            8,
            "self: 'alpha' must name a Tensor argument (its shape and dtype are meant) — write e.g. "
            "sum_to(grad, self)",
        ),
    ),
    "on_the_out_overload": (
        MUL_OUT.replace("  structured: True\n", '  structured: True\n  derivatives: {self: "grad"}\n'),
        (
            "native_functions.yaml:3: mymul.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out)"
            " -> Tensor(a!): derivatives: only a functional overload has derivatives (its inplace and out="
            " overloads follow it) — move 'derivatives' to the functional overload"
        ),
    ),
    # Each name in scope for its key only: formulas that named one out of scope (or one of the
    # wrong kind) generated C++ that did not compile, or read a gradient that is never defined.
    "forward_reads_grad": (
        functional('  derivatives:\n    self: "grad"\n    other: "grad"\n    result: "grad"\n'),
        at(
            10,
            "result: 'grad' is backward's: forward mode has none (a forward formula gives the output's "
            "tangent) — use one of: alpha, other, other_t, result, self, self_t",
        ),
    ),
    "forward_reads_grad_of_a_pointwise_op": (  # issue 56's where.self
        (
            "- func: where.self_out(Tensor condition, Tensor self, Tensor other, *, Tensor(a!) out) ->"
            ' Tensor(a!)\n  structured: True\n  pointwise: "where(condition, self, other)"\n'
            "  meta: {allowed: {condition: [bool]}}\n"
            "- func: where.self(Tensor condition, Tensor self, Tensor other) -> Tensor\n"
            "  structured_delegate: where.self_out\n  derivatives: {result: grad}\n"
        ),
        at(
            7,
            "result: 'grad' is backward's: forward mode has none (a forward formula gives the output's "
            "tangent) — use one of: condition, other, other_t, result, self, self_t",
            "where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
        ),
    ),
    "backward_reads_tangent": (
        functional('  derivatives:\n    self: "grad * other_t"\n    other: "grad"\n'),
        at(
            8,
            "self: 'other_t' is a tangent, which only the forward formula (result:) reads — use one of: "
            "alpha, grad, other, result, self",
        ),
    ),
    "mask_in_a_formula_of_one_input": (
        functional('  derivatives:\n    self: "where(grad_input_mask, grad, grad)"\n    other: "grad"\n'),
        at(
            8,
            "self: 'grad_input_mask' is for a formula of several inputs ('input, weight: ...'): which of "
            "their gradients to give — use one of: alpha, grad, other, result, self",
        ),
    ),
    "input_named_twice": (
        functional(
            '  derivatives:\n    self: "grad"\n    other, self: "mse_loss_backward(grad, self, other, 1, '
            'grad_input_mask)"\n'
        ),
        at(9, "'self' is named twice, in 'self' and 'other, self' — give 'self' one entry"),
    ),
    "gradients_for_fewer_inputs": (
        functional(
            '  derivatives:\n    self, other: "layer_norm_backward(grad, self, alpha, other, other, other, '
            'other, grad_input_mask)"\n'
        ),
        at(
            8,
            "self, other: layer_norm_backward() gives 3 gradients, for the 2 inputs here — name its 3 "
            "inputs (see layer_norm_backward in docs/autograd.md)",
        ),
    ),
    "several_inputs_without_a_mask": (
        (
            "- func: st.out(Tensor[] tensors, Tensor other, *, Tensor(a!) out) -> Tensor(a!)\n"
            "  structured: True\n  dispatch: {CPU: st_out_cpu}\n  meta: custom\n"
            "- func: st(Tensor[] tensors, Tensor other) -> Tensor\n  structured_delegate: st.out\n"
            '  derivatives:\n    tensors, other: "cat_backward(grad, tensors, 0)"\n'
        ),
        at(
            8,
            "tensors, other: 'cat_backward(grad, tensors, 0)' does not give one gradient per input: a "
            "formula of several inputs calls a function that takes grad_input_mask — call one of those "
            "(docs/autograd.md), or give each input its own formula",
            "st(Tensor[] tensors, Tensor other) -> Tensor",
        ),
    ),
    "grad_of_an_output_without_gradient": (
        MINMAX
        + '  derivatives:\n    self: "grad_lo + grad_hi"\n    output_differentiability: [true, false]\n',
        at(
            8,
            "self: 'grad_lo + grad_hi' reads grad_hi, but output 'hi' carries no gradient "
            "(output_differentiability), so it is never defined — mark 'hi' true in "
            "output_differentiability, or do not read grad_hi",
            MINMAX_FUNC,
        ),
    ),
    "forward_of_several_outputs": (
        MINMAX + '  derivatives:\n    self: "grad_lo + grad_hi"\n    result: "self_t"\n',
        at(
            9,
            "result: forward mode gives the tangent of the one output that carries a gradient, and this op"
            " has 2 (lo, hi) — mark the others false in output_differentiability (torch gives them no"
            " tangent), or remove 'result' (forward AD then raises NotImplementedError, as for an op"
            " without one)",
            MINMAX_FUNC,
        ),
    ),
    "forward_of_a_list_output_gives_one_tensor": (
        PIECES + '    result: "self_t"\n',
        at(9, "result: 'self_t' gives a tensor, not a tensors — give one tangent per element", PIECES_FUNC),
    ),
    "output_differentiability_of_a_list_output": (
        PIECES + "    output_differentiability: [false]\n",
        at(
            7,
            "output_differentiability: each element of a Tensor[] output carries a gradient by its dtype"
            " — remove output_differentiability",
            PIECES_FUNC,
        ),
    ),
    "not_a_mapping": (
        functional("  derivatives: [self]\n"),
        at(
            7,
            "expected a mapping of inputs to formulas or 'not_differentiable', got ['self'] — write e.g. "
            'derivatives: {self: "grad * other"}',
        ),
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_bad_derivatives_message(tmp_path, name):
    text, expected = CASES[name]
    assert str(load_error(tmp_path, text)) == expected


def test_good_derivatives_load(tmp_path):
    text = functional(
        '  derivatives:\n    self: "sum_to(grad * conj(other), self)"\n    other: non_differentiable\n'
    )
    group = next(g for g in load_manifest(write_manifest(tmp_path, text)).groups if g.autograd)
    assert [g.inputs for g in group.autograd.gradients] == [("self",)]


def test_a_pointwise_op_needs_no_key_and_a_written_one_overrides(tmp_path):
    text = (
        "- func: sq.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
        '  pointwise: "self * self"\n'
        "- func: sq(Tensor self) -> Tensor\n  structured_delegate: sq.out\n"
    )
    group, backward = load_manifest(write_manifest(tmp_path, text)).groups
    (g,) = group.autograd.gradients
    assert g.derived and g.text == "sum_to(grad * conj(self + self), self)"
    # the gradient is one pointwise formula: a generated op computes it in one pass
    assert (backward.name, backward.backward_of, g.fused) == ("_sq_backward_self", "sq", "_sq_backward_self")
    assert backward.out.pointwise.formula == "grad * conj(self + self)" and g.kernel_sum_to
    text += '  derivatives: {self: "2 * grad * self"}\n'
    group, backward = load_manifest(write_manifest(tmp_path, text)).groups
    (g,) = group.autograd.gradients
    assert not g.derived and g.text == "2 * grad * self"
    assert backward.out.pointwise.formula == "(2 * grad) * self" and not g.kernel_sum_to
