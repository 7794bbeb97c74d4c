"""Manifests a fuzz campaign found to crash the generator or to be accepted with output that does
not build or is wrong: each now stops with file:line: op: problem — fix, and nothing is written."""

import pytest

from codegen.gen import generate
from codegen.manifest import load_manifest
from tests.codegen.manifest_helpers import load_error, run_cli, write_manifest

NEG = "- func: neg(Tensor self) -> Tensor\n  dispatch: {CPU: neg_cpu}\n"

CASES = {
    # -- YAML the loader turned into tracebacks
    "complex_key": (
        NEG + "  ? [a, b]\n  : 1\n",
        "native_functions.yaml:3: a mapping key must be a name, not a list or a mapping — write 'key: value'",
    ),
    "control_character_in_file": (
        NEG + "  doc: a\x01b\n",
        "native_functions.yaml:3: invalid YAML: control character '\\x01' in the file — remove it",
    ),
    "entry_not_a_mapping": (
        NEG + "- 5\n",
        (
            "native_functions.yaml:3: entry is a scalar, not a mapping — write each entry as '- func: <schema>' "
            "followed by its keys"
        ),
    ),
    "entry_is_a_list": (
        NEG + NEG + "- [a]\n",
        (
            "native_functions.yaml:5: entry is a list, not a mapping — write each entry as '- func: <schema>' "
            "followed by its keys"
        ),
    ),
    "alias": (
        (
            "- func: neg(Tensor self) -> Tensor\n  dispatch: &d {CPU: a}\n- func: neg.x(Tensor self) -> Tensor\n"
            "  dispatch: *d\n"
        ),
        "native_functions.yaml:4: YAML aliases are not supported — write the value out",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_message(tmp_path, name):
    text, expected = CASES[name]
    assert str(load_error(tmp_path, text)) == expected


def test_alias_bomb_stops_at_once(tmp_path):
    """10 nested levels of 9 aliases each: 9**10 strings if expanded (19 s, then MemoryError)."""
    levels = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    levels += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 11)]
    text = NEG + "  doc:\n" + "".join(f"    {line}\n" for line in levels)
    proc, out = run_cli(tmp_path, text)
    assert proc.returncode == 2
    assert (
        proc.stderr.strip() == "native_functions.yaml:5: YAML aliases are not supported — write the value out"
    )
    assert not out.exists()


def test_long_values_are_cut_in_messages(tmp_path):
    message = str(load_error(tmp_path, NEG + "  structured: " + "x" * 100_000 + "\n"))
    assert message == (
        "native_functions.yaml:3: neg(Tensor self) -> Tensor: 'structured' must be true or false, got '"
        + "x" * 500
        + "…' — write 'structured: True'"
    )


# -- keys of the wrong type that raised AttributeError / TypeError

NEG_OUT = "- func: neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n  dispatch: {CPU: neg_out_cpu}\n"
NEG_OUT_OP = "neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"

CASES.update(
    {
        "tests_tolerance_not_a_mapping": (
            NEG + "  tests: {reference: torch.neg, tolerance: 5}\n",
            (
                "native_functions.yaml:3: neg(Tensor self) -> Tensor: 'tests.tolerance' must map dtypes to [atol, rtol] — "
                "write e.g. {float16: [1e-3, 1e-3]}"
            ),
        ),
        "tests_errors_not_a_list": (
            NEG + "  tests: {reference: torch.neg, errors: 5}\n",
            (
                "native_functions.yaml:3: neg(Tensor self) -> Tensor: 'tests.errors' must be a list of error cases — "
                'write e.g. [{args: "torch.ones(2), torch.ones(3)", match: "size"}]'
            ),
        ),
        "kernels_without_value": (
            NEG_OUT + "  meta: {shape: {out: self}}\n  kernels:\n",
            (
                f"native_functions.yaml:5: {NEG_OUT_OP}: 'kernels' must map 'key' and dispatch keys to variant lists — "
                "write e.g. 'kernels: {key: \"[bucket_pow2(numel(out))]\", CPU: [{name: a, kernel: a_cpu}, ...]}'"
            ),
        ),
    }
)


# -- expressions nested deeper than Python's stack (RecursionError): bounded at 64 levels

POINTWISE = "- func: e.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n  pointwise: "


def _deep(text: str) -> str:
    return f"'{text[:500]}…'" if len(text) > 500 else f"'{text}'"


@pytest.mark.parametrize(
    "where, line, template, fix",
    [
        (
            "meta.shape.out",
            4,
            NEG_OUT + '  meta: {shape: {out: "EXPR"}}\n',
            "see docs/rules.md for the syntax",
        ),
        (
            "meta.checks",
            6,
            NEG_OUT + '  meta:\n    shape: {out: self}\n    checks: ["EXPR > 0"]\n',
            "see docs/rules.md for the syntax",
        ),
        ("pointwise", 3, POINTWISE + '"EXPR"\n', "see docs/pointwise.md for the formula syntax"),
    ],
)
def test_deep_nesting_is_a_message(tmp_path, where, line, template, fix):
    op = "e.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)" if where == "pointwise" else NEG_OUT_OP
    parens = "(" * 400 + "self" + ")" * 400
    assert str(load_error(tmp_path, template.replace("EXPR", parens))) == (
        f"native_functions.yaml:{line}: {op}: {where}: cannot parse {_deep(parens)}: nested more than 64 levels deep "
        f"at column 65 — {fix}"
    )
    chain = " + ".join(["self"] * 1000)
    assert str(load_error(tmp_path, template.replace("EXPR", chain))) == (
        f"native_functions.yaml:{line}: {op}: {where}: cannot parse {_deep(chain)}: nested more than 64 levels deep "
        f"(each operator of a chain is a level) — {fix}"
    )


def test_nesting_up_to_the_bound_generates(tmp_path):
    """Nesting just under the bound: the whole generator (parse, lower, render) copes."""
    nested = "(" * 62 + "self" + ")" * 62
    path = write_manifest(
        tmp_path,
        NEG_OUT
        + f'  meta:\n    shape: {{out: "{nested}"}}\n    checks: ["'
        + " + ".join(["ndim(self)"] * 60)
        + ' >= 0"]\n'
        + POINTWISE
        + '"'
        + "(" * 62
        + "self * 2"
        + ")" * 62
        + '"\n',
    )
    generate(load_manifest(path), tmp_path / "generated", shards=2)
