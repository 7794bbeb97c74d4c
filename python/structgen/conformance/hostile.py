"""The hostile check (registered into checks.CHECKS on import): every op on the values models
produce, not on benign randn, compared with torch computed in float64.

The ordinary samples (samples.py: shapes, layouts and arguments from the op's rule or the
manifest) keep their shapes and get hostile values, one profile at a time: large common offsets
(+-1e4, +-1e8, +-1e30, the dtype's near-max), fully and partly masked rows (-1e9 and -inf), tiny and
subnormal values, -0.0, one NaN, one +-inf, the integer limits. Every number argument (`Scalar`)
takes the values that break a narrow compute type (a float16 kernel that rounds 1e5 or 1e-8 to
its storage type before multiplying gives inf or 0), and so does a 0-dim tensor operand of a
pointwise op.

A result is right when each element is within a few units in the last place of the output dtype
of the reference run in float64 (complex128) on the same, already rounded, inputs, or of torch's
own result in the tested dtype (where torch itself rounds, as summing 1e8 + x in float32 does, or
where the manifest's reference is torch's op on its own terms); where torch raises, the package must
raise the same exception type. Every failing sample is reported, not just the first, so a failure
says how many samples an op gets wrong.
"""

from __future__ import annotations

import contextlib
import math
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest
import torch

import structgen
from structgen.codegen.dest.conformance_suite import SuiteSpec
from structgen.conformance.checks import _autotune, _outputs, _skip_unless_cuda_kernel, check
from structgen.conformance.emulation import emulated
from structgen.conformance.samples import samples
from structgen.conformance.spec import compiled, functional, load_specs, qualified
from structgen.conformance.tensors import Sample, dtype_of, is_integral

# Units in the last place of the output dtype a result may be off the float64 reference: one
# rounding of a result computed in float (float16, bfloat16) plus a float formula's own error;
# float32 and float64 formulas of several libm calls (gelu, silu) stay within a few.
ULPS = {
    torch.float16: 2,
    torch.bfloat16: 2,
    torch.float32: 8,
    torch.float64: 8,
    torch.complex64: 8,
    torch.complex128: 8,
}

# Samples of each profile per (op, dtype): the values are the point, not the shapes, which the
# other checks cover.
PER_PROFILE = 3

# ---------------------------------------------------------------------------------------------
# Value profiles


@dataclass(frozen=True)
class Profile:
    """Hostile values for the tensors of a sample: ``make(x, dtype)`` gives a tensor of x's shape,
    dtype and device (x is a benign sample tensor of the tested dtype)."""

    name: str
    make: Callable[[torch.Tensor], torch.Tensor]


def _like(x: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """``values`` (x's shape, any dtype) in x's dtype, laid out as x where x does not overlap
    itself (an expanded x gets a contiguous copy: its elements would have to be equal)."""
    values = values.to(x.dtype)
    if x.dim() == 0 or torch._debug_has_internal_overlap(x) == 1:  # 1: MemOverlap::Yes
        return values.contiguous()
    out = torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device=x.device)
    return out.copy_(values)


def _wide(x: torch.Tensor) -> torch.Tensor:
    return x.to(torch.complex128 if x.is_complex() else torch.float64)


def _offset(c: float) -> Callable[[torch.Tensor], torch.Tensor]:
    return lambda x: _like(x, _wide(x) + c)


def _near_max(x: torch.Tensor) -> torch.Tensor:
    top = torch.finfo(x.dtype).max
    return _like(x, top / 2 + _wide(x) * (top / 16))


def _tiny(x: torch.Tensor) -> torch.Tensor:
    """Around the smallest normal number: half the values subnormal."""
    return _like(x, _wide(x) * torch.finfo(x.dtype).tiny)


def _signed_zeros(x: torch.Tensor) -> torch.Tensor:
    flat = _wide(x).flatten().clone()
    flat[0::3] = -0.0
    flat[1::3] = 0.0
    return _like(x, flat.reshape(x.shape))


