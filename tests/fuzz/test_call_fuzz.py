"""Call fuzzer: seeded random calls of every torch.ops.structops overload that has a torch counterpart,
compared with that counterpart. Where torch raises, structops must raise; where torch returns,
structops must return the same dtype, shape and values, and leave every tensor argument (out=,
inplace self, aliased inputs) as torch leaves it.

Counterparts: the aten overload of the same packet with the same argument names (the out= and
inplace overloads too), else, for a functional, the reference in the manifest's `tests:`.
Inputs: every torch dtype, random shapes (0-dim, zero-size, size-1, broadcasting), layouts
(transposed, strided, stride-0, channels_last, storage offset), extreme values, perturbed
arguments (out-of-range dims, invalid values) and out= tensors of wrong dtype or size, aliasing
or overlapping an input. Budget and seeds: tests/fuzz/settings.py.
"""

from __future__ import annotations

import faulthandler
import functools
import math
import random
import re
import time
import types
import warnings
from dataclasses import dataclass

import pytest
import torch
from structgen.codegen.dest.conformance_suite import SuiteSpec
from structgen.codegen.manifest import load_manifest
from structgen.conformance import samples
from structgen.conformance.spec import compiled, load_specs, overload

from tests.fuzz import settings
from tests.under_test import MANIFEST

CI_CASES, LONG_CASES = 4000, 200_000
HANG_SECONDS = 120  # a call that takes this long dumps every thread's stack and ends the process
ACCEPTED_ERRORS = (RuntimeError, IndexError, ValueError, TypeError, NotImplementedError)

COMMON_DTYPES = [
    torch.bool,
    torch.uint8,
    torch.int8,
    torch.int16,
    torch.int32,
    torch.int64,
    torch.float16,
    torch.bfloat16,
    torch.float32,
    torch.float64,
    torch.complex64,
    torch.complex128,
]
RARE_DTYPES = [torch.uint16, torch.uint32, torch.uint64, torch.float8_e4m3fn, torch.float8_e5m2]
LAYOUTS = ["transposed", "strided", "expanded", "channels_last", "offset"]
OUT_KINDS = [
    "empty",
    "exact",
    "exact",
    "wrong_dtype",
    "wrong_size",
    "transposed",
    "alias_input",
    "overlap_input",
    "expanded",
]

