"""Context for the generated rule-data module (python/structops/_rules.py)."""

from __future__ import annotations

from dataclasses import dataclass

from codegen.manifest import Manifest, StructuredGroup
from codegen.rules.check import promoted_tensors


@dataclass(frozen=True)
class RuleData:
    name: str
    op: str
    functional: str | None
    overloads: tuple[str, ...]
    args: tuple
    inputs: tuple
    outputs: tuple
    checks: tuple
    allowed: tuple
    combine: str | None
    list_outputs: tuple[str, ...] = ()  # Tensor(a!)[] outputs: their shape is one shape per element
    promoted: tuple[str, ...] = ()  # tensors whose promoted dtype `allowed` restricts (promoted_tensors)


def _overload(qualified: str) -> str:
    return qualified if "." in qualified else f"{qualified}.default"


def rule_data(group: StructuredGroup) -> RuleData:
    rule = group.out.rule
    assert rule is not None
    return RuleData(
        name=group.name,
        op=group.out.func.name.name.base,
        functional=_overload(str(group.functional.func.name)) if group.functional else None,
        overloads=tuple(_overload(str(f.func.name)) for f in group.members),
        args=rule.args,
        inputs=tuple((i.arg, i.kind, i.pattern.data(), str(i.pattern)) for i in rule.inputs),
        outputs=tuple(
            (o.arg, o.shape.data(), o.dtype.data(), None if o.layout is None else o.layout.data())
            for o in rule.outputs
        ),
        checks=tuple((c.expr.data(), str(c.expr)) for c in rule.checks),
        allowed=rule.allowed,
        combine=rule.combine,
        list_outputs=tuple(o.arg for o in rule.outputs if o.is_list),
        promoted=promoted_tensors(rule),
    )


def all_rule_data(manifest: Manifest) -> list[RuleData]:
    return [rule_data(g) for g in manifest.groups if g.out.rule is not None]
