"""A bad `derivatives:` key stops the generator with file:line: op: problem — fix, and a good one
gives the op its gradients (docs/autograd.md)."""

from __future__ import annotations

import pytest

from codegen.manifest import load_manifest
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
        functional('  derivatives:\n    self: "grad * cosh(other)"\n    other: "grad"\n'),
        at(
            8,
            "self: unknown function cosh() — did you mean cos? the functions are listed in docs/autograd.md "
            "(codegen/autograd/functions.py)",
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
