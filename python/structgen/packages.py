"""The generated packages this runtime serves, by torch.ops namespace.

Every package the generator builds (the repository's own ops, an outside project's) hands its generated
``_rules`` module to ``serve()`` when its ``_ops`` module loads. describe(), sharding, vmap and
DTensor then find an op's index-space function through its namespace, so two packages in one
process each get their own batching rules and DTensor strategies, and an op name two packages
share is told apart by its namespace ("example_ops::softclip").
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

import torch


@dataclass(frozen=True)
class Package:
    namespace: str  # torch.ops.<namespace>, TORCH_LIBRARY(<namespace>)
    rules: ModuleType  # its generated _rules: RULES, OVERLOADS, LOOPED

    def op(self, qualified: str) -> torch._ops.OpOverload:
        """The overload ``qualified`` ("add.Tensor", "mm") names in this package."""
        packet, _, name = qualified.partition(".")
        return getattr(getattr(getattr(torch.ops, self.namespace), packet), name or "default")

    def has_packet(self, name: str) -> bool:
        return hasattr(getattr(torch.ops, self.namespace), name)


_SERVED: dict[str, Package] = {}


def serve(namespace: str, rules: ModuleType) -> Package:
    """Serve a package whose library has registered torch.ops.<namespace>: its vmap rules now,
    its DTensor strategies once torch.distributed.tensor is imported (idempotent)."""
    from structgen import dtensor, vmap

    if namespace in _SERVED:
        return _SERVED[namespace]
    package = _SERVED[namespace] = Package(namespace, rules)
    vmap.register(package)
    dtensor.register_when_imported(package)
    return package


def served() -> tuple[Package, ...]:
    return tuple(_SERVED.values())


def split(op_name: str) -> tuple[Package, str]:
    """The package of ``op_name`` and its name there: "ns::add.Tensor" names its namespace; a
    bare "add.Tensor" is looked up in every served package and must be in exactly one."""
    namespace, sep, name = op_name.rpartition("::")
    if sep:
        if namespace not in _SERVED:
            raise ValueError(
                f"'{op_name}': no package with namespace '{namespace}' is loaded; loaded: "
                f"{', '.join(_SERVED) or 'none'}"
            )
        return _SERVED[namespace], name
    packet = name.partition(".")[0]
    owners = [p for p in _SERVED.values() if p.has_packet(packet)]
    if len(owners) == 1:
        return owners[0], name
    if not owners and len(_SERVED) == 1:
        return next(iter(_SERVED.values())), name  # its own message lists its ops
    if not owners:
        raise ValueError(
            f"no loaded package has an op called '{name}' (loaded: {', '.join(_SERVED) or 'none'})"
        )
    raise ValueError(
        f"'{name}' is an op of several packages ({', '.join(p.namespace for p in owners)}): "
        f"name it with its namespace, e.g. '{owners[0].namespace}::{name}'"
    )


def rule_of(op_name: str) -> dict:
    """The rule of one overload, by its (qualified) name: a vmap_as sibling's."""
    package, name = split(op_name)
    return package.rules.RULES[package.rules.OVERLOADS[name]]


def qualified(rule: dict, name: str | None = None) -> str:
    """``name`` (default: the rule's functional overload) with the rule's namespace: what
    describe() and split() resolve in that package whichever packages are loaded."""
    return f"{rule['namespace']}::{name or rule['functional']}"
