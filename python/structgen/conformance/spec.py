"""An op under test: codegen's SuiteSpec, the one definition of what the suite knows about an op.

The generator reads each structured op of the manifest into a frozen SuiteSpec of plain data
(codegen/dest/conformance_suite.py): overload and argument names, flags, dtypes with skip
reasons, and the `tests:` key's Python sources (reference, samples, error cases, argument
values). The suite loads the specs when pytest collects it; nothing is rendered to files, and no
second dataclass copies the fields: the checks read a SuiteSpec as it is, and its sources through
compiled(spec), which evaluates each one once with torch and over_dims in scope.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from structgen.codegen.dest.conformance_suite import SuiteSpec, suite_specs
from structgen.codegen.manifest import load_manifest
from structgen.codegen.model.native import Manifest
from structgen.codegen.model.project import Project
from structgen.conformance import formula, plugin

# The manifest whose package the suite runs on, set by use_manifest() (plugin.py: --manifest, or
# the project's own conftest.py); else, when the suite is collected, the one at pytest's rootdir
# (plugin.ROOTDIR_MANIFEST).
UNDER_TEST: list[Path | None] = [None]


def use_manifest(path: Path) -> None:
    """Run the suite on the package ``path`` generates: the project header's python_package is
    imported, so its library registers torch.ops.<namespace> and its _ops module serves it."""
    UNDER_TEST[0] = Path(path).resolve()
    importlib.import_module(under_test().python_package)


def _manifest() -> Path:
    candidate = plugin.ROOTDIR_MANIFEST[0]
    if UNDER_TEST[0] is None and candidate is not None and candidate.is_file():
        use_manifest(candidate)
    if UNDER_TEST[0] is None:
        raise RuntimeError(
            "the conformance suite has no package to run on: give pytest --manifest "
            "path/to/native_functions.yaml (structgen's pytest plugin), or run it from the folder "
            "that holds the manifest"
        )
    return UNDER_TEST[0]


@functools.cache
def _loaded(manifest: Path) -> Manifest:
    return load_manifest(manifest)


def under_test() -> Project:
    """The project header of the package the suite runs on."""
    return _loaded(_manifest()).project


@functools.cache
def load_specs(manifest: Path | None = None, namespace: str | None = None) -> tuple[SuiteSpec, ...]:
    """One spec per structured op with a functional overload, in manifest order."""
    return tuple(suite_specs(_loaded(manifest or _manifest()), namespace))


def op(namespace: str, qualified: str):
    """The OpOverload ``qualified`` ("add.Tensor", "mm") names in torch.ops.<namespace>."""
    packet, _, name = qualified.partition(".")
    return getattr(getattr(getattr(torch.ops, namespace), packet), name or "default")


def overload(spec: SuiteSpec, qualified: str):
    return op(spec.namespace, qualified)


def functional(spec: SuiteSpec):
    return overload(spec, spec.functional)


def qualified(spec: SuiteSpec) -> str:
    """The functional overload with its namespace, as the runtime's describe(), sharding and vmap
    take it whichever packages are loaded."""
    return f"{spec.namespace}::{spec.functional}"


def over_dims(fn: Callable) -> Callable:
    """A torch reduction over one int dim (torch.prod) as one over a dim list (None or [] = every
    dim), for references of ops that take int[1]? dim."""

    def reference(x, dim=None, keepdim=False, **kwargs):
        if x.dim() == 0:
            return fn(x, 0, keepdim=keepdim, **kwargs)
        dims = sorted({d % x.dim() for d in dim} if dim else range(x.dim()), reverse=True)
        out = x
        for d in dims:
            out = fn(out, d, keepdim=True, **kwargs)
        return out if keepdim else out.reshape([s for i, s in enumerate(x.shape) if i not in dims])

    return reference


def on_cpu(fn: Callable) -> Callable:
    """``fn`` on CPU copies of its tensor arguments: torch's CPU kernel as the reference on every
    device, where torch's CUDA kernel keeps another convention (docs/design.md, Known
    differences). What ``fn`` writes into an argument is copied back; the outputs come back to
    the first tensor's device, autograd following through both copies."""

    def run(*args, **kwargs):
        tensors = [a for a in (*args, *kwargs.values()) if isinstance(a, torch.Tensor)]
        device = tensors[0].device
        copies = {id(t): t.cpu() for t in tensors}

        def cpu(a):
            return copies[id(a)] if isinstance(a, torch.Tensor) else a

        versions = {key: c._version for key, c in copies.items()}
        result = fn(*map(cpu, args), **{k: cpu(v) for k, v in kwargs.items()})
        with torch.no_grad():
            for t in tensors:
                if copies[id(t)]._version != versions[id(t)] and copies[id(t)] is not t:
                    t.copy_(copies[id(t)])
        back = [r.to(device) for r in (result if isinstance(result, tuple | list) else (result,))]
        return type(result)(back) if isinstance(result, tuple | list) else back[0]

    return run


