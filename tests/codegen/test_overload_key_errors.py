"""Malformed overload keys, the ones that follow torch's overloads (scalar_of:, composite:,
spellings:): each stops with file:line: op: problem — fix (test_manifest_errors.py has the rest)."""

import pytest

from tests.codegen.manifest_helpers import load_error

EQ_OUT = (
    "- func: eq.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
    '  pointwise: "self == other"\n  meta:\n    dtype: {out: "promote(self, other, kind=ALWAYS_BOOL)"}\n'
)


def _eq_scalar(args: str, extra: str = "", name: str = "Scalar_out") -> str:
    """eq.Tensor_out, then a Scalar overload of it (lines 6-8) with ``args``."""
    return (
        EQ_OUT
        + f"- func: eq.{name}({args}, *, Tensor(a!) out) -> Tensor(a!)\n  structured: True\n"
        + "  scalar_of: eq.Tensor_out\n"
        + extra
    )


EQ_SCALAR_OP = "eq.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)"

SUM_DIM = (
    "- func: sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None)"
    " -> Tensor\n  dispatch: {CPU: sum_cpu}\n"
)
SUM_OP = "sum(Tensor self, *, ScalarType? dtype=None) -> Tensor"


def _sum_composite(call: str, extra: str = "") -> str:
    """sum.dim_IntList (lines 1-2), then sum(x) as a composite of it (lines 3-4)."""
    return SUM_DIM + f'- func: {SUM_OP}\n  composite: "{call}"\n' + extra


CDIST = "cdist(Tensor x1, Tensor x2, float p=2, int? compute_mode=None) -> Tensor"


def _cdist(spellings: str, again: str = "") -> str:
    """cdist (lines 1-3) with ``spellings`` (line 3), then ``again`` (a second entry, line 4-)."""
    return f"- func: {CDIST}\n  dispatch: {{CPU: cdist_cpu}}\n  spellings: {spellings}\n" + again


CLAMPS = (
    "- func: clamp_min.Tensor(Tensor self, Tensor min) -> Tensor\n  dispatch: {CPU: a}\n"
    "- func: clamp_max.Tensor(Tensor self, Tensor max) -> Tensor\n  dispatch: {CPU: b}\n"
)
CLAMP = "clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor"


def _clamp_cases(*cases: str) -> str:
    """clamp_min.Tensor and clamp_max.Tensor (lines 1-4), then clamp.Tensor (line 5) of ``cases``."""
    return CLAMPS + f"- func: {CLAMP}\n  composite:\n" + "".join(f"  - {c}\n" for c in cases)


