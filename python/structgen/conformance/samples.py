"""Inputs for one op: the shapes, layouts, dtypes, scalar arguments and extreme values the checks
run it on, seeded per op and dtype so that a failing sample reproduces."""

from __future__ import annotations

import functools
import zlib
from collections.abc import Iterator
from typing import Any

import torch

from structgen.codegen.dest.conformance_suite import SuiteSpec
from structgen.conformance import drawn
from structgen.conformance.spec import compiled, functional
from structgen.conformance.tensors import Sample, call_args, dtype_of, is_integral, laid_out, values


def _extremes(dtype, device, shape=(8,)) -> torch.Tensor | None:
    if dtype.is_floating_point:
        vals = [float("inf"), float("-inf"), float("nan"), -0.0, 0.0, 3.5, -2.25, 1e-3]
    elif dtype == torch.bool or dtype.is_complex:
        return None
    else:
        info = torch.iinfo(dtype)
        vals = [info.min, info.max, 0, 1, -1 if info.min < 0 else 2, info.max - 1, 7, info.min + 1]
    return torch.tensor(vals, dtype=dtype, device=device).reshape(shape)


POINTWISE_SHAPES = {
    1: [((),), ((0,),), ((7,),), ((3, 4),), ((2, 3, 4),), ((2, 3, 4, 5),)],
    2: [
        ((3, 4), (3, 4)),
        ((3, 4), (4,)),
        ((4, 1, 3), (2, 1)),
        ((), (3, 4)),
        ((3, 4), ()),
        ((0, 4), (4,)),
        ((2, 0), (1, 0)),
        ((2, 3, 4, 5), (2, 3, 4, 5)),
        ((5, 7, 9), (5, 7, 9)),
    ],
}


def _pointwise_shapes(n: int) -> list[tuple]:
    if n in POINTWISE_SHAPES:
        return POINTWISE_SHAPES[n]
    return [((3, 4),) * n, ((3, 4), (4,), (3, 1)) + ((3, 4),) * (n - 3), (((),) * n)]


def scalar_choices(spec: SuiteSpec) -> Iterator[dict[str, Any]]:
    """Non-tensor arguments: the defaults with the first listed value of each argument (so an
    argument without a default, or one whose default is not a valid call, gets a value), then
    each other listed value in turn."""
    sources = compiled(spec)
    base = {k: v for k, v in sources.defaults.items() if k not in spec.tensor_args}
    base |= {name: listed[0] for name, listed in sources.arg_values.items()}
    yield base
    for name, listed in sources.arg_values.items():
        for v in listed:
            if base.get(name, object()) != v:
                yield {**base, name: v}


def with_tensors(
    spec: SuiteSpec, tensors: list[torch.Tensor], desc: str, scalars: dict | None = None
) -> Sample:
    """A sample from the op's tensor arguments, in order, and its scalar arguments (default: defaults)."""
    scalars = next(scalar_choices(spec)) if scalars is None else scalars
    return call_args(spec, dict(zip(spec.tensor_args, tensors, strict=True)) | scalars, desc)


def _with_fitted_tensors(spec, tensors, desc, scalars=None, *, gen) -> Sample:
    return with_tensors(spec, _fitted(spec, tensors, gen), desc, scalars)


def rejected_by_both(spec: SuiteSpec, sample: Sample) -> bool:
    """True when the reference rejects a promotion sample and the op rejects it too (some
    ops, e.g. lerp, require equal dtypes); an input only one of them rejects fails the suite."""
    reference = compiled(spec).reference
    if reference is None:
        return False
    try:
        sample.call(reference)
    except (RuntimeError, IndexError):
        try:
            sample.call(functional(spec))
        except (RuntimeError, IndexError):
            return True
        raise AssertionError(f"{spec.name}: the reference rejects {sample!r} but the op accepts it") from None
    return False