# Documented deviations from torch (docs/pointwise.md, "Known differences from torch").
GELU_INF = "docs/pointwise.md: gelu(+inf) is +inf by the formula, NaN in torch's CPU kernel"
FUSED_ROUNDING = "docs/pointwise.md: fused formulas round once; float16/bfloat16 may differ by one ulp"
TRUNC_HALF = "docs/pointwise.md: div(rounding_mode='trunc') on float16/bfloat16 may differ by 1"
LOGSUMEXP_ALL = "manifest doc of logsumexp: dim=[] reduces every dim (torch 2.13 fails on most inputs)"
ATTENTION_WITHOUT_KEYS = (
    "manifest hostile of scaled_dot_product_attention: with no keys torch's math path gives NaN in every "
    "head once the query holds a NaN or inf; structops gives the empty sum's 0"
)
RMS_NORM_SHAPE = (
    "manifest reference of rms_norm: torch's _fused_rms_norm skips the normalized_shape checks its public "
    "rms_norm makes (an empty one reduces every dim); structops refuses as torch.nn.functional.rms_norm does"
)
PYTHON_REFERENCE = "the manifest's Python reference covers only the declared dtypes and valid dims"
# Deliberate: the generated wrappers hold every out= and written argument to PyTorch's overlap rules
# (docs/design.md, decision 2); some torch kernels (mm, linear, argmin, pooling, batch_norm's
# running stats) skip the check and return values that depend on the aliasing, and torch resizes
# an out= that is also an input of another shape, which structops refuses for every op.
OVERLAP = "design.md decision 2: overlap rules on every written argument, where torch skips them"
OVERLAP_ERROR = re.compile(
    r"unsupported operation: .* refer(s)? to a single memory location|doesn't match the broadcast shape"
    r" .*\('[^']+' is also the input"
)
# Deliberate: torch skips some dtype checks when an operand is empty (bmm of int32 and bfloat16
# batches of size 0, gather with an empty bfloat16 index); structops checks dtypes before sizes, so a
# call that is wrong for non-empty operands is wrong for empty ones too.
EMPTY_OPERAND = "torch skips this dtype check for empty operands; structops checks dtypes whatever the sizes"
DTYPE_CHECK_ERROR = re.compile(
    r"must have the same dtype|which \w+ does not support \(supported: |not implemented for '|class indices"
    r" must be Long"
)
# Deliberate: structops computes dtypes and layouts torch's kernel lacks, with torch's semantics
# where torch has them: avg_pool2d on int32..uint8 truncates as on int64, data movement (take,
# masked_select, gather) on uint16..uint64 and float8, cdist on float16/bfloat16 in float (torch's
# CPU kernel: float32/float64, its mm path any float), a sum-like scan in bool saturates as sum
# does, max_pool3d on an unbatched 4-D input whose strides look channels-last.
EXTRA_COVERAGE = "docs/design.md: structops computes dtypes and layouts torch's kernel lacks"
MISSING_KERNEL = re.compile(r"not implemented for '\w+'|Unsupported memory format|Unsupported dtype \w+")
# torch's own out= overload raises or writes other values than torch's functional, while structops'
# out= writes what torch's functional returns: a torch bug (2.13's binary_cross_entropy.out reduces
# [0, 1, 1, 0] against [1, 0, 1, 0] to 100 where the functional gives 50; linear.out of int16 with
# a [1] bias into a transposed out raises a size mismatch).
TORCH_OUT_BUG = "torch's out= overload disagrees with torch's functional, which structops' out= matches"
# docs/pointwise.md: a fused formula promotes all its operands at once, torch's chain pairwise.
FUSED_PROMOTION = "docs/pointwise.md: a fused formula promotes all operands at once (torch's chain: pairwise)"
FUSED = ("mul_add", "bias_gelu", "add_relu")
# Deliberate: an op's dtypes are declared in the manifest (meta.allowed, the generated kernels'
# dtypes); a dtype outside them is rejected with a message that names the supported ones.
UNDECLARED_DTYPE = "dtype outside the op's declared dtypes (manifest meta.allowed / kernel dtypes)"
UNDECLARED_ERROR = re.compile(r"which \w+ does not support \(supported: |no CPU kernel for dtype ")
# Deliberate (docs/design.md, "Known differences from torch"): calls torch takes and structops refuses
# with a message, and values structops defines otherwise.
WHERE_UINT8 = "torch deprecates a uint8 condition (it warns); structops takes bool conditions only"
LINEAR_BIAS = (
    "docs/design.md: linear's bias has the input's dtype at every rank (torch's 2-D path demands it too)"
)
CROSS_ENTROPY_ARGS = (
    "cross_entropy_loss checks label_smoothing in [0, 1] and reduction in 0..2 (torch lets NaN, -1, 64"
    " through)"
)
COMPLEX_TO_REAL = (
    "a complex result is not cast into a real out= (torch's mean.out alone drops the imaginary part)"
)
TRUTH_OUT = "docs/design.md: all/any take an out of their result dtype only (torch: bool or uint8)"
MSE_HALF = "mse_loss squares float16/bfloat16 differences in float (torch rounds each square: inf past 65504)"
LAYER_NORM_INF = "layer_norm with an infinity: a row's mean is it, an infinite weight gives ±inf (torch: NaN)"
LERP_OUT = (
    "lerp's out= takes the result dtype only (torch casts into any out, even a narrower one, when weight is"
    " 0-dim)"
)
BATCH_NORM_INF = (
    "batch_norm computes (x - mean) * scale + bias: an infinite scale gives ±inf where torch's x * scale +"
    " (bias - mean * scale) gives NaN"
)
CDIST_INF_NAN = (
    "cdist with p=inf propagates a NaN coordinate (torch's CPU kernel drops a NaN that follows a number)"
)
COMPLEX_INF = (
    "complex products with an infinite part: torch's kernels give NaN parts where structops' keep finite ones"
)
COMPLEX_INF_DOT = (
    "complex vectors with an infinity: matmul runs mm, whose NaN torch's mm gives too (torch's matmul: dot)"
)
# Not a difference: structops' value is what torch's op gives in float64, rounded once to the result's
# dtype, and torch's own value is not (its float32/float16 intermediates overflow or round twice).
TORCH_ROUNDING = "structops matches torch's op computed in float64; torch's own result rounds worse"
# Not a difference: contractions and reductions round a sum whose order is the kernel's, so results
# differ from torch's by a few ulps of the largest result (of the narrowest input float dtype: a
# float32 mm with K=300 differs by up to 3).
SUMMING = ("mm", "bmm", "matmul", "addmm", "linear", "cdist", "mse_loss", "cross_entropy_loss", "batch_norm")


@dataclass(frozen=True)
class Target:
    spec: SuiteSpec
    variant: str  # functional | out | inplace
    name: str  # the structops overload, "add.out"
    torch_op: object

    @property
    def ours(self):
        return overload(self.spec, self.name)


def _signature(op) -> tuple:
    arguments = [(a.name, a.kwarg_only, str(a.type).replace("SymInt", "int")) for a in op._schema.arguments]
    return arguments, len(op._schema.returns)


def aten_counterpart(op, qualified: str):
    """The aten overload of the same packet with the same arguments and as many results, preferring
    the same name."""
    packet, _, name = qualified.partition(".")
    aten = getattr(torch.ops.aten, packet, None)
    if aten is None:
        return None
    for aten_name in [name or "default", *sorted(aten.overloads())]:
        candidate = getattr(aten, aten_name, None)
        if candidate is not None and _signature(candidate) == _signature(op):
            return candidate
    return None


@functools.cache
def targets() -> tuple[list[Target], dict[str, str]]:
    """The overloads fuzzed, and those not fuzzed with the reason."""
    fuzzed, skipped = [], {}
    # By op name: a case index (KNOWN_DEFECTS, a failure's reproduce line) picks from this order.
    for spec in sorted(load_specs(), key=lambda spec: spec.name):
        for variant in ("functional", "out", "inplace"):
            name = getattr(spec, variant)
            if name is None:
                continue
            if spec.backward_of:
                skipped[name] = f"{spec.backward_of}'s generated gradient: called by autograd, not by users"
                continue
            torch_op = aten_counterpart(overload(spec, name), name)
            if torch_op is None and variant == "functional":
                torch_op = compiled(spec).reference
            if torch_op is None:
                skipped[name] = "no aten overload with the same arguments"
            elif spec.kind not in ("pointwise", "reduction") and not spec.samples:
                skipped[name] = "no tests.samples to shape its arguments"
            else:
                fuzzed.append(Target(spec, variant, name, torch_op))
    for fn in load_manifest(MANIFEST).functions:
        if fn.composite is not None:
            targets = ", ".join(str(case.target) for case in fn.composite)
            skipped[str(fn.func.name)] = f"a call of {targets} (composite:), which is fuzzed"
    return fuzzed, skipped


