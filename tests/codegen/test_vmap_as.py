"""meta.vmap_as: the op that batches another when every tensor is batched (mm's bmm). What a
bad one says, what the rule module gets from a good one, and what vmap does with mm's."""

import pytest
import torch
from structgen import vmap
from structgen.codegen.dest.composites import composite_calls
from structgen.codegen.dest.rules_data import all_rule_data
from structgen.codegen.manifest import load_manifest

import structops
from structops import _rules
from tests.codegen.manifest_helpers import load_error, write_manifest

MM = "mymm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)"


def manifest(vmap_as: str, second: str = "mat2") -> str:
    """mymm with ``vmap_as``, and mybmm, whose second operand is named ``second``."""
    return (
        f"- func: {MM}\n  structured: True\n  dispatch: {{CPU: mymm_out_cpu}}\n  meta:\n"
        '    shape: {self: "[n, k]", mat2: "[k, m]", out: "[n, m]"}\n'
        "    combine: add\n"
        f"    vmap_as: {vmap_as}\n"
        "- func: mymm(Tensor self, Tensor mat2) -> Tensor\n  structured_delegate: mymm.out\n"
        "  derivatives: not_differentiable\n"
        f"- func: mybmm.out(Tensor self, Tensor {second}, *, Tensor(a!) out) -> Tensor(a!)\n"
        "  structured: True\n  dispatch: {CPU: mybmm_out_cpu}\n  meta:\n"
        f'    shape: {{self: "[b, n, k]", {second}: "[b, k, m]", out: "[b, n, m]"}}\n'
        "    combine: add\n"
        f"- func: mybmm(Tensor self, Tensor {second}) -> Tensor\n  structured_delegate: mybmm.out\n"
        "  derivatives: not_differentiable\n"
    )


def at(problem: str) -> str:
    return f"native_functions.yaml:7: {MM}: {problem}"


CASES = {
    "not_a_call": (
        "7",
        at(
            "meta.vmap_as must be a call of another op, or cases of calls, got 7 — write the call that"
            " computes a batch of these calls, e.g. 'bmm(self, mat2)' on mm"
        ),
    ),
    "a_name": (
        "mybmm",
        at("meta.vmap_as: 'mybmm' is not a call — write a call such as 'bmm(self, mat2)' on mm"),
    ),
    "unknown_op": (
        '"mybm(self, mat2)"',
        at(
            "meta.vmap_as: 'mybm' is not the functional overload of another structured op with a meta rule"
            " — call one declared in this manifest (did you mean 'mybmm'?)"
        ),
    ),
    "itself": (
        '"mymm(self, mat2)"',
        at(
            "meta.vmap_as: 'mymm' is not the functional overload of another structured op with a meta rule"
            " — call one declared in this manifest (did you mean 'mybmm'?)"
        ),
    ),
    "other_arguments": (
        '"mybmm(self, other=self)"',
        at("meta.vmap_as: the call does not use 'mat2' — pass every argument of the overload on"),
    ),
    "unknown_argument": (
        '"mybmm(self, mat3)"',
        at("meta.vmap_as: 'mat3' is not an argument of 'mymm' — use one of: self, mat2"),
    ),
    "not_a_tensor": (
        '"mybmm(self, 1)"',
        at(
            "meta.vmap_as: the value for 'other' (Tensor) does not fit it — match 'mybmm(Tensor self, "
            "Tensor other) -> Tensor'"
        ),
    ),
}


NORM = "mynorm.out(Tensor self, Tensor? weight, Tensor? bias, *, Tensor(a!) out) -> Tensor(a!)"
AFFINE_CASES = {
    "not_a_formula": (
        '"out + bias"',
        (
            "meta.affine must be '<output> * <weight> [+ <bias>]', got 'out + bias' — write the output,"
            " the scale and the shift, e.g. 'affine: \"out * weight + bias\"'"
        ),
    ),
    "unknown_output": (
        '"result * weight + bias"',
        "meta.affine: 'result' is not an output — name one of: out",
    ),
    "required_tensor": (
        '"out * self + bias"',
        (
            "meta.affine: 'self' is not an optional tensor argument — name the Tensor? arguments that"
            " scale and shift the output (vmap calls the op without them)"
        ),
    ),
}


@pytest.mark.parametrize("name", sorted(AFFINE_CASES))
def test_bad_affine_message(tmp_path, name):
    """meta.affine (layer_norm's out * weight + bias, what vmap batches per-example weights by)."""
    affine, expected = AFFINE_CASES[name]
    text = (
        f"- func: {NORM}\n  structured: True\n  dispatch: {{CPU: mynorm_out_cpu}}\n  meta:\n"
        f'    shape: {{out: "[*self]"}}\n    affine: {affine}\n'
    )
    assert str(load_error(tmp_path, text)) == f"native_functions.yaml:6: {NORM}: {expected}"


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_vmap_as_message(tmp_path, name):
    vmap_as, expected = CASES[name]
    text = manifest(vmap_as, "mat2" if name in ("a_name", "unknown_op", "itself") else "other")
    assert str(load_error(tmp_path, text)) == expected


