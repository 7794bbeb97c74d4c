"""Manifests a fuzz campaign found to crash the generator or to be accepted with output that does
not build or is wrong: each now stops with file:line: op: problem — fix, and nothing is written."""

import ast

import pytest
from structgen.codegen.gen import generate
from structgen.codegen.manifest import load_manifest

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
            "native_functions.yaml:3: entry is a scalar, not a mapping — write each entry as '- func:"
            " <schema>' followed by its keys"
        ),
    ),
    "entry_is_a_list": (
        NEG + NEG + "- [a]\n",
        (
            "native_functions.yaml:5: entry is a list, not a mapping — write each entry as '- func: <schema>'"
            " followed by its keys"
        ),
    ),
    "alias": (
        (
            "- func: neg(Tensor self) -> Tensor\n  dispatch: &d {CPU: a}\n- func: neg.x(Tensor self) ->"
            " Tensor\n  dispatch: *d\n"
        ),
        "native_functions.yaml:4: YAML aliases are not supported — write the value out",
    ),
}


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

NEG_OUT = (
    "- func: neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n  dispatch: {CPU:"
    " neg_out_cpu}\n"
)
NEG_OUT_OP = "neg.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)"

CASES.update(
    {
        "tests_tolerance_not_a_mapping": (
            NEG + "  tests: {reference: torch.neg, tolerance: 5}\n",
            (
                "native_functions.yaml:3: neg(Tensor self) -> Tensor: 'tests.tolerance' must map dtypes to"
                " [atol, rtol] — write e.g. {float16: [1e-3, 1e-3]}"
            ),
        ),
        "tests_errors_not_a_list": (
            NEG + "  tests: {reference: torch.neg, errors: 5}\n",
            (
                "native_functions.yaml:3: neg(Tensor self) -> Tensor: 'tests.errors' must be a list of"
                ' error cases — write e.g. [{args: "torch.ones(2), torch.ones(3)", match: "size"}]'
            ),
        ),
        "kernels_without_value": (
            NEG_OUT + "  meta: {shape: {out: self}}\n  kernels:\n",
            (
                f"native_functions.yaml:5: {NEG_OUT_OP}: 'kernels' must map 'key' and dispatch keys to"
                ' variant lists — write e.g. \'kernels: {key: "[bucket_pow2(numel(out))]", CPU: [{name:'
                " a, kernel: a_cpu}, ...]}'"
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
    assert (
        str(load_error(tmp_path, template.replace("EXPR", parens)))
        == f"native_functions.yaml:{line}: {op}: {where}: cannot parse {_deep(parens)}: nested more than 64"
        f" levels deep at column 65 — {fix}"
    )
    chain = " + ".join(["self"] * 1000)
    assert (
        str(load_error(tmp_path, template.replace("EXPR", chain)))
        == f"native_functions.yaml:{line}: {op}: {where}: cannot parse {_deep(chain)}: nested more than 64"
        f" levels deep (each operator of a chain is a level) — {fix}"
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


# -- accepted, but the generated Python or C++ would not parse or compile

NEG_OUT_CUSTOM = NEG_OUT + "  meta: custom\n"
ADD_OUT = (
    "- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)\n"
    "  structured: True\n  dispatch: {CPU: add_out_cpu}\n  meta: custom\n"
)


def _neg(args: str, kernel: str = "neg_cpu") -> str:
    return f"- func: neg(Tensor self{args}) -> Tensor\n  dispatch: {{CPU: {kernel}}}\n"


CASES.update(
    {
        "doc_control_character": (
            NEG + '  doc: "a\\0b"\n',
            (
                "native_functions.yaml:3: neg(Tensor self) -> Tensor: 'doc' contains the control character"
                " '\\x00' — remove it (a docstring may hold newlines and tabs)"
            ),
        ),
        "argument_python_keyword": (
            _neg(", int lambda"),
            (
                "native_functions.yaml:1: neg(Tensor self, int lambda) -> Tensor: argument name 'lambda' is a"
                " Python keyword — rename the argument (<package>.<op> takes it as a Python parameter)"
            ),
        ),
        "operator_python_keyword": (
            "- func: class(Tensor self) -> Tensor\n  dispatch: {CPU: class_cpu}\n",
            (
                "native_functions.yaml:1: class(Tensor self) -> Tensor: operator name 'class' is a Python"
                " keyword — rename the operator (<package>.<name> must be a Python name)"
            ),
        ),
        "default_before_non_default": (
            _neg(", int a=1, int b"),
            (
                "native_functions.yaml:1: neg(Tensor self, int a=1, int b) -> Tensor: positional argument 'b'"
                " has no default but follows 'a', which has one — give 'b' a default, move it before 'a', or"
                " make it keyword-only (after '*')"
            ),
        ),
        "kernel_cpp_keyword": (
            _neg("", kernel="and"),
            (
                "native_functions.yaml:2: neg(Tensor self) -> Tensor: kernel name for CPU must be a C++"
                " identifier, got 'and' (a C++ keyword) — name the function defined in csrc/, e.g."
                " 'add_out_cpu'"
            ),
        ),
        "kernel_cpp20_keyword": (
            _neg("", kernel="co_await"),
            (
                "native_functions.yaml:2: neg(Tensor self) -> Tensor: kernel name for CPU must be a C++"
                " identifier, got 'co_await' (a C++ keyword) — name the function defined in csrc/, e.g."
                " 'add_out_cpu'"
            ),
        ),
        "argument_is_a_generated_local": (
            _neg(", int op"),
            (
                "native_functions.yaml:1: neg(Tensor self, int op) -> Tensor: argument name 'op' is a name"
                " the generated C++ uses in the op's functions — rename the argument"
            ),
        ),
        "argument_with_generated_prefix": (
            _neg(", int so_meta"),
            (
                "native_functions.yaml:1: neg(Tensor self, int so_meta) -> Tensor: argument name 'so_meta'"
                " starts with 'so_', which the generated code's own names do — rename the argument"
            ),
        ),
        "argument_is_a_derived_local": (
            (
                "- func: neg.out(Tensor self, int out_shape, *, Tensor(a!) out) -> Tensor(a!)\n  structured:"
                " True\n  dispatch: {CPU: neg_out_cpu}\n  meta: custom\n"
            ),
            (
                "native_functions.yaml:1: neg.out(Tensor self, int out_shape, *, Tensor(a!) out) ->"
                " Tensor(a!): argument name 'out_shape' is the name the generated C++ gives a value of 'out'"
                " — rename the argument"
            ),
        ),
        "argument_is_a_generated_python_name": (
            _neg(", int _ops"),
            (
                "native_functions.yaml:1: neg(Tensor self, int _ops) -> Tensor: argument name '_ops' is a"
                " name the generated Python uses — rename the argument"
            ),
        ),
        "arguments_equal_after_keyword_rename": (
            _neg(", int new, int new_"),
            (
                "native_functions.yaml:1: neg(Tensor self, int new, int new_) -> Tensor: argument name 'new_'"
                " and 'new' are both 'new_' in C++ (a keyword gets a '_') — rename the argument"
            ),
        ),
        "list_functional_of_single_out": (
            NEG_OUT_CUSTOM + "- func: neg(Tensor self) -> Tensor[]\n  structured_delegate: neg.out\n",
            (
                "native_functions.yaml:5: neg(Tensor self) -> Tensor[]: returns a Tensor[] but 'neg.out'"
                " writes single tensors — return one Tensor per out argument, or give the out= overload one"
                " 'Tensor(a!)[] out'"
            ),
        ),
        # -- accepted, but wrong
        "shape_literal_beyond_int64": (
            NEG_OUT + '  meta: {shape: {out: "[99999999999999999999999]"}}\n',
            (
                f"native_functions.yaml:4: {NEG_OUT_OP}: meta.shape.out: cannot parse"
                " '[99999999999999999999999]': integer 99999999999999999999999 at column 2 is beyond the"
                " int64 range (at most 9223372036854775807) — see docs/rules.md for the syntax"
            ),
        ),
        "formula_literal_beyond_int64": (
            POINTWISE + '"self * 99999999999999999999"\n',
            (
                "native_functions.yaml:3: e.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!): pointwise:"
                " cannot parse 'self * 99999999999999999999': integer 99999999999999999999 at column 8 is"
                " beyond the int64 range (at most 9223372036854775807) — see docs/pointwise.md for the"
                " formula syntax"
            ),
        ),
        "delegate_positional_where_out_is_keyword_only": (
            ADD_OUT + "- func: add.Tensor(Tensor self, Tensor other, Scalar alpha=1) -> Tensor\n "
            " structured_delegate: add.out\n",
            (
                "native_functions.yaml:5: add.Tensor(Tensor self, Tensor other, Scalar alpha=1) -> Tensor:"
                " 'alpha' is positional here but keyword-only in 'add.out' — put the '*' at the same place in"
                " both schemas"
            ),
        ),
        "delegate_drops_write_annotation": (
            (
                "- func: bn.out(Tensor self, Tensor(a!) running, *, Tensor(b!) out) -> Tensor(b!)\n "
                " structured: True\n  dispatch: {CPU: bn_out_cpu}\n  meta: custom\n- func: bn(Tensor self,"
                " Tensor running) -> Tensor\n  structured_delegate: bn.out\n"
            ),
            (
                "native_functions.yaml:5: bn(Tensor self, Tensor running) -> Tensor: 'running' is written"
                " (Tensor(a!)) in 'bn.out' but not here — annotate 'running' as written in every variant of"
                " the op"
            ),
        ),
        "out_drops_write_annotation": (
            (
                "- func: bn.out(Tensor self, Tensor running, *, Tensor(b!) out) -> Tensor(b!)\n  structured:"
                " True\n  dispatch: {CPU: bn_out_cpu}\n  meta: custom\n- func: bn(Tensor self, Tensor(a!)"
                " running) -> Tensor\n  structured_delegate: bn.out\n"
            ),
            (
                "native_functions.yaml:1: bn.out(Tensor self, Tensor running, *, Tensor(b!) out) ->"
                " Tensor(b!): 'running' is written (Tensor(a!)) in 'bn' but not here — annotate 'running' as"
                " written in every variant of the op"
            ),
        ),
    }
)


def _generate(tmp_path, text: str):
    generate(load_manifest(write_manifest(tmp_path, text)), tmp_path / "generated", shards=2)
    return tmp_path / "generated"


def test_doc_with_backslashes_and_triple_quotes_is_a_valid_docstring(tmp_path):
    doc = 'x \\N{x} \\x """ end\\'
    out = _generate(tmp_path, NEG + "  doc: '" + doc + "'\n")
    tree = ast.parse((out / "python/ops/_ops.py").read_text())
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "neg")
    assert ast.get_docstring(fn).startswith(doc)


def test_cpp_keyword_arguments_get_an_underscore(tmp_path):
    """Every C++20 keyword and alternative token (not only the ~9 listed before) is renamed."""
    out = _generate(tmp_path, _neg(", int xor, int co_yield, int char8_t"))
    header = (out / "include/ops/ops/neg.h").read_text()
    assert "int64_t xor_, int64_t co_yield_, int64_t char8_t_" in header


def test_schema_that_would_end_the_raw_string(tmp_path):
    out = _generate(
        tmp_path, '- func: neg(Tensor self, str s=")schema") -> Tensor\n  dispatch: {CPU: neg_cpu}\n'
    )
    registration = (out / "src/registration.cpp").read_text()
    assert 'define(m, R"schema1(neg(Tensor self, str s=")schema") -> Tensor)schema1", {});' in registration


# Defined last: CASES grows through the file.
@pytest.mark.parametrize("name", sorted(CASES))
def test_message(tmp_path, name):
    text, expected = CASES[name]
    assert str(load_error(tmp_path, text)) == expected