# ---------------------------------------------------------------------------------------------
# Building one call. build() draws everything from the case seed, so calling it twice gives two
# identical, independent sets of arguments: one for structops, one for torch.


def _dtype(rng: random.Random) -> torch.dtype:
    return rng.choice(RARE_DTYPES) if rng.random() < 0.05 else rng.choice(COMMON_DTYPES)


def _tensor(rng, gen, shape, dtype, domain) -> torch.Tensor:
    x = samples.values(tuple(shape), dtype, "cpu", domain, gen)
    if x.numel() and rng.random() < 0.15 and dtype != torch.bool:
        if dtype.is_floating_point or dtype.is_complex:
            special = rng.choice([math.inf, -math.inf, math.nan, -0.0, 1e30])
        else:
            info = torch.iinfo(dtype)
            special = min(
                rng.choice([info.min, info.max, 0]), 2**63 - 1
            )  # uint64's max: no Python-to-C++ path
        x.view(-1)[rng.randrange(x.numel())] = special
    layout = rng.choice(LAYOUTS) if x.dim() and rng.random() < 0.5 else "contiguous"
    if layout == "offset":
        buf = torch.empty(x.numel() + 3, dtype=dtype)
        return buf[3:].view(x.shape).copy_(x)
    if layout == "channels_last" and x.dim() != 4:
        return x
    return samples.laid_out(x, layout)


def _shape(rng) -> list[int]:
    return [rng.choice([0, 1, 1, 2, 3, 5]) for _ in range(rng.choice([0, 1, 1, 2, 2, 3, 4]))]


def _perturb(value, rng):
    """An argument changed to a nearby or invalid value of the same kind."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return rng.choice([value - 1, value + 1, -value, 0, -1, 1000, -1000, value + 64])
    if isinstance(value, float):
        return rng.choice([0.0, -1.0, math.nan, math.inf, 1e-30, value * 2])
    if isinstance(value, list | tuple) and all(isinstance(v, int) for v in value):
        value = list(value)
        edit = rng.choice(["append", "drop", "replace", "clear"])
        if edit == "append" or not value:
            return value + [rng.randint(-5, 10)]
        if edit == "drop":
            return value[:-1]
        if edit == "replace":
            value[rng.randrange(len(value))] = rng.randint(-5, 10)
            return value
        return []
    if isinstance(value, str):
        return rng.choice(["bogus", "", value.upper()])
    if isinstance(value, torch.Tensor):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # complex to real
            return value.to(_dtype(rng))
    return value


def _scalars(spec: SuiteSpec, rng) -> dict:
    choices = list(samples.scalar_choices(spec))
    return dict(rng.choice(choices))


def _pointwise(spec, rng, gen, dtype, domain) -> dict:
    shape = _shape(rng)
    values = _scalars(spec, rng)
    for name in spec.tensor_args:
        own = shape[len(shape) - rng.randint(0, len(shape)) :]
        own = [1 if rng.random() < 0.2 else s for s in own]
        if rng.random() < 0.03:
            own = _shape(rng)  # most likely not broadcastable
        own_dtype = _dtype(rng) if rng.random() < 0.2 else dtype
        values[name] = _tensor(rng, gen, own, own_dtype, domain)
    return values


def _reduction(spec, rng, gen, dtype, domain) -> dict:
    shape = _shape(rng)
    (name,) = spec.tensor_args
    sources = compiled(spec)
    values = {
        **sources.defaults,
        name: _tensor(rng, gen, shape, dtype, domain),
        "keepdim": rng.random() < 0.5,
    }
    listed = sources.arg_values.get("dim", (None, []))
    rank = max(len(shape), 1)
    if any(isinstance(d, int) for d in listed):
        values["dim"] = rng.choice([None, rng.randint(-rank - 1, rank)])
    else:
        dims = [rng.randint(-rank - 1, rank) for _ in range(rng.randint(0, 3))]
        values["dim"] = rng.choice([None, dims, dims, dims])
    for arg, vals in sources.arg_values.items():
        if arg != "dim":
            values[arg] = rng.choice(vals)
    return values


def _from_samples(spec, rng, gen, dtype, domain) -> tuple[list, dict]:
    make = rng.choice(compiled(spec).samples)
    try:
        args, kwargs = make(lambda *shape: _tensor(rng, gen, shape, dtype, domain))
    except (RuntimeError, NotImplementedError):  # the sample itself needs another dtype (where's t() > 0)
        args, kwargs = make(lambda *shape: _tensor(rng, gen, shape, torch.float32, domain))
    return list(args), dict(kwargs)


def _outs(target: Target, args, kwargs, rng, gen) -> dict:
    """out= tensors for ``target``: sized from torch's functional result, or deliberately wrong."""
    spec = target.spec
    functional = next(t for t in targets()[0] if t.spec is spec and t.variant == "functional")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = functional.torch_op(
                *[_clone(a) for a in args], **{k: _clone(v) for k, v in kwargs.items()}
            )
    except Exception:  # noqa: BLE001 - the call itself is what the case compares
        expected = torch.empty(0)
    results = list(expected) if isinstance(expected, tuple | list) else [expected]
    first = next((a for a in args if isinstance(a, torch.Tensor)), None)

    def one(r: torch.Tensor) -> torch.Tensor:
        kind = rng.choice(OUT_KINDS)
        dtype = _dtype(rng) if kind == "wrong_dtype" else r.dtype
        if kind == "exact" or kind == "wrong_dtype":
            return (
                torch.full(r.shape, 7, dtype=dtype)
                if dtype != torch.bool
                else torch.empty(r.shape, dtype=dtype)
            )
        if kind == "wrong_size":
            return torch.zeros(_shape(rng), dtype=dtype)
        if kind == "transposed" and r.dim() >= 2:
            return torch.empty(tuple(reversed(r.shape)), dtype=dtype).permute(*reversed(range(r.dim())))
        if kind == "alias_input" and first is not None:
            return first
        if kind == "overlap_input" and first is not None and first.is_contiguous() and first.numel() >= 2:
            return first.view(-1)[1:]
        if kind == "expanded" and r.dim() >= 1 and r.numel() > 1:
            return torch.empty((1, *r.shape[1:]), dtype=dtype).expand(r.shape)
        return torch.empty(0, dtype=dtype)

    if spec.list_out:
        return {spec.outs[0]: [one(r) for r in results]}
    return {name: one(r) for name, r in zip(spec.outs, results)}


