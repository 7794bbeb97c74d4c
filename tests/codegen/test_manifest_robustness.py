"""Manifests a fuzz campaign found to crash the generator or to be accepted with output that does
not build or is wrong: each now stops with file:line: op: problem — fix, and nothing is written."""

import pytest

from tests.codegen.manifest_helpers import load_error, run_cli

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