def _one(value: float) -> Callable[[torch.Tensor], torch.Tensor]:
    """One element (the middle one) set to ``value``."""

    def make(x: torch.Tensor) -> torch.Tensor:
        flat = _wide(x).flatten().clone()
        if flat.numel():
            flat[flat.numel() // 2] = value
        return _like(x, flat.reshape(x.shape))

    return make


def _masked(value: float) -> Callable[[torch.Tensor], torch.Tensor]:
    """Attention-style masks: the first slice along dim 0 all ``value`` (a fully masked row for a
    reduction over any other dim) and the last element of every row (partly masked rows, and a
    fully masked column for a reduction over dim 0). -1e9 is the dtype's lowest where it does not
    fit (float16: -65504, as models mask in half precision)."""

    def make(x: torch.Tensor) -> torch.Tensor:
        v = max(value, torch.finfo(x.dtype).min) if math.isfinite(value) else value
        y = _wide(x).clone()
        if y.dim() == 0:
            return _like(x, torch.full_like(y, v))
        if y.numel() == 0:
            return x
        y[0] = v
        y[..., -1] = v
        return _like(x, y)

    return make


def _integer_limits(x: torch.Tensor) -> torch.Tensor:
    info = torch.iinfo(x.dtype)
    flat = x.to(torch.int64).flatten().clone()
    flat[0::4] = info.min
    flat[1::4] = info.max
    flat[2::4] = info.max - 1
    return _like(x, flat.reshape(x.shape))


def profiles(dtype: torch.dtype) -> list[Profile]:
    """The profiles of a tested dtype: none for bool, the limits for integers."""
    if dtype == torch.bool:
        return []
    if is_integral(dtype):
        return [Profile("integer limits", _integer_limits)]
    top = torch.finfo(dtype).max
    offsets = [c for c in (1e4, -1e4, 1e8, -1e8, 1e30, -1e30) if abs(c) < top / 8]
    result = [Profile(f"offset {c:+g}", _offset(c)) for c in offsets]
    result += [
        Profile("tiny and subnormal", _tiny),
        Profile("one NaN", _one(math.nan)),
        Profile("one +inf", _one(math.inf)),
        Profile("one -inf", _one(-math.inf)),
    ]
    if dtype.is_complex:
        return result
    return result + [
        Profile("near the dtype's max", _near_max),
        Profile("masked -1e9", _masked(-1e9)),
        Profile("masked -inf", _masked(-math.inf)),
        Profile("signed zeros", _signed_zeros),
    ]


# Python numbers that break a narrow compute type: beyond float16's range (65504) or below its
# smallest subnormal (6e-8), a third (inexact in every dtype), beyond bfloat16's and float32's
# range, and int64's largest (which no float16 holds, and which wraps an int8).
NUMBERS = {
    "float16": (1e5, -7e4, 6e-8, 1e-8, 1 / 3, 2**63 - 1),
    "bfloat16": (1e5, 1e-8, 1 / 3, 1e39, 2**63 - 1),
    "float32": (1e5, 1e-8, 1 / 3, 1e-40, 2**63 - 1),
    "float64": (1e5, 1e-8, 1 / 3, 1e300, 2**63 - 1),
    "complex64": (1e5, 1e-8, 1 / 3),
}
INTEGER_NUMBERS = (2**63 - 1, 1000, -1, 1 / 3)


def numbers(spec: SuiteSpec, dtype_name: str) -> tuple:
    """The numbers a number argument takes; for a generated backward op only those its forward
    can take (its forward computes in the opmath type: a number beyond float's range made the
    forward's result inf already, which the backward's samples do not model)."""
    found = NUMBERS.get(dtype_name, INTEGER_NUMBERS if is_integral(dtype_of(dtype_name)) else ())
    if spec.backward_of is not None and dtype_name in ("float16", "bfloat16", "float32"):
        found = tuple(v for v in found if abs(v) <= torch.finfo(torch.float32).max)
    return found


# ---------------------------------------------------------------------------------------------
# Samples


def _names(spec: SuiteSpec, s: Sample) -> list[str | None]:
    """The argument name of each positional value of a sample."""
    return [spec.positional[i] if i < len(spec.positional) else None for i in range(len(s.args))]


def _hostile_args(spec: SuiteSpec) -> set[str]:
    """The tensor arguments that take hostile values: not indices and conditions (arguments the
    rule allows integral or bool dtypes only): their values address memory or choose, and the
    other checks cover their ranges."""
    choosing = {
        name for name, allowed in spec.arg_dtypes if not any(dtype_of(d).is_floating_point for d in allowed)
    }
    kinds = dict(spec.arg_kinds)
    return {
        name
        for name, kind in kinds.items()
        if kind in ("tensor", "tensor?", "tensors") and name not in choosing
    }


def _apply(
    spec: SuiteSpec, s: Sample, fn: Callable[[torch.Tensor], torch.Tensor], dtype: torch.dtype
) -> Sample:
    """The sample with ``fn`` applied to every tensor of the tested dtype that takes hostile values."""
    wanted = _hostile_args(spec)

    def f(value):
        return Sample([value], {}, "").map_tensors(lambda t: fn(t) if t.dtype == dtype else t).args[0]

    args = [f(a) if name in wanted else a for name, a in zip(_names(spec, s), s.args, strict=True)]
    kwargs = {k: f(v) if k in wanted else v for k, v in s.kwargs.items()}
    return Sample(args, kwargs, s.desc)


def _pick(base: list[Sample], count: int, seed: int) -> list[Sample]:
    """Up to ``count`` samples with elements: the largest, then others drawn by a seeded generator."""

    def size(s: Sample) -> int:
        sizes = []
        s.map_tensors(lambda t: sizes.append(t.numel()) or t)
        return max(sizes, default=0)

    full = [s for s in base if size(s) > 0]
    if not full:
        return []
    largest = max(full, key=size)
    rest = [s for s in full if s is not largest]
    g = torch.Generator().manual_seed(seed)
    order = torch.randperm(len(rest), generator=g).tolist()
    return [largest] + [rest[i] for i in order[: count - 1]]


def _number_args(spec: SuiteSpec) -> list[str]:
    return [name for name, kind in spec.arg_kinds if kind in ("scalar", "scalar?")]


def _with_number(spec: SuiteSpec, s: Sample, name: str, value) -> Sample | None:
    if name in s.kwargs:
        return Sample(list(s.args), {**s.kwargs, name: value}, s.desc)
    names = _names(spec, s)
    if name not in names:
        return None
    args = list(s.args)
    args[names.index(name)] = value
    return Sample(args, dict(s.kwargs), s.desc)


def _zero_dim_operands(spec: SuiteSpec, s: Sample, value) -> Iterator[Sample]:
    """The sample with each tensor argument after the first in turn a 0-dim float64 tensor
    holding ``value`` (not one with a dtype of its own, such as where's condition)."""
    own = dict(spec.arg_dtypes)
    for i, name in enumerate(_names(spec, s)):
        if i == 0 or name not in spec.tensor_args or name in own or not isinstance(s.args[i], torch.Tensor):
            continue
        args = list(s.args)
        args[i] = torch.tensor(float(value), dtype=torch.float64, device=s.args[i].device)
        yield Sample(args, dict(s.kwargs), f"{name} a 0-dim float64 {value!r}; {s.desc}")


def hostile_samples(spec: SuiteSpec, device: str, dtype_name: str) -> Iterator[Sample]:
    dtype = dtype_of(dtype_name)
    base = samples(spec, device, dtype_name)
    seed = zlib.crc32(f"{spec.name}/{dtype_name}/hostile".encode())
    for k, profile in enumerate(profiles(dtype)):
        for s in _pick(base, PER_PROFILE, seed + k):
            h = _apply(spec, s, profile.make, dtype)
            yield Sample(h.args, h.kwargs, f"{profile.name}; {s.desc}")
    picked = _pick(base, 2, seed)
    for value in numbers(spec, dtype_name):
        for name in _number_args(spec):
            for s in picked:
                n = _with_number(spec, s, name, value)
                if n is not None:
                    yield Sample(n.args, n.kwargs, f"{name}={value!r}; {s.desc}")
        if spec.kind == "pointwise" and isinstance(value, float):
            yield from _zero_dim_operands(spec, picked[0], value) if picked else ()


# ---------------------------------------------------------------------------------------------
# Judging a result


def _number_overflows(s: Sample) -> bool:
    """Whether a number argument does not fit the compute type of the sample's first floating
    tensor (float for float16, bfloat16 and float32): what a Scalar parameter refuses, as
    torch's Scalar::to does, though a reference written in Python (x / 1e39) takes it."""
    values = (*s.args, *s.kwargs.values())
    floating = next((a for a in values if isinstance(a, torch.Tensor) and a.is_floating_point()), None)
    top = torch.finfo(
        torch.float64 if floating is not None and floating.dtype == torch.float64 else torch.float32
    )
    numbers = [a for a in values if isinstance(a, float | int) and not isinstance(a, bool)]
    return floating is not None and any(abs(n) > top.max for n in numbers)


def _upcast(s: Sample) -> Sample:
    """The sample in float64 / complex128: floating tensors and dtype arguments widened."""

    def widen(x):
        if isinstance(x, torch.dtype) and (x.is_floating_point or x.is_complex):
            return torch.complex128 if x.is_complex else torch.float64
        return x

    w = s.map_tensors(lambda t: _wide(t) if t.is_floating_point() or t.is_complex() else t.clone())
    return Sample([widen(a) for a in w.args], {k: widen(v) for k, v in w.kwargs.items()}, s.desc)


def _ulp(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The spacing of ``dtype`` at |x| (x in float64): at least the subnormal spacing."""
    info = torch.finfo(dtype)
    a = x.abs().clamp_min(info.tiny)
    return torch.exp2(torch.floor(torch.log2(a))) * info.eps


def _close(
    actual: torch.Tensor, expected: torch.Tensor, allowed: torch.Tensor, signed: torch.Tensor
) -> torch.Tensor:
    """Elementwise: equal (NaN to NaN, inf to the same inf, and where ``signed``, -0.0 only to
    -0.0), or within ``allowed``. Complex values part by part (an infinite real part with a finite
    imaginary one is not NaN); a value with a NaN or an infinite part is one with any other such
    part (C's and torch's complex products of infinities differ in which parts are NaN), and the
    signs of zero parts are not compared (torch's own complex kernels differ in them)."""
    if actual.is_complex():
        expected = expected.to(actual.dtype)
        a, e = torch.view_as_real(actual.resolve_conj()), torch.view_as_real(expected.resolve_conj())
        unsigned = torch.zeros(a.shape, dtype=torch.bool, device=a.device)
        parts = _close(a, e.to(torch.float64), allowed.unsqueeze(-1), unsigned).all(-1)
        return parts | (~actual.isfinite() & ~expected.isfinite())
    a, e = actual.to(torch.float64), expected.to(torch.float64)
    signs = (a.signbit() == e.signbit()) | (a != 0) | ~signed
    same = ((a == e) & signs) | (a.isnan() & e.isnan())
    return same | (((a - e).abs() <= allowed) & ((a != 0) | (e != 0) | ~signed))


def _real(dtype: torch.dtype) -> torch.dtype:
    return {torch.complex64: torch.float32, torch.complex128: torch.float64}.get(dtype, dtype)


def _finite_max(*tensors: torch.Tensor) -> float:
    """The largest finite magnitude among the tensors' elements (0 if none)."""
    top = 0.0
    for t in tensors:
        if t is None or not (t.is_floating_point() or t.is_complex()) or not t.numel():
            continue
        m = t.abs().to(torch.float64)
        m = m[torch.isfinite(m)]
        if m.numel():
            top = max(top, float(m.max()))
    return top


def _forward(spec: SuiteSpec) -> SuiteSpec:
    """A generated backward op's forward op (its formula's accuracy, the manifest's tolerance,
    holds for its derivatives too); any other op itself."""
    if spec.backward_of is None:
        return spec
    return next((s for s in load_specs() if s.name == spec.backward_of), spec)


@dataclass(frozen=True)
class Judge:
    """How close a result must be to torch's computed in float64, in units in the last place
    (ulps) of the output dtype: ``ULPS`` of the element itself, the manifest's tolerance, or 4 times
    as far as torch's own result in the tested dtype is, per element for a pointwise op (the
    formula's conditioning: 1 - r * r near r = 1, exp(-x * x) loses what x * x rounded) and the
    worst over the output for the others (another summation order rounds differently).

    A float64 (complex128) result has no wider reference: torch's own float64 result is the
    reference, ``sensitivity`` is how far it moves when the inputs move by one ulp (their
    conditioning, and torch's own rounding where its algorithm cancels: cdist's |x|^2 + |y|^2 -
    2 x.y at 1e4), 4 times that is allowed, and a pointwise formula's result may differ by ulps of
    the output's largest magnitude, at least 1 (FMA contraction and the libm a formula calls
    differ by that much where it cancels: 1 + tanh(y) near -1); no zero's sign is compared."""

    spec: SuiteSpec
    zero_signs: bool = True
    sensitivity: torch.Tensor | None = None  # float64 results: |torch(perturbed) - torch|
    accuracy: tuple[float, float] | None = None  # (atol, rtol) a tests.hostile accuracy entry states
    reduced: int = 1  # elements summed into each output (the rule's reduction and scan dims)

    def allowed(
        self, expected64: torch.Tensor, native: torch.Tensor | None, dtype: torch.dtype
    ) -> torch.Tensor:
        real = _real(dtype)
        magnitude = expected64.abs().to(torch.float64)
        pointwise = self.spec.kind == "pointwise"
        # A generated backward op's formula is a derivative's sum of products, which cancel (gelu's:
        # sigmoid(g) + x sigmoid(g) (1 - sigmoid(g)) g'); a sum or scan of n elements in another
        # order rounds differently by sqrt(n) ulps: their rounding differs from torch's more.
        units = ULPS.get(dtype, 8) * (4 if self.spec.backward_of else 1) * max(1.0, math.sqrt(self.reduced))
        allowed = units * _ulp(magnitude, real)
        if real == torch.float64:  # no wider reference: ulps of the output's largest magnitude
            top = max(_finite_max(expected64), 1.0) if pointwise else _finite_max(expected64)
            allowed = torch.maximum(allowed, units * _ulp(torch.tensor(top), real))
        if self.accuracy is not None:  # tests.hostile: what the op's own arithmetic reaches
            atol, rtol = self.accuracy
            allowed = torch.maximum(allowed, atol + rtol * expected64.abs().to(torch.float64))
        err = self.sensitivity
        if native is not None and native.numel() and real != torch.float64:
            err = (native.to(expected64.dtype) - expected64).abs().to(torch.float64)
        if err is not None and err.numel():
            err = torch.where(torch.isfinite(err), err, torch.zeros_like(err))
            allowed = torch.maximum(allowed, 4 * (err if pointwise else err.max()))
        return allowed

    def verdict(
        self, actual: torch.Tensor, expected64: torch.Tensor | None, native: torch.Tensor | None
    ) -> str:
        """'' when ``actual`` is right, else what is wrong."""
        reference = native if native is not None else expected64.to(actual.dtype)
        if actual.dtype != reference.dtype or actual.shape != reference.shape:
            mine, theirs = (actual.dtype, tuple(actual.shape)), (reference.dtype, tuple(reference.shape))
            return f"dtype and shape {mine} != torch's {theirs}"
        exact = not (actual.is_floating_point() or actual.is_complex())
        ok = torch.zeros(actual.shape, dtype=torch.bool, device=actual.device)
        if exact:
            for expected in (expected64, native):
                if expected is not None:
                    ok |= actual == expected.to(actual.dtype)
        else:
            # The sign of a zero is a pointwise op's (relu(-0.0) is -0.0), compared where the exact
            # result is a zero: a product that underflows has the sign its rounding gives, and a
            # sum of several terms the sign their order gives; float64 has no exact zero to tell.
            wider = _real(actual.dtype) != torch.float64
            compared = self.zero_signs and wider and self.spec.kind == "pointwise"
            signed = torch.full(actual.shape, compared, dtype=torch.bool, device=actual.device)
            if expected64 is not None:
                signed &= (expected64 == 0).to(actual.device)
                allowed = self.allowed(expected64, native, actual.dtype).to(actual.device)
                rounded = expected64.to(actual.dtype).to(expected64.dtype)
                ok |= _close(actual, rounded, allowed, signed)
            if native is not None:
                allowed = ULPS.get(actual.dtype, 8) * _ulp(_wide(native).abs(), _real(actual.dtype))
                ok |= _close(actual, native, allowed, signed)
        if bool(ok.all()):
            return ""
        where = tuple((~ok).nonzero()[0].tolist())

        def at(t: torch.Tensor):
            return (t[where] if t.dim() else t).item()

        parts = [f"{(~ok).sum().item()} of {ok.numel()} elements wrong, e.g. at {where}: {at(actual)!r}"]
        if expected64 is not None:
            parts.append(f"float64 {at(expected64)!r}")
        if native is not None:
            parts.append(f"torch {at(native)!r}")
        return ", ".join(parts)


CAUGHT = (RuntimeError, IndexError, ValueError, TypeError, NotImplementedError, ZeroDivisionError)


def _perturbed(s: Sample) -> Sample:
    """The sample with every floating element moved by one ulp, up or down at random (seeded):
    what torch's float64 result does then says how far a float64 result may be from it."""
    g = torch.Generator().manual_seed(0)

    def move(t: torch.Tensor) -> torch.Tensor:
        if not (t.is_floating_point() or t.is_complex()):
            return t
        sign = (torch.randint(0, 2, t.shape, generator=g) * 2 - 1).to(device=t.device, dtype=torch.float64)
        return t * (1 + sign * torch.finfo(t.dtype).eps)

    return s.map_tensors(move)


def _sensitivity(s: Sample, reference, wide: tuple) -> tuple:
    """Per output of a float64 sample, |torch(perturbed) - torch| (or Nones)."""
    try:
        moved = _outputs(_perturbed(s).clone().call(reference))
    except CAUGHT:
        return (None,) * len(wide)
    return tuple(
        (m.to(w.dtype) - w).abs().to(torch.float64)
        if w is not None and m.shape == w.shape and (w.is_floating_point() or w.is_complex())
        else None
        for m, w in zip(moved, wide, strict=False)
    )


def _tensors(s: Sample) -> tuple[torch.Tensor, ...]:
    found: list[torch.Tensor] = []
    s.map_tensors(lambda t: found.append(t) or t)
    return tuple(found)


def _reduced(spec: SuiteSpec, s: Sample) -> int:
    """How many elements each output sums (the product of the index space's reduction and scan
    dims, from the op's rule by describe()); 1 where the op has no rule."""
    if not spec.described:
        return 1
    try:
        d = structgen.describe(qualified(spec), *s.args, **s.kwargs)
    except (RuntimeError, ValueError, TypeError, IndexError):
        return 1
    return math.prod(i.size for i in d.index_space if i.kind in ("reduction", "scanned"))


def _all_float64(s: Sample) -> bool:
    """Whether the sample's floating tensors are all float64 or complex128 (nothing wider to
    compute a reference in)."""
    floating = [t for t in _tensors(s) if t.is_floating_point() or t.is_complex()]
    return bool(floating) and all(_real(t.dtype) == torch.float64 for t in floating)


def judge(
    spec: SuiteSpec,
    s: Sample,
    op,
    reference,
    zero_signs: bool = True,
    accuracy: tuple[float, float] | None = None,
) -> str:
    """'' when ``op`` gives what torch gives on ``s`` (within the Judge's tolerance), else what
    differs. Where torch raises, ``op`` must raise the same type; where torch has no kernel for
    the dtype (NotImplementedError), the float64 result alone is the reference, and a refusal
    is fine. A `precise` reference (a generated backward op's formula) is torch's op computed in
    the opmath type (its ``in_opmath`` twin), and its float64 self the reference."""
    own_terms = getattr(reference, "in_opmath", None)
    try:
        native = _outputs(s.clone().call(own_terms or reference))
    except NotImplementedError:
        native = None
    except CAUGHT as e:
        if own_terms is not None:  # torch.clamp(float, 1e39) refuses in float only: not the op's rule
            native = None
        else:
            try:
                s.clone().call(op)
            except CAUGHT as mine:
                if isinstance(mine, type(e)):
                    return ""
                return f"raises {type(mine).__name__} ({mine}) where torch raises {type(e).__name__} ({e})"
            return f"returns where torch raises {type(e).__name__}: {str(e).splitlines()[0]}"
    try:
        actual = _outputs(s.clone().call(op))
    except CAUGHT as e:
        if native is None:  # torch refuses too (it has no kernel for the dtype)
            return ""
        if "without overflow" in str(e) and _number_overflows(s):
            return ""  # a Scalar argument beyond the compute type: refused as torch's (docs/numerics.md)
        return f"raises {type(e).__name__} where torch returns: {str(e).splitlines()[0]}"
    try:
        wide = _outputs(_upcast(s).call(reference))
    except CAUGHT:
        wide = None
    if native is None and wide is None:
        return ""
    count = len(native if native is not None else wide)
    if len(actual) != count:
        return f"{len(actual)} outputs, torch {count}"
    float64 = wide is not None and _all_float64(s)
    moved = _sensitivity(s, reference, wide) if float64 else (None,) * count
    reduced = _reduced(spec, s) if spec.kind != "pointwise" else 1
    problems = []
    for i, a in enumerate(actual):
        n = native[i] if native is not None else None
        w = wide[i] if wide is not None else None
        if w is not None and n is not None and (w.shape != n.shape):
            w = None
        if w is not None and n is not None and not (n.is_floating_point() or n.is_complex()):
            w = w.to(n.dtype)
        judge_ = Judge(spec, zero_signs, moved[i] if i < len(moved) else None, accuracy, reduced)
        problem = judge_.verdict(a, w, n)
        if problem:
            problems.append(f"output {i}: {problem}" if count > 1 else problem)
    return "; ".join(problems)


@dataclass
class _Known:
    """A tests.hostile entry as the check meets it: how many samples it matched and needed."""

    pattern: str
    differs: str
    why: str
    tolerance: tuple[float, float] | None = None
    inherited: bool = False  # a forward op's accuracy entry, on its generated backward op
    matched: int = 0
    needed: int = 0


def _known(spec: SuiteSpec, dtype: str, device: str) -> list[_Known]:
    """The spec's tests.hostile entries for this dtype and device, and its forward op's accuracy
    entries if it is a generated backward op."""

    def applies(dtypes, devices) -> bool:
        return (not dtypes or dtype in dtypes) and (not devices or device in devices)

    own = [
        _Known(p, how, why, tol)
        for p, dtypes, how, why, tol, devices, gradients in spec.hostile
        if applies(dtypes, devices) and not gradients
    ]
    forward = _forward(spec)
    if forward is spec:
        return own
    # The forward's accuracy entries (`of: gradients` ones too) hold for its gradients, which are
    # not each held to need them: where a derivative cancels, the build's FMA contraction and ISA
    # move which samples land beyond the op's own bound.
    inherited = [
        _Known(p, how, why, tol, inherited=True)
        for p, dtypes, how, why, tol, devices, gradients in forward.hostile
        if how == "accuracy" and applies(dtypes, devices)
    ]
    return own + inherited


def _judged(spec: SuiteSpec, s: Sample, op, reference, known: list[_Known]) -> str:
    """judge(), with the sample's tests.hostile entries: an accuracy entry widens the tolerance,
    and the first other entry says how the package may differ from torch on it."""
    text = repr(s)  # the description and the arguments (a number's value, a str's)
    accurate = next((k for k in known if k.differs == "accuracy" and re.search(k.pattern, text)), None)
    accuracy = accurate.tolerance if accurate else None
    if accurate is not None:
        accurate.matched += 1
        if judge(spec, s, op, reference):
            accurate.needed += 1
    listed = next((k for k in known if k.differs != "accuracy" and re.search(k.pattern, text)), None)
    if listed is None:
        return judge(spec, s, op, reference, accuracy=accuracy)
    listed.matched += 1
    if listed.differs == "refuses":
        try:
            s.clone().call(op)
        except CAUGHT:
            listed.needed += 1
            return ""
        return f"returns, but tests.hostile says it refuses ({listed.why})"
    if listed.differs == "zero_signs":
        if judge(spec, s, op, reference, accuracy=accuracy):
            listed.needed += 1
        return judge(spec, s, op, reference, zero_signs=False, accuracy=accuracy)
    problem = judge(spec, s, op, reference, accuracy=accuracy)  # values: torch's are not the reference
    if problem.startswith("raises "):
        return problem
    listed.needed += bool(problem)
    return ""


def _reference_of(spec: SuiteSpec, s: Sample, op_spec: SuiteSpec, kernels: str):
    """torch's op, or for a random op whose CUDA kernels draw their own bits (tests.bits_reference)
    the result its own draw on the sample should give (the same seed draws the same bits again)."""
    bits = compiled(spec).bits_reference
    if kernels != "cuda" or bits is None:
        return compiled(spec).reference
    drawn = s.clone().call(functional(op_spec))
    return lambda *args, **kwargs: bits(drawn, *args, **kwargs)


def _run(spec: SuiteSpec, device: str, dtype: str, op_spec: SuiteSpec, kernels: str) -> None:
    """The hostile samples on ``device`` through ``op_spec``'s overloads, whose kernels are the
    ``kernels`` device's (cuda: the emulated CUDA path on CPU tensors)."""
    reference = compiled(spec).reference
    if reference is None:
        pytest.skip("no tests.reference in the manifest")
    known = _known(spec, dtype, kernels)
    failures = []
    total = 0
    # Each kernel variant pinned in turn (the autotuner's pick depends on timings): a difference
    # is needed when some variant shows it. The emulated CUDA path runs what its autotuner picks.
    variants = dict(spec.kernel_variants).get(device, ()) if kernels == device else ()
    for variant in variants or (None,):
        pinned = _autotune().pin(f"{spec.out}@{device}", variant) if variant else contextlib.nullcontext()
        with pinned:
            for s in hostile_samples(spec, device, dtype):
                total += 1
                problem = _judged(
                    spec, s, functional(op_spec), _reference_of(spec, s, op_spec, kernels), known
                )
                if problem:
                    failures.append(f"{s!r}{f' (kernel {variant!r})' if variant else ''}: {problem}")
    if not total:
        pytest.skip("no hostile values for this dtype (bool)")
    for k in known:
        if not k.needed and not k.inherited:
            what = (
                "matches no sample"
                if not k.matched
                else f"is not needed by the {k.matched} samples it matches"
            )
            failures.append(
                f"tests.hostile {{samples: {k.pattern!r}, differs: {k.differs}}} {what}: remove it"
            )
    assert not failures, f"{spec.name}: {len(failures)} of {total} hostile samples wrong:\n" + "\n".join(
        failures[:12]
    )


@check()
def check_hostile(spec: SuiteSpec, device: str, dtype: str) -> None:
    """Hostile values (offsets, masks, tiny, -0.0, NaN/inf, integer limits, numbers beyond the
    compute type's range) give torch's result, within a few ulps of float64, or raise as torch does."""
    _run(spec, device, dtype, spec, device)


@check(applies=lambda spec: "cuda" in spec.devices)
def check_hostile_emulated_cuda(spec: SuiteSpec, device: str, dtype: str) -> None:
    """The hostile check on the CUDA path, run by the CPU emulator."""
    if torch.cuda.is_available():
        pytest.skip("a GPU is present: the hostile check runs the same kernels on cuda")
    _skip_unless_cuda_kernel(spec, device, dtype)
    _run(spec, "cpu", dtype, emulated(spec), "cuda")