def samples(spec: SuiteSpec, device: str, dtype_name: str) -> list[Sample]:
    """Inputs for one (device, dtype); never empty, so no check passes vacuously."""
    dtype = dtype_of(dtype_name)
    # crc32, not hash(): str hashes change per process, and a failing sample must reproduce.
    gen = torch.Generator().manual_seed(zlib.crc32(f"{spec.name}/{dtype_name}".encode()))
    if spec.samples:
        result = _manifest_samples(spec, device, dtype, gen)
    elif spec.kind == "pointwise":
        result = _pointwise_samples(spec, device, dtype, gen)
    elif spec.kind == "reduction":
        result = _reduction_samples(spec, device, dtype, gen)
    else:
        seed = zlib.crc32(f"{spec.name}/{dtype_name}/drawn".encode())
        result = drawn.rule_samples(spec, device, dtype, seed)
        assert result, (
            f"{spec.name}: no input drawn from its schema and rule was accepted by the op or its "
            "reference: give tests.samples (codegen/conformance.py)"
        )
    assert result, f"no samples for {spec.name} on {device}/{dtype_name}"
    return result


def _manifest_samples(spec: SuiteSpec, device, dtype, gen) -> list[Sample]:
    """The manifest's samples as written, then with every 2-D+ tensor transposed in memory."""
    result = []
    for layout in ("contiguous", "transposed"):
        for make in compiled(spec).samples:

            def t(*shape, _layout=layout):
                return laid_out(
                    values(shape, dtype, device, spec.domain, gen),
                    _layout if len(shape) >= 2 else "contiguous",
                )

            args, kwargs = make(t)
            sample = Sample(list(args), dict(kwargs), f"{layout} sample")
            result.append(sample.map_tensors(lambda x: x.to(device)))
    return result


def _arg_dtype(spec: SuiteSpec, arg: str, dtype: torch.dtype) -> torch.dtype:
    """``dtype``, or bool for an argument that `allowed` takes as bool only (where's condition)."""
    return torch.bool if dict(spec.arg_dtypes).get(arg) == ("bool",) else dtype


def _fitted(spec: SuiteSpec, tensors: list[torch.Tensor], gen) -> list[torch.Tensor]:
    """The tensors, each drawn again where its argument does not take its dtype (_arg_dtype)."""
    out = []
    for arg, t in zip(spec.tensor_args, tensors, strict=True):
        own = _arg_dtype(spec, arg, t.dtype)
        out.append(t if own == t.dtype else values(t.shape, own, t.device, spec.domain, gen))
    return out


def _pointwise_samples(spec: SuiteSpec, device, dtype, gen) -> list[Sample]:
    result = []
    n = len(spec.tensor_args)
    sample_of = functools.partial(_with_fitted_tensors, gen=gen)  # where's bool condition stays bool
    for shapes in _pointwise_shapes(n):
        for layout in ("contiguous", "transposed", "strided", "expanded", "channels_last"):
            if layout != "contiguous" and len(shapes[0]) < (4 if layout == "channels_last" else 1):
                continue
            if layout == "channels_last" and len(shapes[0]) != 4:
                continue
            tensors = [values(s, dtype, device, spec.domain, gen) for s in shapes]
            tensors[0] = laid_out(tensors[0], layout)
            for scalars in scalar_choices(spec):
                result.append(sample_of(spec, tensors, f"{layout} {shapes} {scalars or ''}".strip(), scalars))
    if n >= 2:
        # Type promotion: a tensor of another dtype, and a 0-dim tensor of another kind.
        other = torch.float32 if not (dtype.is_floating_point or dtype.is_complex) else torch.int64
        for shape, desc in (((3, 4), "mixed dtypes"), ((), "0-dim of another kind")):
            tensors = [values((3, 4), dtype, device, spec.domain, gen)]
            tensors += [values(shape, other, device, spec.domain, gen) for _ in range(n - 1)]
            sample = sample_of(spec, tensors, f"{desc}: other is {other}")
            if not rejected_by_both(spec, sample):
                result.append(sample)
        if is_integral(dtype) and spec.domain == "any":
            # A 0-dim tensor of the same kind does not promote: int8 + tensor(1000) stays int8.
            tensors = [values((3, 4), dtype, device, spec.domain, gen)]
            tensors += [torch.tensor(1000, device=device) for _ in range(n - 1)]
            result.append(sample_of(spec, tensors, "0-dim int64 of the same kind, value 1000"))
    ext = _extremes(dtype, device) if spec.extremes else None
    if ext is not None and spec.domain == "any":
        tensors = [ext] + [values((8,), dtype, device, spec.domain, gen) for _ in range(n - 1)]
        result.append(sample_of(spec, tensors, "extreme values"))
        if n >= 2:
            result.append(sample_of(spec, [ext] * n, "extreme values, all operands"))
    return result


