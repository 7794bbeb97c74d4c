"""The schema model: PyTorch's whole manifest round-trips and parses like torchgen parses it."""

from pathlib import Path

import pytest
import yaml
from structgen.codegen.model.schema import (
    BaseTy,
    BaseType,
    FunctionSchema,
    ListType,
    OptionalType,
    SchemaKind,
    SchemaSyntaxError,
)


def torch_manifest() -> list[str]:
    torchgen = pytest.importorskip("torchgen")
    path = Path(torchgen.__file__).parent / "packaged/ATen/native/native_functions.yaml"
    with open(path) as f:
        return [e["func"] for e in yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))]


def test_every_pytorch_schema_round_trips():
    funcs = torch_manifest()
    assert len(funcs) > 2000
    failures = [f for f in funcs if str(FunctionSchema.parse(f)) != f]
    assert failures == []


def _ours(schema: FunctionSchema):
    args = schema.arguments
    out = set(args.out)
    arg = lambda a: (a.name, str(a.type), a.default, str(a.annotation) if a.annotation else None)
    return (
        str(schema.name.name.base),
        schema.name.name.inplace,
        schema.name.name.functional_overload,
        schema.name.overload_name,
        [arg(a) for a in args.positional],
        [arg(a) for a in args.kwarg_only if a not in out],
        [arg(a) for a in args.out],
        [(r.name, str(r.type), str(r.annotation) if r.annotation else None) for r in schema.returns],
    )


def _torchgen(schema):
    args = schema.arguments
    arg = lambda a: (a.name, str(a.type), a.default, str(a.annotation) if a.annotation else None)
    return (
        schema.name.name.base,
        schema.name.name.inplace,
        schema.name.name.functional_overload,
        schema.name.overload_name,
        [arg(a) for a in args.flat_positional],
        [arg(a) for a in args.flat_kwarg_only],
        [arg(a) for a in args.out],
        [(r.name, str(r.type), str(r.annotation) if r.annotation else None) for r in schema.returns],
    )


def test_structure_matches_torchgen():
    torchgen_model = pytest.importorskip("torchgen.model")
    mismatches = []
    for func in torch_manifest():
        ours = _ours(FunctionSchema.parse(func))
        theirs = _torchgen(torchgen_model.FunctionSchema.parse(func))
        if ours != theirs:
            mismatches.append((func, ours, theirs))
    assert mismatches[:3] == []


@pytest.mark.parametrize(
    "text",
    [
        "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
        "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
        (
            "max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, Tensor(b!) max_values)"
            " -> (Tensor(a!) values, Tensor(b!) indices)"
        ),
        "split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
        "_foreach_add_.List(Tensor(a!)[] self, Tensor[] other, *, Scalar alpha=1) -> ()",
        "index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
        (
            "conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0)"
            " -> Tensor"
        ),
        (
            "to.device(Tensor(a) self, Device device, ScalarType dtype, bool non_blocking=False, bool"
            " copy=False, MemoryFormat? memory_format=None) -> Tensor(a)"
        ),
        "__iand__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
        "align_to(Tensor(a) self, Dimname[] names) -> Tensor(a)",
        'f(Tensor x, str mode="mean", bool[3] mask=[True,False,True]) -> Tensor out',
    ],
)
def test_round_trip_examples(text):
    assert str(FunctionSchema.parse(text)) == text


def test_parsed_structure():
    s = FunctionSchema.parse(
        "sum.IntList_out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!)"
        " out) -> Tensor(a!)"
    )
    assert s.kind() is SchemaKind.out
    assert [a.name for a in s.arguments.out] == ["out"]
    assert s.arguments.positional[1].type == OptionalType(ListType(BaseType(BaseTy.int), 1))
    assert s.arguments.kwarg_only[0].default == "None"
    assert (
        FunctionSchema.parse("add_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)").kind()
        is SchemaKind.inplace
    )
    assert FunctionSchema.parse(
        "__iand__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)"
    ).name.name.inplace


@pytest.mark.parametrize(
    "text, message",
    [
        ("add(Tensor self, Tensr other) -> Tensor", "column 18: expected a known type"),
        ("add(Tensor self Tensor other) -> Tensor", "column 17: expected ',' or ')'"),
        ("add(Tensor self) Tensor", "column 18: expected '->'"),
        ("add(Tensor self,Tensor other) -> Tensor", "write it as 'add(Tensor self, Tensor other) -> Tensor'"),
        ("add(int(a) x) -> Tensor", "no alias annotation on 'int'"),
        ("add(Tensor x, Tensor x) -> Tensor", "argument 'x' appears twice"),
        ("add(Tensor x, *) -> Tensor", "'*' must be followed by at least one keyword-only argument"),
        ("add.1x(Tensor x) -> Tensor", "is not an operator name"),
    ],
)
def test_syntax_errors(text, message):
    with pytest.raises(SchemaSyntaxError, match=None) as e:
        FunctionSchema.parse(text)
    assert message in str(e.value)
