"""Context for the generated rule module (python/<package>/_rules.py): per structured op with a
rule, its index-space function (rules/python.py) and what describe() needs to call it."""

from __future__ import annotations

from dataclasses import dataclass

from structgen.codegen.model import composite
from structgen.codegen.model.native import Manifest, StructuredGroup
from structgen.codegen.model.rule import CombineBy
from structgen.codegen.rules import python


@dataclass(frozen=True)
class RuleData:
    name: str
    op: str
    functional: str | None
    overloads: tuple[str, ...]
    args: tuple[tuple[str, str], ...]  # (name, rule kind) of the functional's arguments
    outputs: tuple[str, ...]
    list_outputs: tuple[str, ...]  # Tensor(a!)[] outputs: one shape per element
    combine: str | dict | None  # a combine, or {"by": int argument, "cases": {value: combine}}
    # meta.vmap_as: its cases, each (the optional arguments it needs given, the functional overload
    # that batches this op, and per argument of it: the argument of this op passed on (a name), it
    # transposed (("mT", name)) or a constant (None, a bool or an int))
    vmap_as: tuple[tuple[tuple[str, ...], str, dict[str, object]], ...] | None
    affine: tuple[str, str, str | None] | None  # meta.affine: (output, weight, bias or None)
    function: str  # the Python source of the index-space function
    index: str  # its name


def _overload(qualified: str) -> str:
    return qualified if "." in qualified else f"{qualified}.default"


def _passed(v: composite.Value) -> object:
    if isinstance(v, composite.Name):
        return v.name
    if isinstance(v, composite.Transposed):
        return ("mT", v.name)
    assert isinstance(v, composite.Const)
    return v.value


def rule_data(group: StructuredGroup) -> RuleData:
    rule = group.out.rule
    assert rule is not None and rule.ir is not None
    sibling = None
    if group.vmap_as is not None:  # bound by the manifest: names, mT(name) or constants
        sibling = tuple(
            (case.given, _overload(str(case.target)), {a.name: _passed(v) for a, v in case.bound})
            for case in group.vmap_as
        )
    return RuleData(
        name=group.name,
        op=group.out.func.name.name.base,
        functional=_overload(str(group.functional.func.name)) if group.functional else None,
        overloads=tuple(_overload(str(f.func.name)) for f in group.members),
        args=rule.args,
        outputs=tuple(o.arg for o in rule.outputs),
        list_outputs=tuple(o.arg for o in rule.outputs if o.is_list),
        combine=(
            {"by": rule.combine.arg, "cases": dict(rule.combine.cases)}
            if isinstance(rule.combine, CombineBy)
            else rule.combine
        ),
        vmap_as=sibling,
        affine=rule.affine[:3] if rule.affine else None,
        function=python.index_function(group.name, tuple(name for name, _ in rule.args), rule.ir),
        index=python.function_name(group.name),
    )


def all_rule_data(manifest: Manifest) -> list[RuleData]:
    return [rule_data(g) for g in manifest.groups if g.out.rule is not None]


def looped_functionals(manifest: Manifest) -> list[str]:
    """The functional overloads of structured ops without a rule (a hand-written meta function):
    structgen.vmap loops over their batch (torch's fallback also loops, but refuses a batch of 0)."""
    return [
        _overload(str(g.functional.func.name)) for g in manifest.groups if g.out.rule is None and g.functional
    ]
