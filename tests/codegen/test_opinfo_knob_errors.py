"""tests.opinfo (which of torch's OpInfos an op answers to, and its known failures): each
malformed value stops the manifest with file:line: op: problem — fix, and nothing is written; a
good one is read into the model the OpInfo check uses."""

import pytest
from structgen.codegen.conformance import OpInfo, OpInfoDiffers
from structgen.codegen.manifest import load_manifest

from tests.codegen.manifest_helpers import load_error, write_manifest

_NEG_TESTS = "- func: neg(Tensor self) -> Tensor\n  dispatch: {CPU: a}\n  tests:\n    reference: torch.neg\n"
_AT_NEG = "native_functions.yaml:3: neg(Tensor self) -> Tensor: "
_EXAMPLE = 'write e.g. "opinfo: nn.functional.relu" or "opinfo: {none: <why>}"'
_SHAPE = f"'tests.opinfo' must be an OpInfo's name or a mapping of name, none, differs — {_EXAMPLE}"
_ONE_OF = "each tests.opinfo.differs item gives 'why' and one of 'failures', 'dtypes'"
_ITEM = 'write e.g. {dtypes: [complex64], why: "..."} or {failures: "<regex>", why: "..."}'
CASES = {
    "not_a_name": (
        "[a]",
        _SHAPE,
    ),
    "unknown_key": (
        "{names: a}",
        _SHAPE,
    ),
    "none_with_name": (
        "{none: why, name: a}",
        f"tests.opinfo: 'none' says there is no OpInfo: it takes no name or differs — {_EXAMPLE}",
    ),
    "empty_none": (
        "{none: ''}",
        f"tests.opinfo.none must say why no OpInfo calls this operator — {_EXAMPLE}",
    ),
    "empty_differs": ("{differs: []}", f"tests.opinfo.differs must be a non-empty list — {_ITEM}"),
    "item_without_why": (
        "{differs: [{dtypes: [int8]}]}",
        f"{_ONE_OF} — {_ITEM}",
    ),
    "item_with_both": (
        "{differs: [{dtypes: [int8], failures: x, why: w}]}",
        f"{_ONE_OF} — {_ITEM}",
    ),
    "unknown_dtype": (
        "{differs: [{dtypes: [int4], why: w}]}",
        (
            "tests.opinfo.differs: dtypes ['int4'] is not a list of dtype names — use: float32, float64,"
            " float16, bfloat16, complex64, int64, int32, int16, int8, uint8, bool, complex128"
        ),
    ),
    "bad_regex": (
        '{differs: [{failures: "(x", why: w}]}',
        (
            "tests.opinfo.differs: 'failures' is no regex (missing ), unterminated subpattern at position 0)"
            " — fix the regex"
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_malformed_opinfo_value_message(tmp_path, name):
    value, message = CASES[name]
    assert str(load_error(tmp_path, f"{_NEG_TESTS}    opinfo: {value}\n")) == _AT_NEG + message


def test_opinfo_values_are_read(tmp_path):
    text = (
        _NEG_TESTS
        + "    opinfo:\n      name: nn.functional.neg\n      differs:\n"
        + "      - {dtypes: [complex64, complex128], why: no complex}\n"
        + "      - {failures: 'index \\d', why: checked}\n"
    )
    (fn,) = load_manifest(write_manifest(tmp_path, text)).functions
    assert fn.tests.opinfo == OpInfo(
        "nn.functional.neg",
        None,
        (
            OpInfoDiffers(None, ("complex64", "complex128"), "no complex"),
            OpInfoDiffers("index \\d", (), "checked"),
        ),
    )
    none = load_manifest(write_manifest(tmp_path, _NEG_TESTS + "    opinfo: {none: no such OpInfo}\n"))
    assert none.functions[0].tests.opinfo == OpInfo(None, "no such OpInfo")