def _reduction_samples(spec: SuiteSpec, device, dtype, gen) -> list[Sample]:
    result = []
    (tensor_arg,) = spec.tensor_args
    sources = compiled(spec)
    dims = sources.arg_values.get("dim", (None, [], [0], [-1], [0, 2], [2, 0]))
    # Other listed arguments (var's correction, norm's p) take their values in turn.
    others = [(name, listed) for name, listed in sources.arg_values.items() if name != "dim"]
    turn = 0
    for shape in [(), (7,), (3, 4), (2, 3, 4), (5, 0, 3)]:
        for layout in ("contiguous", "transposed", "strided"):
            if layout != "contiguous" and len(shape) < 2:
                continue
            x = laid_out(values(shape, dtype, device, spec.domain, gen), layout)
            for dim in dims:
                listed = [dim] if isinstance(dim, int) else dim  # argmax takes int? dim
                if dim is not None and any(
                    d >= max(len(shape), 1) or d < -max(len(shape), 1) for d in listed
                ):
                    continue
                for keepdim in (False, True):
                    turn += 1
                    named = {
                        **sources.defaults,
                        tensor_arg: x,
                        "dim": dim,
                        "keepdim": keepdim,
                        **{name: vals[turn % len(vals)] for name, vals in others},
                    }
                    sample = call_args(spec, named, f"{layout} {shape} dim={dim} keepdim={keepdim}")
                    # amax over an empty dim: torch and the op must both raise; not a value sample.
                    if not rejected_by_both(spec, sample):
                        result.append(sample)
    return result


# ---------------------------------------------------------------------------------------------
# Random inputs for the property check (hypothesis draws)


def draw_pointwise(draw, spec: SuiteSpec, dtype: torch.dtype, device: str) -> Sample:
    from hypothesis import strategies as st

    ndim = draw(st.integers(0, 4))
    shape = draw(st.lists(st.integers(0, 5), min_size=ndim, max_size=ndim))
    tensors = []
    seed = draw(st.integers(0, 2**16))
    for i in range(len(spec.tensor_args)):
        keep = draw(st.integers(0, ndim))  # broadcast: drop leading dims, set some to 1
        own = [1 if draw(st.booleans()) and i > 0 else s for s in shape[ndim - keep :]]
        layout = draw(st.sampled_from(["contiguous", "transposed", "strided", "expanded"]))
        gen = torch.Generator().manual_seed(seed + i)
        t = values(tuple(own), _arg_dtype(spec, spec.tensor_args[i], dtype), device, spec.domain, gen)
        tensors.append(laid_out(t, layout) if own else t)
    return with_tensors(spec, tensors, "hypothesis")


def draw_reduction(draw, spec: SuiteSpec, dtype: torch.dtype, device: str) -> Sample:
    from hypothesis import strategies as st

    ndim = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=ndim, max_size=ndim)))
    layout = draw(st.sampled_from(["contiguous", "transposed", "strided"]))
    x = values(shape, dtype, device, spec.domain, torch.Generator().manual_seed(draw(st.integers(0, 2**16))))
    x = laid_out(x, layout) if ndim else x
    sources = compiled(spec)
    listed = sources.arg_values.get("dim", (None, []))
    # [] and None only where the op's tests.args list them (logsumexp's [] differs from torch's).
    dim_lists = st.lists(
        st.integers(-max(ndim, 1), max(ndim, 1) - 1),
        min_size=0 if [] in listed else 1,
        max_size=max(ndim, 1),
        unique_by=lambda d: d % max(ndim, 1),
    )
    if any(isinstance(d, int) for d in listed):  # argmax's int? dim
        dim_lists = st.integers(-max(ndim, 1), max(ndim, 1) - 1)
    dims = draw(st.one_of(st.none(), dim_lists) if None in listed else dim_lists)
    others = {name: draw(st.sampled_from(vals)) for name, vals in sources.arg_values.items() if name != "dim"}
    named = {
        **sources.defaults,
        spec.tensor_args[0]: x,
        "dim": dims,
        "keepdim": draw(st.booleans()),
        **others,
    }
    return call_args(spec, named, "hypothesis")
