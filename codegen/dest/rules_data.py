"""Context for the generated rule module (python/structops/_rules.py): per structured op with a
rule, its index-space function (rules/python.py) and what describe() needs to call it."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.native import Manifest, StructuredGroup
from codegen.rules import python
from codegen.rules.spec import CombineBy


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
    vmap_as: str | None  # the functional overload that batches this op (meta.vmap_as)
    function: str  # the Python source of the index-space function
    index: str  # its name


def _overload(qualified: str) -> str:
    return qualified if "." in qualified else f"{qualified}.default"


def rule_data(group: StructuredGroup, groups: tuple[StructuredGroup, ...]) -> RuleData:
    rule = group.out.rule
    assert rule is not None and rule.ir is not None
    sibling = None
    if rule.vmap_as is not None:  # checked by the manifest: a structured op with a functional
        named = next(g for g in groups if g.out.func.name.name.base == rule.vmap_as[0] and g.functional)
        sibling = _overload(str(named.functional.func.name))
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
        function=python.index_function(group.name, tuple(name for name, _ in rule.args), rule.ir),
        index=python.function_name(group.name),
    )


def all_rule_data(manifest: Manifest) -> list[RuleData]:
    return [rule_data(g, manifest.groups) for g in manifest.groups if g.out.rule is not None]
