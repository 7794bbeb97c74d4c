"""An op's ``kernels:`` key as the model holds it: its variants per device, the tuning key and,
once the manifest has the op's rule, their checked IR. Data only: multi_kernel.py parses the key;
dest/multi_kernel.py prints the chooser.
"""

from __future__ import annotations

from dataclasses import dataclass

from structgen.codegen.model.rule_ir import TuningIR
from structgen.codegen.model.rule_tree import Expr


@dataclass(frozen=True)
class KernelVariant:
    name: str
    kernel: str | None  # a hand-written hook; None: generated from the op's formula with params
    params: tuple[tuple[str, int], ...]
    when: Expr | None
    dtypes: tuple[str, ...] | None  # None: every dtype the op takes
    line: int
    text: str  # the variant's manifest entry, part of its source hash


@dataclass(frozen=True)
class MultiKernel:
    key: tuple[Expr, ...]
    key_text: str
    line: int
    key_line: int
    devices: tuple[tuple[str, tuple[KernelVariant, ...]], ...]  # ("CPU" | "CUDA", variants)
    sources: tuple[str, ...] = ()  # paths under csrc/ (cmake/autotune_build.cmake reads them)
    # Per device, the checked key and variant conditions (set by the manifest, which has the rule).
    tuning: tuple[tuple[str, TuningIR], ...] = ()

    def variants(self, device: str) -> tuple[KernelVariant, ...]:
        return dict(self.devices).get(device, ())