def _clone(x):
    if isinstance(x, torch.Tensor):
        return x.clone()
    if isinstance(x, list | tuple) and x and all(isinstance(e, torch.Tensor) for e in x):
        return [e.clone() for e in x]
    return x


def build(target: Target, seed: int) -> tuple[list, dict, str]:
    """The arguments of one call (fresh tensors each time) and what it is made of."""
    rng, gen = random.Random(seed), torch.Generator().manual_seed(seed)
    spec = target.spec
    dtype = _dtype(rng)
    domain = spec.domain if rng.random() < 0.7 else "any"
    if spec.samples:
        args, kwargs = _from_samples(spec, rng, gen, dtype, domain)
    else:
        values = (_pointwise if spec.kind == "pointwise" else _reduction)(spec, rng, gen, dtype, domain)
        sample = samples.call_args(spec, values, "")
        args, kwargs = sample.args, sample.kwargs
    if rng.random() < 0.25:  # one argument changed to a nearby or invalid value
        where = rng.randrange(len(args) + len(kwargs))
        if where < len(args):
            args[where] = _perturb(args[where], rng)
        else:
            key = list(kwargs)[where - len(args)]
            kwargs[key] = _perturb(kwargs[key], rng)
    if target.variant == "out":
        kwargs.update(_outs(target, args, kwargs, rng, gen))
    return args, kwargs, f"dtype={dtype} domain={domain}"


# ---------------------------------------------------------------------------------------------
# Comparing one call


def _call(fn, args, kwargs):
    # From one seed, so a random op (dropout) and torch's draw the same bits; the fuzz's own
    # generator state is kept.
    with warnings.catch_warnings(), torch.random.fork_rng(devices=[]):
        warnings.simplefilter("ignore")
        torch.manual_seed(0)
        try:
            return fn(*args, **kwargs), None
        except Exception as e:  # noqa: BLE001 - the exception is compared with torch's
            return None, e


def _tensors(value) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, list | tuple | dict):
        items = value.values() if isinstance(value, dict) else value
        return [t for v in items for t in _tensors(v)]
    return []


def tolerance(target: Target, dtype: torch.dtype, args, kwargs, expected: torch.Tensor) -> dict:
    summed = {t.dtype for t in _tensors(args) if t.is_floating_point() and t.element_size() > 1}
    sums = target.spec.kind == "reduction" or target.spec.name in SUMMING
    if summed and sums and expected.is_floating_point() and expected.element_size() > 1 and expected.numel():
        eps = max(torch.finfo(d).eps for d in summed)
        largest = float(expected.detach().double().abs().nan_to_num(0, 0, 0).max())
        atol, rtol = dict(target.spec.tolerance).get(str(dtype).removeprefix("torch."), (1e-5, 1.3e-6))
        return {"atol": max(atol, 8 * eps * largest), "rtol": max(rtol, 2 * eps)}
    name = str(dtype).removeprefix("torch.")
    if name in dict(target.spec.tolerance):
        atol, rtol = dict(target.spec.tolerance)[name]
        return {"atol": atol, "rtol": rtol}
    # A wider out= than the computation: torch rounds to the computation's dtype first, and the
    # comparison is as close as that dtype allows.
    computed = dtype
    floats = [t.dtype for t in _tensors(args) if t.is_floating_point() and t.element_size() > 1]
    if floats and dtype.is_floating_point and dtype.itemsize > 1 and target.spec.kind == "pointwise":
        narrowest = functools.reduce(torch.promote_types, floats)
        computed = narrowest if torch.finfo(narrowest).eps > torch.finfo(dtype).eps else dtype
    half = computed in (torch.float16, torch.bfloat16)
    if half and target.spec.name in FUSED:  # FUSED_ROUNDING
        return {"atol": 1e-2, "rtol": 2 * torch.finfo(computed).eps}
    if half and kwargs.get("rounding_mode") == "trunc":  # TRUNC_HALF
        return {"atol": 1, "rtol": 0}
    if computed != dtype:  # torch.testing's defaults for the computation's dtype
        return {"atol": 1e-5, "rtol": {torch.float16: 1e-3, torch.bfloat16: 1.6e-2}.get(computed, 1.3e-6)}
    return {}


