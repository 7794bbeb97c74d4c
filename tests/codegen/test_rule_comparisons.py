"""Comparisons of numbers and dtypes in rules: a Scalar or float argument against a number
(cdist's ``p >= 0``), ``int(x)`` reading a Scalar as torch's integral paths do, and a tensor's
dtype against a named one (hardtanh's ``dtype(self) != uint8``), printed as C++ that compares
them exactly; and the messages for what cannot be compared."""

import pytest
from structgen.codegen.gen import generate
from structgen.codegen.manifest import load_manifest

from tests.codegen.manifest_helpers import load_error, write_manifest
from tests.codegen.test_rule_errors import OP, at, entry

FLOAT_OP = "myop.out(Tensor self, float p, ScalarType dtype, *, Tensor(a!) out) -> Tensor(a!)"


def _meta(tmp_path, checks: str, func: str = OP) -> str:
    text = entry(f'shape:\n  out: "[*self]"\nchecks: {checks}\n', func=func)
    out = tmp_path / "generated"
    generate(load_manifest(write_manifest(tmp_path, text)), out, shards=1)
    (meta,) = [p.read_text() for p in sorted((out / "src").glob("meta_*.cpp"))]
    return meta


def test_scalar_and_dtype_comparisons_print_exact_cpp(tmp_path):
    meta = _meta(tmp_path, '["alpha >= 0", "int(alpha) != 1", "dtype(self) != uint8", "1 < alpha"]')
    assert 'rules::compare(op, alpha, ">=", rules::number(c10::SymInt(0)))' in meta
    assert "(c10::SymInt(alpha.toLong()) != c10::SymInt(1))" in meta
    assert "(self.scalar_type() != at::kByte)" in meta
    assert 'rules::compare(op, rules::number(c10::SymInt(1)), "<", alpha)' in meta
    # A failed check shows the Scalar it read.
    assert '" alpha=", rules::show(alpha)' in meta


def test_float_and_scalartype_arguments_compare(tmp_path):
    meta = _meta(tmp_path, '["p >= 0", "dtype == float32 or dtype(self) == dtype"]', func=FLOAT_OP)
    assert 'rules::compare(op, at::Scalar(p), ">=", rules::number(c10::SymInt(0)))' in meta
    assert "((dtype == at::kFloat) || (self.scalar_type() == dtype))" in meta


DTYPES_FIX = " — compare two dtypes with == or !=: 'dtype(self) != uint8'"
CASES = {
    "dtypes_ordered": (
        '["dtype(self) < float32"]',
        "'dtype(self) < float32' compares a dtype with something else, or orders dtypes" + DTYPES_FIX,
    ),
    "dtype_against_a_number": (
        '["dtype(self) == 1"]',
        "'dtype(self) == 1' compares a dtype with something else, or orders dtypes" + DTYPES_FIX,
    ),
    "scalar_against_a_shape": (
        '["alpha == self"]',
        "'alpha == self' compares a Scalar with a Tensor"
        + " — compare a Scalar or float with a number, an int or another Scalar: 'p >= 0'",
    ),
    "int_of_a_tensor": (
        '["int(self) > 0"]',
        "int() takes (a Scalar), got (a Tensor) — see int() in docs/rules.md",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_comparison_message(tmp_path, name):
    checks, problem = CASES[name]
    text = entry(f'shape:\n  out: "[*self]"\nchecks: {checks}\n')
    assert str(load_error(tmp_path, text)) == at(7, problem)


def test_dtype_comparison_outside_checks(tmp_path):
    text = entry('shape:\n  out: "[*self] if dtype(self) == float32 else [1]"\n')
    assert str(load_error(tmp_path, text)) == at(
        6,
        "'dtype(self) == float32' compares dtypes outside meta.checks — move the condition to meta.checks",
    )
