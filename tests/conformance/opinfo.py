"""structops against torch on PyTorch's own test inputs (issue 23): every OpInfo sample of every
mirrored op, every dtype torch supports for it on the CPU, values, dtypes and shapes compared
with torch's, and the shapes and dtypes of the same call on meta tensors.

The manifest's samples are drawn from each op's own rule; OpInfo's (torch.testing._internal.
common_methods_invocations) are written by PyTorch for its own tests, so they also reach the
corners a rule does not name. A sample torch refuses must be refused here too.

    .venv/bin/python -m tests.conformance.opinfo      # the pass rate per op, and each failure
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import torch
from structops.nn import functional

import structops

if TYPE_CHECKING:
    from structgen.codegen.model.tests import OpInfo

# float16/bfloat16 results may differ from torch's by the rounding of one operation: torch
# computes some ops in float and rounds once, others per step. Stated, not skipped: 2 ulp.
TOLERANCE = {torch.float16: (2e-3, 2e-3), torch.bfloat16: (1.6e-2, 1.6e-2)}
DTYPES = (
    torch.float32,
    torch.float64,
    torch.float16,
    torch.bfloat16,
    torch.complex64,
    torch.complex128,
    torch.int64,
    torch.int32,
    torch.int16,
    torch.int8,
    torch.uint8,
    torch.bool,
)


def _first(r):
    return r[0] if isinstance(r, tuple) else r


# structops' call for an OpInfo whose Python API is not the aten schema: (input, *args, **kwargs)
# as the OpInfo's op takes them.
ADAPTERS: dict[str, Callable] = {
    "where": lambda self, condition, other: structops.where(condition, self, other),
    # OpInfo's embedding and embedding_bag take the weight first (torch.nn.functional's: the indices)
    "nn.functional.embedding": lambda weight, idx, **kw: functional.embedding(idx, weight, **kw),
    "nn.functional.embedding_bag": lambda weight, idx, **kw: functional.embedding_bag(idx, weight, **kw),
    # the other nn.functional OpInfos call structops.nn.functional's function of the name (below)
}


@dataclass
class Result:
    op: str
    passed: int = 0
    failed: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.passed + len(self.failed)


def _meta(x):
    if isinstance(x, torch.Tensor):
        return torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device="meta")
    if isinstance(x, list | tuple):
        return type(x)(_meta(t) for t in x)
    return x


def _compare(got, expected, dtype) -> str | None:
    if isinstance(expected, tuple | list):
        if not isinstance(got, tuple | list) or len(got) != len(expected):
            return f"returned {type(got).__name__}, torch {type(expected).__name__} of {len(expected)}"
        for g, e in zip(got, expected):
            problem = _compare(g, e, dtype)
            if problem:
                return problem
        return None
    if not isinstance(expected, torch.Tensor):
        return None if got == expected else f"{got!r} != {expected!r}"
    if got.dtype != expected.dtype or got.shape != expected.shape:
        return f"dtype/shape {got.dtype} {tuple(got.shape)}, torch {expected.dtype} {tuple(expected.shape)}"
    rtol, atol = TOLERANCE.get(expected.dtype, (None, None))
    try:
        torch.testing.assert_close(got, expected, rtol=rtol, atol=atol, equal_nan=True)
    except AssertionError as e:
        return str(e).splitlines()[1] if len(str(e).splitlines()) > 1 else str(e)
    return None


def _describe(sample) -> str:
    def show(x):
        if isinstance(x, torch.Tensor):
            return f"T{tuple(x.shape)}"
        if isinstance(x, list | tuple) and x and isinstance(x[0], torch.Tensor):
            return "[" + ", ".join(show(t) for t in x) + "]"
        return repr(x)

    args = [show(sample.input)] + [show(a) for a in sample.args]
    args += [f"{k}={show(v)}" for k, v in sample.kwargs.items()]
    return "(" + ", ".join(args) + ")"


def _mirror(opinfo_name: str) -> Callable | None:
    """structops.nn.functional's function for an nn.functional OpInfo, where it has one."""
    name = opinfo_name.removeprefix("nn.functional.")
    return getattr(functional, name) if name != opinfo_name and name in functional.__all__ else None


def check_op(name: str, opinfo) -> Result:
    ours = ADAPTERS.get(opinfo.name) or _mirror(opinfo.name) or getattr(structops, name)
    result = Result(name)
    torch.manual_seed(0)  # OpInfo draws its values at random: the same samples on every run
    supported = opinfo.supported_dtypes("cpu")
    for dtype in (d for d in DTYPES if d in supported):
        for sample in opinfo.sample_inputs("cpu", dtype, requires_grad=False):
            args, kwargs = (sample.input, *sample.args), dict(sample.kwargs)
            problem = _check_sample(opinfo.op, ours, args, kwargs, dtype)
            if problem is None:
                result.passed += 1
            else:
                result.failed.append(f"{str(dtype).removeprefix('torch.')} {_describe(sample)}: {problem}")
    return result