def test_vmap_as_reaches_the_rule_module(tmp_path):
    """Each case: the optionals it needs given, the sibling, and its arguments by the sibling's
    names: this op's argument passed on, it transposed, or a constant."""
    mm, bmm = all_rule_data(
        load_manifest(write_manifest(tmp_path, manifest('"mybmm(mat2=mat2, self=self)"')))
    )
    assert (mm.vmap_as, bmm.vmap_as) == ((((), "mybmm.default", {"self": "self", "mat2": "mat2"}),), None)
    assert _rules.RULES["addmm"]["vmap_as"] == (
        (
            (),
            "baddbmm.default",
            {"self": "self", "batch1": "mat1", "batch2": "mat2", "beta": "beta", "alpha": "alpha"},
        ),
    )
    assert _rules.RULES["linear"]["vmap_as"] == (
        (
            ("bias",),
            "baddbmm.default",
            {"self": "bias", "batch1": "input", "batch2": ("mT", "weight"), "beta": 1, "alpha": 1},
        ),
        ((), "bmm.default", {"self": "input", "mat2": ("mT", "weight")}),
    )


def test_a_vmap_as_case_that_never_runs_is_refused(tmp_path):
    text = manifest('[{call: "mybmm(self, mat2)"}, {given: [self], call: "mybmm(self, mat2)"}]')
    assert str(load_error(tmp_path, text)) == at(
        "meta.vmap_as: the case 'mybmm' needs nothing given, so the cases after it never run — make it the"
        " last case"
    )


@pytest.mark.parametrize("in_dims", [(0, 0), (2, 1)])
def test_mm_with_both_operands_batched_runs_one_bmm(in_dims, monkeypatch):
    """Per-example weights (model ensembling): one bmm, proven by describe(), equal to a loop."""
    g = torch.Generator().manual_seed(0)
    x, w = torch.randn(4, 3, 5, generator=g), torch.randn(4, 5, 2, generator=g)
    plan = vmap.plan("mm.default", {("self", None), ("mat2", None)}, 4, x[0], w[0])
    assert (plan.kind, plan.sibling) == ("prepend", "structops::bmm.default")
    calls, looked_up = [], vmap._functional_op
    monkeypatch.setattr(vmap, "_PLANS", {})
    monkeypatch.setattr(
        vmap, "_functional_op", lambda rule: calls.append(rule["functional"]) or looked_up(rule)
    )
    args = (x.movedim(0, in_dims[0]), w.movedim(0, in_dims[1]))
    got = torch.func.vmap(structops.mm, in_dims=in_dims)(*args)
    torch.testing.assert_close(got, torch.stack([x[b] @ w[b] for b in range(4)]))
    assert "bmm.default" in calls


def _record_calls(monkeypatch) -> list[str]:
    """The functional overloads vmap's rules call, in order (fresh plans)."""
    calls, looked_up = [], vmap._functional_op

    class Counted:  # the op, its calls recorded
        def __init__(counted, rule):
            counted.op, counted.name = looked_up(rule), rule["functional"]
            counted._schema = counted.op._schema

        def __call__(counted, *args, **kwargs):  # addmm's arguments include 'self'
            calls.append(counted.name)
            return counted.op(*args, **kwargs)

    monkeypatch.setattr(vmap, "_PLANS", {})
    monkeypatch.setattr(vmap, "_functional_op", Counted)
    return calls


@pytest.mark.parametrize("self_shape", [(3, 5), (5,), (3, 1), (1, 5), ()])
@pytest.mark.parametrize("batched", [("mat1", "mat2"), ("self", "mat1", "mat2"), ("self", "mat2")])
def test_addmm_with_batched_operands_runs_one_call(self_shape, batched, monkeypatch):
    """addmm's vmap_as passes its arguments on by other names (mat1 as batch1), its self padded to
    baddbmm's rank where it broadcasts ([5] as [B, 1, 5]): batched matrices run one baddbmm, any
    other batch one call of addmm or baddbmm, equal to a loop."""
    g = torch.Generator().manual_seed(1)
    args = {"self": torch.randn(self_shape, generator=g), "mat1": torch.randn(3, 4, generator=g)}
    args["mat2"] = torch.randn(4, 5, generator=g)
    stacked = {
        n: torch.stack([a * (b + 1) - b for b in range(4)]) if n in batched else a for n, a in args.items()
    }
    calls = _record_calls(monkeypatch)
    in_dims = tuple(0 if n in batched else None for n in args)
    got = torch.func.vmap(lambda s, a, b: structops.addmm(s, a, b, beta=0.5, alpha=2), in_dims=in_dims)(
        *stacked.values()
    )
    want = [
        torch.addmm(*(stacked[n][b] if n in batched else a for n, a in args.items()), beta=0.5, alpha=2)
        for b in range(4)
    ]
    torch.testing.assert_close(got, torch.stack(want))
    assert len(calls) == 1, calls
    if "mat1" in batched:
        assert calls == ["baddbmm.default"]


