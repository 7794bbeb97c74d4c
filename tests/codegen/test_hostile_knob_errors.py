"""tests.hostile (the hostile check's knob, docs/numerics.md) and tests.vmap_loops: each malformed
item stops the manifest with file:line: op: problem — fix, and nothing is written."""

import pytest

from tests.codegen.manifest_helpers import load_error

# Each item on neg's tests.
_NEG_TESTS = "- func: neg(Tensor self) -> Tensor\n  dispatch: {CPU: a}\n  tests:\n    reference: torch.neg\n"
_AT_NEG = "native_functions.yaml:3: neg(Tensor self) -> Tensor: "
_EXAMPLE = '{samples: "^value=0.33", differs: refuses, why: "torch truncates it"}'
CASES = {
    name: (f"{_NEG_TESTS}    hostile: {item}\n", _AT_NEG + message)
    for name, item, message in [
        (
            "hostile_not_a_list",
            "{samples: x, differs: values, why: w}",
            f"'tests.hostile' must be a list of differences — write e.g. [{_EXAMPLE}]",
        ),
        (
            "hostile_missing_why",
            "[{samples: x, differs: values}]",
            (
                "each tests.hostile item needs 'samples', 'differs' and 'why' (and may give 'dtypes',"
                f" 'devices', 'tolerance', 'of') — write e.g. {_EXAMPLE}"
            ),
        ),
        (
            "hostile_unknown_difference",
            "[{samples: x, differs: wrong, why: w}]",
            "tests.hostile: unknown difference 'wrong' — use one of: refuses, zero_signs, values, accuracy",
        ),
        (
            "hostile_bad_regex",
            '[{samples: "(x", differs: values, why: w}]',
            (
                "tests.hostile: 'samples' is no regex (missing ), unterminated subpattern at position 0)"
                " — fix the regex"
            ),
        ),
        (
            "hostile_accuracy_without_tolerance",
            "[{samples: x, differs: accuracy, why: w}]",
            (
                "tests.hostile: 'differs: accuracy' takes a 'tolerance: [atol, rtol]' (and only it does)"
                " — write e.g. {samples: '.', differs: accuracy, tolerance: [1e-6, 0], why: ...}"
            ),
        ),
        (
            "hostile_bad_device",
            "[{samples: x, differs: values, why: w, devices: [tpu]}]",
            "tests.hostile: 'devices' must list cpu, cuda or both — write e.g. devices: [cuda]",
        ),
        (
            "hostile_of_not_gradients",
            "[{samples: x, differs: accuracy, tolerance: [0, 1], of: forward, why: w}]",
            (
                "tests.hostile: 'of: gradients' scopes an accuracy entry to the op's generated gradients"
                " — write e.g. {samples: '.', differs: accuracy, tolerance: [0, 1e-5], of: gradients,"
                " why: ...}"
            ),
        ),
    ]
}
_VMAP_FIX = 'write e.g. vmap_loops: {calls: every, why: "no batched sibling: meta.vmap_as would give one"}'
CASES |= {
    name: (
        f"{_NEG_TESTS}    vmap_loops: {item}\n",
        _AT_NEG + "'tests.vmap_loops' must give 'calls' (every or others) and 'why' the op has no batched "
        "form — " + _VMAP_FIX,
    )
    for name, item in [
        ("vmap_loops_no_why", "{calls: every}"),
        ("vmap_loops_bad_calls", "{calls: some, why: w}"),
    ]
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_malformed_hostile_item_message(tmp_path, name):
    text, expected = CASES[name]
    assert str(load_error(tmp_path, text)) == expected