def _attention_without_keys(args) -> bool:
    """No keys (s = 0) and a query that is not all finite: torch's NaN everywhere."""
    tensors = _tensors(args)
    return (
        len(tensors) >= 2
        and tensors[1].dim() >= 2
        and tensors[1].size(-2) == 0
        and not bool(torch.isfinite(tensors[0]).all())
    )


def documented(
    target: Target,
    dtype: torch.dtype,
    args,
    kwargs,
    ours: Exception | None = None,
    theirs: Exception | None = None,
) -> str | None:
    """The documented deviation that explains a difference, if one does."""
    skip = dict(target.spec.skips).get(str(dtype).removeprefix("torch."))
    if ours is not None and skip:
        return f"manifest skip: {skip}"
    if ours is not None and OVERLAP_ERROR.search(str(ours)):
        return OVERLAP
    if ours is None and theirs is not None and MISSING_KERNEL.search(str(theirs)):
        return EXTRA_COVERAGE
    empty_operand = any(t.numel() == 0 for t in _tensors(args))
    if ours is not None and theirs is None and empty_operand and DTYPE_CHECK_ERROR.search(str(ours)):
        return EMPTY_OPERAND
    names = {str(t.dtype).removeprefix("torch.") for t in _tensors((args, kwargs))}
    if ours is not None and UNDECLARED_ERROR.search(str(ours)) and not names <= set(target.spec.dtypes):
        return UNDECLARED_DTYPE
    # A Python reference from the manifest (a lambda, over_dims) is written for the op's declared
    # dtypes and valid dims; elsewhere it does not speak for torch.
    python_reference = not isinstance(target.torch_op, torch._ops.OpOverload | types.BuiltinFunctionType)
    invalid_dims = isinstance(ours, IndexError) or "multiple times" in str(ours)
    if python_reference and (not names <= set(target.spec.dtypes) or invalid_dims):
        return PYTHON_REFERENCE
    if theirs is not None and target.spec.name == "logsumexp" and _dim(target, args, kwargs) == []:
        return LOGSUMEXP_ALL
    if ours is not None and target.spec.name == "rms_norm" and "normalized_shape" in str(ours):
        return RMS_NORM_SHAPE
    if target.spec.name == "scaled_dot_product_attention" and _attention_without_keys(args):
        return ATTENTION_WITHOUT_KEYS
    if ours is not None and target.name.startswith("where") and _tensors(args)[0].dtype == torch.uint8:
        return WHERE_UINT8
    zero_dim_weight = (
        target.name.startswith("lerp") and len(_tensors(args)) > 2 and _tensors(args)[2].dim() == 0
    )
    if ours is not None and zero_dim_weight and "does not cast its result" in str(ours):
        return LERP_OUT
    if ours is not None and target.name.startswith("linear") and "'bias' has dtype" in str(ours):
        return LINEAR_BIAS
    if ours is not None and re.search(
        r"label_smoothing must be in \[0, 1\]|reduction must be 0 \(none\)", str(ours)
    ):
        return CROSS_ENTROPY_ARGS
    complex_to_real = any(t.is_complex() for t in _tensors(args)) and not any(
        t.is_complex() for t in _tensors(kwargs)
    )
    if ours is not None and "can't be cast to the desired output type" in str(ours) and complex_to_real:
        return COMPLEX_TO_REAL
    if (
        ours is not None
        and target.name.split(".")[0] in ("all", "any")
        and "does not cast its result" in str(ours)
    ):
        return TRUTH_OUT
    if target.spec.name in ("gelu", "bias_gelu") and any(
        t.is_floating_point() and bool(t.float().isinf().any()) for t in _tensors((args, kwargs))
    ):
        return GELU_INF
    return None


def documented_value(target: Target, args, label: str, index: int, ours, theirs) -> str | None:
    """The documented deviation that explains a difference of values, if one does."""
    tensors = _tensors(args)
    infinite = any((t.is_floating_point() or t.is_complex()) and bool(t.isinf().any()) for t in tensors)
    if target.spec.name in FUSED and len({t.dtype for t in tensors}) > 1:
        return FUSED_PROMOTION
    half = any(t.dtype in (torch.float16, torch.bfloat16) for t in tensors)
    overflowed = bool(theirs.isinf().any()) and not bool(ours.isinf().any())
    if target.spec.name == "mse_loss" and half and not infinite and overflowed:
        return MSE_HALF
    if target.spec.name == "layer_norm" and label == "result" and infinite:
        return LAYER_NORM_INF
    if target.spec.name == "matmul" and infinite and any(t.is_complex() and t.dim() == 1 for t in tensors):
        return COMPLEX_INF_DOT
    if target.spec.name == "batch_norm" and infinite:
        return BATCH_NORM_INF
    if infinite and any(t.is_complex() for t in tensors) and theirs.is_complex():
        return COMPLEX_INF
    nan = any(t.is_floating_point() and bool(t.isnan().any()) for t in tensors)
    if target.spec.name == "cdist" and nan and math.isinf(args[2] if len(args) > 2 else 2.0):
        return CDIST_INF_NAN
    return None


def _dim(target: Target, args, kwargs):
    positional = target.spec.positional
    return args[positional.index("dim")] if "dim" in positional[: len(args)] else kwargs.get("dim")