CASES = {
    "composite_case_given_not_optional": (
        _clamp_cases('{given: [self], call: "clamp_min.Tensor(self, min)"}'),
        (
            f"native_functions.yaml:5: {CLAMP}: composite: given: 'self' is not an optional argument of"
            " 'clamp.Tensor' — name optional arguments the call needs given"
        ),
    ),
    "composite_case_drops_a_given_argument": (
        _clamp_cases(
            '{given: [min], call: "clamp_min.Tensor(self, min)"}',
            '{given: [max], call: "clamp_max.Tensor(self, max)"}',
        ),
        (
            f"native_functions.yaml:5: {CLAMP}: composite: the case 'clamp_min.Tensor' does not use 'max',"
            " which may be given when it runs — put a case with given: [min, max] before it"
        ),
    ),
    "composite_case_unconditional_before_others": (
        _clamp_cases(
            '{call: "clamp_min.Tensor(self, min)"}',
            '{given: [max], call: "clamp_max.Tensor(self, max)"}',
        ),
        (
            f"native_functions.yaml:5: {CLAMP}: composite: the case 'clamp_min.Tensor' needs nothing given,"
            " so the cases after it never run — make it the last case"
        ),
    ),
    "composite_case_not_a_mapping": (
        _clamp_cases('"clamp_min.Tensor(self, min)"'),
        (
            f"native_functions.yaml:6: {CLAMP}: composite: the case 'clamp_min.Tensor(self, min)' is not"
            " {given: [names], call: text} — write a call, or cases such as [{given: [min], call:"
            " 'clamp_min.Tensor(self, min)'}]"
        ),
    ),
    "spellings_unknown_argument": (
        _cdist("{mode: {fast: 1}}"),
        (
            f"native_functions.yaml:3: {CDIST}: spellings: 'mode' is not an argument — use one of: x1, x2, p,"
            " compute_mode"
        ),
    ),
    "spellings_of_a_tensor": (
        _cdist("{x1: {fast: 1}}"),
        (
            f"native_functions.yaml:3: {CDIST}: spellings: 'x1' is Tensor; only int, float and Scalar"
            " arguments take spelled values — remove 'x1'"
        ),
    ),
    "spellings_value_does_not_fit": (
        _cdist("{compute_mode: {fast: 1.5}}"),
        (
            f"native_functions.yaml:3: {CDIST}: spellings: 'fast' stands for 1.5, which is not a text and a"
            " value of 'compute_mode' (int?) — map a text to a number of the argument's type (null where the"
            " argument is optional)"
        ),
    ),
    "spellings_null_for_a_required_argument": (
        _cdist("{p: {euclid: null}}"),
        (
            f"native_functions.yaml:3: {CDIST}: spellings: 'euclid' stands for None, which is not a text"
            " and a value of 'p' (float) — map a text to a number of the argument's type (null where the"
            " argument is optional)"
        ),
    ),
    "spellings_twice": (
        _cdist(
            "{compute_mode: {mm: 1}}",
            "- func: cdist.other(Tensor x1, Tensor x2, int? compute_mode=None) -> Tensor\n"
            "  dispatch: {CPU: cdist_other_cpu}\n  spellings: {compute_mode: {mm: 1}}\n",
        ),
        (
            "native_functions.yaml:4: cdist.other(Tensor x1, Tensor x2, int? compute_mode=None) -> Tensor:"
            " 'cdist' has spellings on line 1 already — declare a name's spellings once; they apply to all"
            " its overloads"
        ),
    ),
    "spellings_argument_moves": (
        _cdist(
            "{compute_mode: {mm: 1}}",
            "- func: cdist.other(Tensor x1, Tensor x2, int? compute_mode=None) -> Tensor\n"
            "  dispatch: {CPU: cdist_other_cpu}\n",
        ),
        (
            "native_functions.yaml:4: cdist.other(Tensor x1, Tensor x2, int? compute_mode=None) -> Tensor:"
            " 'compute_mode' has spellings (line 1) but is not argument 4 here as there — give 'compute_mode'"
            " one position in every overload of cdist"
        ),
    ),
    "composite_not_a_call": (
        _sum_composite("sum.dim_IntList"),
        (
            f"native_functions.yaml:4: {SUM_OP}: composite: 'sum.dim_IntList' is not a call — write a"
            " call such as 'sum.dim_IntList(self, None, False, dtype=dtype)'"
        ),
    ),
    "composite_unknown_target": (
        _sum_composite("sum.dim(self, None, False, dtype=dtype)"),
        (
            f"native_functions.yaml:3: {SUM_OP}: composite: 'sum.dim' is not declared — call a declared"
            " overload"
        ),
    ),
    "composite_unknown_name": (
        _sum_composite("sum.dim_IntList(self, None, False, dtype=dtyp)"),
        (
            f"native_functions.yaml:3: {SUM_OP}: composite: 'dtyp' is not an argument of 'sum' — use one of:"
            " self, dtype"
        ),
    ),
    "composite_unused_argument": (
        _sum_composite("sum.dim_IntList(self, None, False)"),
        (
            f"native_functions.yaml:3: {SUM_OP}: composite: the call does not use 'dtype' — pass every"
            " argument of the overload on"
        ),
    ),
    "composite_value_does_not_fit": (
        _sum_composite("sum.dim_IntList(self, True, False, dtype=dtype)"),
        (
            f"native_functions.yaml:3: {SUM_OP}: composite: the value for 'dim' (int[1]?) does not fit it —"
            " match 'sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType?"
            " dtype=None) -> Tensor'"
        ),
    ),
    "composite_promoted_of_tensors": (
        _sum_composite("sum.dim_IntList(promoted(self, dtype), None, False, dtype=dtype)"),
        (
            f"native_functions.yaml:3: {SUM_OP}: composite: the value for 'self' (Tensor) does not fit it —"
            " match 'sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType?"
            " dtype=None) -> Tensor'"
        ),
    ),
    "composite_promoted_arity": (
        _sum_composite("sum.dim_IntList(promoted(self), None, False, dtype=dtype)"),
        (
            f"native_functions.yaml:4: {SUM_OP}: composite: 'promoted(self)' must name two Scalar arguments"
            " — write promoted(self, other)"
        ),
    ),
    "composite_with_kernels": (
        _sum_composite("sum.dim_IntList(self, None, False, dtype=dtype)", "  dispatch: {CPU: sum_all_cpu}\n"),
        (
            f"native_functions.yaml:5: {SUM_OP}: 'dispatch' does not go with 'composite' (the target's"
            " kernels and derivatives serve the call) — remove 'dispatch'"
        ),
    ),
    "scalar_of_missing_target": (
        _eq_scalar("Tensor self, Scalar other").replace(
            "scalar_of: eq.Tensor_out", "scalar_of: eq.Tensor_outt"
        ),
        (
            f"native_functions.yaml:8: {EQ_SCALAR_OP}: 'scalar_of: eq.Tensor_outt' names no structured"
            " pointwise out= overload — name one of: eq.Tensor_out"
        ),
    ),
    # A meta key that is no mapping: the target's raised TypeError, the overload's was dropped.
    "scalar_of_target_meta_not_a_mapping": (
        _eq_scalar("Tensor self, Scalar other").replace(
            '  meta:\n    dtype: {out: "promote(self, other, kind=ALWAYS_BOOL)"}\n', "  meta: true\n"
        ),
        (
            "native_functions.yaml:4: eq.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out) ->"
            " Tensor(a!): 'meta' must be a rule mapping or 'custom', got True — write 'meta: {shape: {out:"
            " \"broadcast(self, other)\"}}' or 'meta: custom'"
        ),
    ),
    "scalar_of_own_meta_not_a_mapping": (
        _eq_scalar("Tensor self, Scalar other", "  meta: [1]\n"),
        (
            f"native_functions.yaml:9: {EQ_SCALAR_OP}: 'meta' must be a rule mapping or 'custom', got [1] —"
            " write 'meta: {shape: {out: \"broadcast(self, other)\"}}' or 'meta: custom'"
        ),
    ),
    "scalar_of_inherited_key": (
        _eq_scalar("Tensor self, Scalar other", "  pointwise: 'self != other'\n"),
        (
            f"native_functions.yaml:9: {EQ_SCALAR_OP}: 'pointwise' comes from 'eq.Tensor_out' (scalar_of)"
            " — remove it; edit 'eq.Tensor_out' instead"
        ),
    ),
    "scalar_of_renamed_argument": (
        _eq_scalar("Tensor self, Scalar value"),
        (
            "native_functions.yaml:8: eq.Scalar_out(Tensor self, Scalar value, *, Tensor(a!) out) ->"
            " Tensor(a!): its arguments are not those of 'eq.Tensor_out' (Tensor self, Tensor other, *,"
            " Tensor(a!) out) — use the same argument names in the same order, with Scalar for the tensors"
            " taken as numbers"
        ),
    ),
    "scalar_of_other_type": (
        _eq_scalar("Tensor self, int other"),
        (
            "native_functions.yaml:8: eq.Scalar_out(Tensor self, int other, *, Tensor(a!) out) -> Tensor(a!):"
            " argument 'other' is int but 'eq.Tensor_out' takes Tensor — write 'Tensor other', or 'Scalar"
            " other' where the target takes a Tensor"
        ),
    ),
    "python_name_not_a_name": (
        f"- func: {CDIST}\n  dispatch: {{CPU: cdist_cpu}}\n  python_name: native-cdist\n",
        (
            f"native_functions.yaml:3: {CDIST}: python_name 'native-cdist' is not a Python name — write e.g."
            " python_name: native_layer_norm"
        ),
    ),
    "python_name_differs_between_overloads": (
        (
            f"- func: {CDIST}\n  dispatch: {{CPU: cdist_cpu}}\n  python_name: native_cdist\n"
            "- func: cdist.one(Tensor x1) -> Tensor\n  dispatch: {CPU: one}\n  python_name: pairwise\n"
        ),
        (
            "native_functions.yaml:4: cdist.one(Tensor x1) -> Tensor: python_name 'pairwise' differs from"
            " 'native_cdist' (line 1), and cdist's overloads share one Python function — give the python_name"
            " once, or the same on each overload"
        ),
    ),
    "python_name_of_another_op": (
        (
            f"- func: {CDIST}\n  dispatch: {{CPU: cdist_cpu}}\n  python_name: dist\n"
            "- func: dist(Tensor self) -> Tensor\n  dispatch: {CPU: dist}\n"
        ),
        (
            f"native_functions.yaml:1: {CDIST}: python_name 'dist' is the Python name of 'dist' (line 4) —"
            " choose a name no op of the manifest has"
        ),
    ),
    "scalar_of_no_number": (
        _eq_scalar("Tensor self, Tensor other", name="Same_out"),
        (
            "native_functions.yaml:8: eq.Same_out(Tensor self, Tensor other, *, Tensor(a!) out) ->"
            " Tensor(a!): no argument is a Scalar where 'eq.Tensor_out' takes a Tensor — declare the number"
            " arguments as 'Scalar', or remove 'scalar_of'"
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_malformed_overload_key_message(tmp_path, name):
    text, expected = CASES[name]
    assert str(load_error(tmp_path, text)) == expected