def _check_sample(theirs, ours, args, kwargs, dtype) -> str | None:
    try:
        expected = theirs(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - torch refuses: structops must refuse too
        try:
            ours(*args, **kwargs)
        except Exception:  # noqa: BLE001
            return None
        return f"torch raises {type(e).__name__}, structops does not"
    try:
        got = ours(*args, **kwargs)
    except Exception as e:  # noqa: BLE001
        return f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
    problem = _compare(got, expected, dtype)
    if problem:
        return problem
    meta_args, meta_kwargs = _meta(args), {k: _meta(v) for k, v in kwargs.items()}
    try:
        theirs(*meta_args, **meta_kwargs)
    except Exception:  # noqa: BLE001 - torch has no meta kernel here (masked_select): nothing to compare
        return None
    try:
        meta = ours(*meta_args, **meta_kwargs)
    except Exception as e:  # noqa: BLE001
        return f"on meta tensors: {type(e).__name__}: {str(e).splitlines()[0][:160]}"
    first, first_expected = _first(meta), _first(expected)
    if isinstance(first, torch.Tensor) and (first.shape, first.dtype) != (
        first_expected.shape,
        first_expected.dtype,
    ):
        return f"on meta tensors: {first.dtype} {tuple(first.shape)}"
    return None


@functools.cache
def _manifest():
    from structgen.codegen.manifest import load_manifest

    return load_manifest(Path(__file__).resolve().parents[2] / "structops" / "native_functions.yaml")


def opinfo_specs() -> dict[str, OpInfo]:
    """Each Python function's `tests: {opinfo: ...}` from the manifest (the author states it there):
    which OpInfo it answers to, or why none, and the failures known with their reasons. A name of
    several overloads (lerp.Tensor, lerp.Scalar) gets the first name given and every difference."""
    from structgen.codegen.model.tests import OpInfo

    specs: dict[str, OpInfo] = {}
    for f in _manifest().functions:
        if f.tests is None:
            continue
        name, given = str(f.func.name.name), f.tests.opinfo
        before = specs.get(name, OpInfo(None))
        specs[name] = OpInfo(
            before.name or given.name, before.none or given.none, before.differs + given.differs
        )
    return specs


def mirrored_ops() -> list[tuple[str, object]]:
    """(structops function, OpInfo) of every mirrored op OpInfo has: named like it (or as its
    `tests.opinfo` says), not marked `opinfo: {none: ...}`, and not a `codegen new-op` scaffold
    (`tests: {scaffold: true}`: an identity, not yet that op)."""
    from structgen.codegen.conformance import scaffold_ops
    from torch.testing._internal.common_methods_invocations import op_db

    scaffolds = scaffold_ops(_manifest().functions)
    specs = opinfo_specs()

    by_name: dict[str, object] = {}
    for o in op_db:
        by_name.setdefault(o.name, o)  # the first entry (no variant_test_name) of a name
    names = sorted(
        n
        for n in structops.__all__
        if not n.startswith("_") and not n.endswith("_") and n not in scaffolds and not _none(specs, n)
    )
    return [(n, by_name[_opinfo_name(specs, n)]) for n in names if _opinfo_name(specs, n) in by_name]


def _opinfo_name(specs: dict[str, OpInfo], name: str) -> str:
    spec = specs.get(name)
    return spec.name if spec is not None and spec.name else name


def _none(specs: dict[str, OpInfo], name: str) -> bool:
    spec = specs.get(name)
    return spec is not None and spec.none is not None


def main() -> int:
    results = [check_op(name, op) for name, op in mirrored_ops()]
    total = sum(r.total for r in results)
    passed = sum(r.passed for r in results)
    print(f"{'op':28} {'passed':>8} {'samples':>8} {'rate':>7}")
    for r in results:
        print(f"{r.op:28} {r.passed:8} {r.total:8} {100 * r.passed / max(r.total, 1):6.1f}%")
    print(f"{'TOTAL':28} {passed:8} {total:8} {100 * passed / max(total, 1):6.1f}%")
    for name, spec in opinfo_specs().items():
        if spec.none:
            print(f"  {name}: not swept: {spec.none}")
    for r in results:
        for f in r.failed:
            print(f"FAIL {r.op}: {f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