def arguments(*args, **kwargs) -> tuple[tuple, dict]:
    """Capture a call's arguments (the manifest writes samples and error cases as argument lists)."""
    return args, kwargs


@dataclass(frozen=True)
class ErrorCase:
    make_args: Callable[[], tuple[tuple, dict]]  # () -> (args, kwargs)
    match: str
    source: str  # the manifest's argument list, to tell the cases apart when one fails
    data: bool = False  # raised from values (index checks): meta tensors cannot raise it


@dataclass(frozen=True)
class Compiled:
    """A SuiteSpec's Python sources, evaluated."""

    reference: Callable | None
    grad_reference: Callable | None  # the reference of gradients (default: reference)
    bits_reference: Callable | None  # (result, *args) -> what the op's own draw should give
    defaults: dict[str, Any]
    arg_values: dict[str, tuple]
    # Each takes t(*shape) -> tensor of the tested dtype and device, and returns (args, kwargs).
    samples: tuple[Callable[[Callable[..., torch.Tensor]], tuple[tuple, dict]], ...]
    errors: tuple[ErrorCase, ...]


# What the manifest's `tests:` sources may name.
SOURCE_SCOPE = {
    "torch": torch,
    "over_dims": over_dims,
    "arguments": arguments,
    "on_cpu": on_cpu,
    "precise": formula.precise,
    "pw": formula.pw,
}


@functools.cache
def compiled(spec: SuiteSpec) -> Compiled:
    def value(source: str):
        return eval(source, dict(SOURCE_SCOPE))  # the manifest is the project's own code

    return Compiled(
        reference=None if spec.reference is None else value(spec.reference),
        grad_reference=value(spec.grad_reference or spec.reference)
        if (spec.grad_reference or spec.reference)
        else None,
        bits_reference=None if spec.bits_reference is None else value(spec.bits_reference),
        defaults={name: value(source) for name, source in spec.defaults},
        arg_values={name: value(source) for name, source in spec.arg_values},
        samples=tuple(value(f"lambda t: arguments({source})") for source in spec.samples),
        errors=tuple(
            ErrorCase(value(f"lambda: arguments({source})"), match, source, data)
            for source, match, data in spec.errors
        ),
    )


def own_bits_expected(spec: SuiteSpec, sample, result):
    """What a random op whose CUDA kernels draw their own bits should give from its own draw
    (tests.bits_reference: its result from its mask), for the Sample it ran on."""
    bits = compiled(spec).bits_reference
    return sample.call(lambda *args, **kwargs: bits(result, *args, **kwargs))


def reference_on(spec: SuiteSpec, device: str, grads: bool = False) -> Callable | None:
    """The reference (of gradients, with ``grads``) on ``device``: torch's op, or for a random op
    whose CUDA kernels draw their own bits (tests.bits_reference), on CUDA its own draw with the
    values recomputed by torch from it (the caller seeds each call, so the draw is the one the
    op's own call makes). Gradients then flow through torch's formula of the draw."""
    c = compiled(spec)
    reference = c.grad_reference if grads else c.reference
    if device != "cuda" or c.bits_reference is None or reference is None:
        return reference
    op, bits = functional(spec), c.bits_reference
    return lambda *args, **kwargs: bits(op(*args, **kwargs), *args, **kwargs)
