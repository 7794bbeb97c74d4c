"""The typed model of a checked manifest: entries (NativeFunction), structured ops
(StructuredGroup) and the manifest. entry.py and manifest.py build it, checking every key once;
everything after them reads it and raises no SpecError."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from structgen.codegen.model.autograd import Autograd, WrittenDerivatives
from structgen.codegen.model.composite import Composite
from structgen.codegen.model.kernels import MultiKernel
from structgen.codegen.model.pointwise import PointwiseKernel
from structgen.codegen.model.project import DEFAULT_PROJECT, Project
from structgen.codegen.model.rule import Rule
from structgen.codegen.model.schema import Argument, FunctionSchema, OperatorName, SchemaKind
from structgen.codegen.model.tests import TestSpec


class DispatchKey(enum.Enum):
    CPU = "CPU"
    CUDA = "CUDA"
    Meta = "Meta"


@dataclass(frozen=True)
class Location:
    path: str
    line: int


@dataclass(frozen=True)
class Precomputed:
    """PyTorch's ``precomputed:``: values the meta function computes and the impl receives.

    ``replace`` maps an argument name to the arguments that stand for it in the impl signature;
    ``add`` are extra values appended after all arguments; ``rules`` is each value's rule
    (``- dim -> int[] reduced_dims = dims(self, dim)``), for ops whose meta function is a rule.
    """

    replace: tuple[tuple[str, tuple[Argument, ...]], ...]
    add: tuple[Argument, ...]
    rules: tuple[tuple[str, str], ...] = ()  # (value name, rule text)

    @property
    def all_values(self) -> tuple[Argument, ...]:
        return tuple(a for _, args in self.replace for a in args) + self.add


# `spellings:` per argument: (argument, ((text, value), ...)), value None, an int or a float.
Spellings = tuple[tuple[str, tuple[tuple[str, None | int | float], ...]], ...]


@dataclass(frozen=True)
class RuntimeKernel:
    """A family of the runtime's kernels an op runs as its CPU and CUDA impls, and the family's
    variant for it: ("scan", a combine: add, mul, logaddexp) or ("triangle", lower or upper)."""

    family: str
    variant: str


@dataclass(frozen=True)
class NativeFunction:
    func: FunctionSchema
    loc: Location
    structured: bool
    structured_delegate: OperatorName | None
    precomputed: Precomputed | None
    dispatch: tuple[tuple[DispatchKey, str], ...]
    tags: tuple[str, ...]
    doc: str
    tests: TestSpec | None
    # Structured entries: the meta rule, or None with meta_custom (a hand-written meta function).
    rule: Rule | None = None
    meta_custom: bool = False
    # Pointwise entries: the formula their CPU and CUDA kernels are generated from.
    pointwise: PointwiseKernel | None = None
    # `scan:` / `triangle:`: the op's CPU and CUDA kernels are the runtime's (codegen/kernel_keys.py).
    runtime_kernel: RuntimeKernel | None = None
    # Several kernels per device, one picked per call by measurement (codegen/multi_kernel.py).
    kernels: MultiKernel | None = None
    # Structured entries: one of OUT_DTYPE_RULES.
    out_dtype: str = "exact"
    # Functional entries: the `derivatives:` key as written (checked per op: StructuredGroup.autograd).
    derivatives: WrittenDerivatives | None = None
    # Scalar overloads (codegen/scalar_of.py): the pointwise out= overload whose kernels this
    # one calls, its numbers as 0-dim tensors.
    scalar_of: OperatorName | None = None
    # PyTorch overloads of this op that the project lacks or declares otherwise: (name, why).
    torch_differs: tuple[tuple[str, str], ...] = ()
    # An overload that is a call of another (codegen/composite.py), bound to its target: one
    # call, or cases chosen by which optional arguments are given.
    composite: tuple[Composite, ...] | None = None
    # Texts torch's Python layer takes for number arguments (codegen/spellings.py).
    spellings: Spellings = ()
    # `python_name:` the Python layer's name for the op's base name (its overloads alike).
    python_name: str | None = None

    @property
    def kind(self) -> SchemaKind:
        return self.func.kind()


@dataclass(frozen=True)
class StructuredGroup:
    """One structured kernel: the out= entry that owns meta + impl, and its delegating variants."""

    out: NativeFunction
    functional: NativeFunction | None
    inplace: NativeFunction | None
    # The op's derivatives (written, or derived from its pointwise formula); None: backward raises.
    autograd: Autograd | None = None
    # A generated fused backward op (codegen/autograd/fused.py): the pointwise op it belongs to.
    backward_of: str | None = None
    # meta.vmap_as, bound: the call of another op's functional that computes a batch of this op's
    # calls (mm's: bmm(self, mat2)), or its cases by the optionals given; set by the manifest
    vmap_as: tuple[Composite, ...] | None = None

    @property
    def name(self) -> str:
        """The name of the meta function and generated files: the functional's, else out's."""
        if self.functional is not None:
            return self.functional.func.name.unambiguous
        return self.out.func.name.unambiguous

    @property
    def members(self) -> tuple[NativeFunction, ...]:
        return tuple(f for f in (self.functional, self.inplace, self.out) if f is not None)

    def impl_name(self, key: DispatchKey) -> str | None:
        return dict(self.out.dispatch).get(key)

    @property
    def tests(self) -> TestSpec | None:
        return next((f.tests for f in self.members if f.tests is not None), None)

    @property
    def dynamic_output_shape(self) -> bool:
        """Output sizes that depend on input data (masked_select): no Meta kernel, a fake impl."""
        return "dynamic_output_shape" in self.out.tags


@dataclass(frozen=True)
class Manifest:
    path: str
    functions: tuple[NativeFunction, ...]
    groups: tuple[StructuredGroup, ...]
    # Entries that name their kernels directly (no meta function): registered as they are.
    unstructured: tuple[NativeFunction, ...]
    project: Project = DEFAULT_PROJECT  # the header's names (codegen/project.py)