def test_mT_is_a_view_in_a_composite_call_too(tmp_path):
    """mT(name) is one value of the composite call syntax: a `composite:` overload may pass an
    argument transposed, printed as the tensor's mT() view."""
    text = manifest('"mybmm(self, mat2)"', "other") + (
        '- func: mymm_nt(Tensor self, Tensor mat2) -> Tensor\n  composite: "mymm(self, mT(mat2))"\n'
    )
    (call,) = composite_calls(load_manifest(write_manifest(tmp_path, text)))
    assert [c.args for c in call.cases] == ["self, mat2.mT()"]


def _assert_linear_runs_once(args: dict, batched, monkeypatch) -> None:
    """vmap of structops.linear over 3 elements of the ``batched`` arguments: one call of an op,
    equal to a loop of torch's linear."""
    stacked = {
        n: torch.stack([a * (b + 1) - b for b in range(3)]) if n in batched else a for n, a in args.items()
    }
    calls = _record_calls(monkeypatch)
    in_dims = tuple(0 if n in batched else None for n in args)
    got = torch.func.vmap(structops.linear, in_dims=in_dims)(*stacked.values())
    want = [
        torch.nn.functional.linear(*(stacked[n][b] if n in batched else a for n, a in args.items()))
        for b in range(3)
    ]
    torch.testing.assert_close(got, torch.stack(want))
    assert len(calls) == 1, calls


@pytest.mark.parametrize(
    ("bias_shape", "batched"),
    [
        *(
            (shape, b)
            for shape in ((5,), ())
            for b in (("input", "weight"), ("input", "weight", "bias"), ("weight", "bias"), ("input", "bias"))
        ),
        (None, ("input", "weight")),
    ],
)
@pytest.mark.parametrize("input_shape", [(4, 8), (2, 4, 8)])
def test_linear_with_per_example_weights_runs_one_call(input_shape, bias_shape, batched, monkeypatch):
    """Model ensembling: linear's vmap_as passes the weight transposed (mT) to baddbmm, or to bmm
    without a bias (its cases, by the optionals given), a 3-D input's leading dims collapsed
    first; one call equal to a loop."""
    g = torch.Generator().manual_seed(3)
    args = {"input": torch.randn(input_shape, generator=g), "weight": torch.randn(5, 8, generator=g)}
    args["bias"] = None if bias_shape is None else torch.randn(bias_shape, generator=g)
    _assert_linear_runs_once(args, batched, monkeypatch)


@pytest.mark.parametrize(
    ("shapes", "batched"),
    [
        (((3, 4), (4,), None), ("input", "weight")),  # a 1-D weight per example: [1, k] then bmm
        (((2, 3, 4), (5, 4), (1,)), ("bias",)),  # a [1] bias broadcast to the features
        (((2, 3, 4), (5, 4), (1,)), ("weight", "bias")),
    ],
)
def test_linear_size_1_axes_are_read_as_broadcast_in_the_proofs(shapes, batched, monkeypatch):
    """A size-1 axis reads its one element whether or not describe() steps it along a size-1 dim
    (linear's [1, k] weight does not, bmm's [k, 1] does): the proofs compare such axes as
    broadcast ones, so these calls run once, equal to a loop."""
    g = torch.Generator().manual_seed(6)
    args = {
        n: None if s is None else torch.randn(s, generator=g)
        for n, s in zip(("input", "weight", "bias"), shapes)
    }
    _assert_linear_runs_once(args, batched, monkeypatch)


def test_mT_of_an_optional_tensor_needs_a_case_that_gives_it(tmp_path):
    """mT(bias) of a Tensor? that may be None would transpose nothing: only a case that gives it."""
    linear = "mylin.out(Tensor input, Tensor weight, Tensor? bias=None, *, Tensor(a!) out) -> Tensor(a!)"
    text = manifest('"mybmm(self, mat2)"') + (
        f"- func: {linear}\n  structured: True\n  dispatch: {{CPU: mylin_out_cpu}}\n  meta:\n"
        '    shape: {input: "[r, k]", weight: "[n, k]", bias: "[n]", out: "[r, n]"}\n'
        '    vmap_as: "mybmm(input, mT(bias))"\n'
        "- func: mylin(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor\n"
        "  structured_delegate: mylin.out\n  derivatives: not_differentiable\n"
    )
    assert str(load_error(tmp_path, text)).endswith(
        "meta.vmap_as: the value for 'mat2' (Tensor) does not fit it — match 'mybmm(Tensor self, Tensor mat2)"
        " -> Tensor'"
    )