def describe(args, kwargs) -> str:
    def show(x):
        if isinstance(x, torch.Tensor):
            text = (
                f"Tensor(shape={tuple(x.shape)}, stride={x.stride()}, offset={x.storage_offset()}, "
                f"dtype={x.dtype}"
            )
            return text + (f", values={x.tolist()})" if x.numel() <= 24 else ")")
        if isinstance(x, list | tuple) and x and isinstance(x[0], torch.Tensor):
            return "[" + ", ".join(map(show, x)) + "]"
        return repr(x)

    return ", ".join([show(a) for a in args] + [f"{k}={show(v)}" for k, v in kwargs.items()])


def torch_crashes(target: Target, args, kwargs) -> str | None:
    """Calls that crash torch's own kernel, so its reference cannot be called: structops must
    raise there.

    - torch 2.13's native_batch_norm dereferences absent running statistics in evaluation mode (a
      segfault: `aten.native_batch_norm(x, w, None, None, None, False, 0.0, 1e-3)`).
    - An out= tensor with internal overlap (expanded): torch's max_pool3d_with_indices.out writes
      `indices` as if it were contiguous, past the end of its storage (heap corruption: glibc's
      "corrupted double-linked list" later in the process, seed 0 case 35102); TensorIterator ops
      raise, other kernels need not check, so no such out= is handed to torch."""
    outs = [kwargs[name] for name in target.spec.outs if name in kwargs] if target.variant == "out" else []
    if any(torch._debug_has_internal_overlap(t) == 1 for t in _tensors(outs)):
        return "an out= with internal overlap, which some torch 2.13 kernels write past its storage"
    if target.spec.name != "batch_norm":
        return None
    bound = dict(zip(target.spec.positional, args)) | dict(kwargs)
    if not bound.get("training", False) and (
        bound.get("running_mean") is None or bound.get("running_var") is None
    ):
        return "native_batch_norm segfaults in evaluation mode without running statistics (torch 2.13)"
    return None


def torch_out_disagrees(target: Target, seed: int, ours) -> bool:
    """Whether structops' out= wrote what torch's functional returns on the same arguments (so a
    difference from torch's out= overload is torch's)."""
    functional = next((t for t in targets()[0] if t.spec is target.spec and t.variant == "functional"), None)
    if (
        target.variant != "out"
        or functional is None
        or not isinstance(functional.torch_op, torch._ops.OpOverload)
    ):
        return False
    args, kwargs, _ = build(target, seed)
    value, error = _call(
        functional.torch_op, args, {k: v for k, v in kwargs.items() if k not in target.spec.outs}
    )
    actual, expected = _tensors(ours), _tensors(value)
    if error is not None or len(actual) != len(expected):
        return False
    try:
        for a, e in zip(actual, expected, strict=True):
            assert a.dtype == e.dtype
            torch.testing.assert_close(
                a, e, equal_nan=True, check_stride=False, **tolerance(target, e.dtype, args, kwargs, e)
            )
    except AssertionError:
        return False
    return True


def _widened(value):
    """value with every float tensor in float64 and every complex one in complex128."""
    if isinstance(value, torch.Tensor):
        if value.is_complex():
            return value.to(torch.complex128)
        return value.double() if value.is_floating_point() else value
    if isinstance(value, list | tuple):
        return type(value)(_widened(v) for v in value)
    if isinstance(value, dict):
        return {k: _widened(v) for k, v in value.items()}
    return value


def torch_rounds_worse(target: Target, seed: int, index: int, ours: torch.Tensor) -> bool:
    """Whether structops' result #index agrees, to its dtype's precision, with torch's op run on the
    same values in float64, where torch's own result did not: the difference is torch's rounding
    (float32 statistics that overflow, a float16 product rounded twice), not an error of ours."""
    if not ours.is_floating_point() and not ours.is_complex():
        return False
    args, kwargs, _ = build(target, seed)
    if target.variant == "out":
        kwargs = {k: v for k, v in kwargs.items() if k not in target.spec.outs}
        functional = next(
            (t for t in targets()[0] if t.spec is target.spec and t.variant == "functional"), None
        )
        op = functional.torch_op if functional else None
    else:
        op = target.torch_op
    if op is None:
        return False
    value, error = _call(op, _widened(args), _widened(kwargs))
    exact = _tensors(value)
    if error is not None or index >= len(exact) or exact[index].shape != ours.shape:
        return False
    try:
        torch.testing.assert_close(ours, exact[index].to(ours.dtype), equal_nan=True, check_stride=False)
    except (AssertionError, RuntimeError, TypeError):
        return False
    return True


def compare(target: Target, seed: int) -> tuple[str | None, str | None]:
    """(failure, note): a failure is a difference from torch; a note an accepted one (exception
    types, documented deviations)."""
    ours_args, ours_kwargs, what = build(target, seed)
    theirs_args, theirs_kwargs, _ = build(target, seed)
    shown = f"{target.name}({describe(theirs_args, theirs_kwargs)}) [{what}]"
    ours, ours_error = _call(target.ours, ours_args, ours_kwargs)
    if crash := torch_crashes(target, theirs_args, theirs_kwargs):
        if ours_error is None:
            return f"structops returns where torch crashes ({crash}): {shown}", None
        return None, f"{target.name}: not called in torch: {crash}"
    theirs, theirs_error = _call(target.torch_op, theirs_args, theirs_kwargs)
    dtype = next((t.dtype for t in _tensors(theirs_args)), torch.float32)
    if ours_error is not None and not isinstance(ours_error, ACCEPTED_ERRORS):
        return f"structops raises {type(ours_error).__name__}: {ours_error} on {shown}", None
    if theirs_error is not None:
        reason = documented(target, dtype, theirs_args, theirs_kwargs, theirs=theirs_error)
        if ours_error is None and reason:
            return None, f"{target.name}: {reason}"
        if ours_error is None and torch_out_disagrees(target, seed, ours):
            return None, f"{target.name}: {TORCH_OUT_BUG}"
        if ours_error is None:
            return (
                f"torch raises {type(theirs_error).__name__} ({theirs_error}), structops returns: {shown}",
                None,
            )
        if type(ours_error) is not type(theirs_error):
            note = (
                f"exception type: torch {type(theirs_error).__name__}, structops {type(ours_error).__name__}"
            )
            return None, f"{target.name}: {note}"
        return None, None
    if ours_error is not None:
        reason = documented(target, dtype, theirs_args, theirs_kwargs, ours=ours_error)
        if reason:
            return None, f"{target.name} {dtype}: {reason}"
        return f"structops raises {type(ours_error).__name__} ({ours_error}), torch returns: {shown}", None
    pairs = [
        ("result", ours, theirs),
        ("arguments after the call", (ours_args, ours_kwargs), (theirs_args, theirs_kwargs)),
    ]
    for label, actual, expected in pairs:
        actual, expected = _tensors(actual), _tensors(expected)
        if len(actual) != len(expected):
            return f"{label}: {len(actual)} tensors, torch's {len(expected)}, on {shown}", None
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            where = f"{label} #{i}"
            if a.dtype != e.dtype and target.spec.name in FUSED:
                return None, f"{target.name}: {FUSED_PROMOTION}"
            if a.dtype != e.dtype or a.shape != e.shape:
                if torch_out_disagrees(target, seed, ours):
                    return None, f"{target.name}: {TORCH_OUT_BUG}"
                return (
                    f"{where}: {a.dtype}{list(a.shape)} != torch's {e.dtype}{list(e.shape)} on {shown}",
                    None,
                )
            try:
                torch.testing.assert_close(
                    a,
                    e,
                    equal_nan=True,
                    check_stride=False,
                    **tolerance(target, e.dtype, theirs_args, theirs_kwargs, e),
                )
            except (AssertionError, RuntimeError) as mismatch:
                # RuntimeError: torch's comparison itself fails on some complex pairs (inf+0j, inf+nanj).
                reason = documented(target, dtype, theirs_args, theirs_kwargs) or documented_value(
                    target, theirs_args, label, i, a, e
                )
                if reason:
                    return None, f"{target.name}: {reason}"
                if torch_out_disagrees(target, seed, ours):
                    return None, f"{target.name}: {TORCH_OUT_BUG}"
                if label == "result" and torch_rounds_worse(target, seed, i, a):
                    return None, f"{target.name}: {TORCH_ROUNDING}"
                return f"{where} differs from torch on {shown}: {str(mismatch)[:600]}", None
    return None, None


# ---------------------------------------------------------------------------------------------
# Tests

# Known differences from torch found by this fuzzer and not fixed yet: (pattern of the failure text,
# the defect, a case that shows it: the overload and the seed of its arguments, which stay valid
# when ops are added, unlike a case index). A failure matching a pattern is listed, not failed;
# the case runs on its own as a strict xfail, so a fix makes it pass and says to drop the entry.
KNOWN_DEFECTS = [
    (
        r"structops raises .*layer_norm: '(weight|bias)' has dtype Float but 'input' has (BFloat16|Half)",
        (
            "layer_norm with float32 weight/bias for a bfloat16/float16 input (torch's mixed-precision path)"
            " is refused"
        ),
        ("layer_norm", 1567956486),
    ),
    (
        r"structops raises .*rms_norm: 'weight' has dtype \w+ but 'input' has \w+",
        (
            "the rms_norm op refuses a weight of another dtype, which torch's multiplies and casts back to"
            " the input's dtype (structops.rms_norm takes a composite of structops' ops there)"
        ),
        ("rms_norm", 1564617126),
    ),
    (
        r"structops raises .*div: .*(has dtype|promote to) Complex\w+, which div does not support",
        (
            "div with an explicit rounding_mode=None refuses complex operands (div without the argument takes"
            " them)"
        ),
        ("div.Tensor_mode", 383008435),
    ),
    (
        r"structops raises .*(no CPU kernel for dtype ComplexHalf|promote to ComplexHalf)",
        (
            "a float16 tensor with a complex 0-dim promotes to ComplexHalf, which torch computes and"
            " structops has no kernel for (addcmul)"
        ),
        ("addcmul", 1527999185),
    ),
]


# Cases that found a defect, now fixed, as (overload, seed): each runs on its own, so it stays fixed.
REGRESSIONS = {
    (
        "sin.out",
        1971843563,
    ): "uint16/uint32/uint64 inputs hit an internal assert (at::toOpMathType) instead of a clean rejection",
    ("argmax", 1407206880): "argmax/argmin computed on bool, which torch rejects",
    (
        "max_pool3d_with_indices.out",
        61858135,
    ): "max_pool3d_with_indices.out into an expanded indices: torch corrupts its heap, structops raises",
    (
        "cdist",
        1466884258,
    ): "cdist in bfloat16: one unit in the last place from torch's mm form (the manifest's tolerance)",
    (
        "binary_cross_entropy.out",
        314175866,
    ): "binary_cross_entropy.out: torch's out= reduces wrongly, structops' out= matches torch's functional",
    ("max_pool3d_with_indices", 2072308032): (
        "max_pool3d on a 4-D input with channels-last strides: torch raises, structops computes (documented)"
    ),
    ("bmm.out", 1164497703): (
        "bmm of empty int32 and bfloat16 batches: torch skips the dtype check, structops keeps it"
        " (documented)"
    ),
    (
        "masked_select.out",
        419640580,
    ): "an out= that is also an input and must be resized: a documented refusal (design.md decision 2)",
    ("mm.out", 2134489946): (
        "out=/inplace dtype: an out of another dtype was cast into where torch's op demands its result dtype"
    ),
    (
        "sum.IntList_out",
        1275951964,
    ): "sum(out=) of another dtype was rejected where torch sums in the out's dtype",
    ("pow.Tensor_Scalar_out", 1898257921): "int ** negative int Scalar was computed where torch raises",
    ("addcmul.out", 188822125): (
        "a bool operand torch promotes away (addcmul of int32 and bool) was rejected by a per-input dtype"
        " check"
    ),
    (
        "sub_.Tensor",
        657184686,
    ): "sub with a bool operand: torch refuses it even when the promoted dtype is not bool",
    (
        "pow.Tensor_Scalar_out",
        1654823087,
    ): "pow(bfloat16 -inf, 0.5) was +inf (std::pow) where torch takes sqrt: NaN",
    (
        "pow.Tensor_Scalar_out",
        1253273653,
    ): "pow(complex -inf, 0.5) was (inf, NaN) where torch takes sqrt: (0, inf)",
    (
        "norm.ScalarOpt_dim",
        1572794323,
    ): "norm(p=-1000) of an empty reduced dim returned inf where torch raises (no identity)",
    ("cumsum.out", 1469975960): "cumsum of bool into a uint32 out= had no unsigned kernel",
    (
        "cumsum.out",
        458169990,
    ): "cumsum into a complex out= (its dtype is the computation's) had no complex kernel",
    ("cdist", 275671053): "cdist with p=0 counted a NaN coordinate as 1 where torch propagates NaN",
    ("batch_norm", 1871371540): (
        "batch_norm in evaluation computed x * scale + (bias - mean * scale), which cancels for a large scale"
    ),
    (
        "cross_entropy_loss",
        1690583296,
    ): "cross_entropy_loss with class probabilities and ignore_index=1 computed where torch raises",
    (
        "cross_entropy_loss",
        1242953527,
    ): "cross_entropy_loss with class probabilities and ignore_index=-101 raised where torch computes",
    ("cross_entropy_loss", 1667547153): (
        "cross_entropy_loss with float64 class probabilities for float32 logits: torch promotes, structops"
        " refused"
    ),
    (
        "lerp.Tensor",
        2034555234,
    ): "lerp with a 0-dim weight of another dtype: torch promotes it as a number, structops refused",
}


def known(failure: str) -> str | None:
    return next((defect for pattern, defect, _ in KNOWN_DEFECTS if re.search(pattern, failure)), None)


def draw(index: int) -> tuple[Target, int]:
    rng = settings.case_rng("call", index)
    return rng.choice(targets()[0]), rng.randrange(2**31)


def fuzz(indices) -> tuple[list[str], dict[str, int]]:
    failures, notes = [], {}
    for index in indices:
        target, seed = draw(index)
        faulthandler.dump_traceback_later(HANG_SECONDS, exit=True)
        try:
            failure, note = compare(target, seed)
        finally:
            faulthandler.cancel_dump_traceback_later()
        if note:
            notes[note] = notes.get(note, 0) + 1
        if failure and known(failure) and not settings.ONLY:
            notes[f"KNOWN DEFECT {known(failure)}"] = notes.get(f"KNOWN DEFECT {known(failure)}", 0) + 1
        elif failure:
            test = f"{__file__}::test_calls"
            failures.append(
                f"--- case {index} (seed {settings.SEED}): {failure}\n"
                f"reproduce: {settings.reproduce(test, index)}"
            )
    return failures, notes


def test_calls():
    started = time.monotonic()
    indices = settings.case_indices(CI_CASES, LONG_CASES)
    failures, notes = fuzz(indices)
    print(
        f"call fuzz seed {settings.SEED}: {len(indices)} cases, {len(failures)} failures, "
        f"{time.monotonic() - started:.1f} s; accepted differences:"
    )
    for note, count in sorted(notes.items()):
        print(f"  {count:6d} x {note}")
    assert not failures, "\n\n".join(failures[:100]) + f"\n\n({len(failures)} failures)"


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(c, id=f"{c[0]}-{c[1]}", marks=pytest.mark.xfail(strict=True, reason=d))
        for _, d, c in KNOWN_DEFECTS
    ]
    + [pytest.param(c, id=f"regression-{c[0]}-{c[1]}") for c in REGRESSIONS],
)
def test_known_case(case):
    name, seed = case
    target = next(t for t in targets()[0] if t.name == name)
    failure, _ = compare(target, seed)
    assert failure is None, failure


def test_every_overload_is_fuzzed_or_has_a_reason():
    fuzzed, skipped = targets()
    registered = {  # every overload of the namespace, the generated backward ops' too
        n.removeprefix("structops::") if "." in n else f"{n.removeprefix('structops::')}.default"
        for n in torch._C._dispatch_get_all_op_names()
        if n.startswith("structops::")
    }
    covered = {t.name if "." in t.name else f"{t.name}.default" for t in fuzzed}
    covered |= {n if "." in n else f"{n}.default" for n in skipped}
    assert registered == covered
    print("not fuzzed:", skipped)
