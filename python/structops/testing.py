"""The conformance suite's engine: samples and checks for one op, driven by an OpSpec.

The generator writes one test module per structured op (tests/generated/test_<op>.py) holding
an OpSpec built from the manifest; the checks here hold every op to the bar PyTorch's OpInfo
tests and torch.library.opcheck hold built-in ops to. Each check raises AssertionError with the
sample that failed, so a failure names op, overload, device, dtype, check and input.
"""

from __future__ import annotations

import functools
import warnings
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import torch

from structops._dispatch import call

RESIZE_WARNING = "An output with one or more elements was resized"


@dataclass(frozen=True)
class ErrorCase:
    make_args: Callable[[], tuple[tuple, dict]]  # () -> (args, kwargs)
    match: str
    source: str
    data: bool = False  # raised from values (index checks): meta tensors cannot raise it


def over_dims(fn: Callable) -> Callable:
    """A torch reduction over one int dim (torch.prod) as one over a dim list (None or [] = every
    dim), for references of structops ops that take int[1]? dim."""

    def reference(x, dim=None, keepdim=False, **kwargs):
        if x.dim() == 0:
            return fn(x, 0, keepdim=keepdim, **kwargs)
        dims = sorted({d % x.dim() for d in dim} if dim else range(x.dim()), reverse=True)
        out = x
        for d in dims:
            out = fn(out, d, keepdim=True, **kwargs)
        return out if keepdim else out.reshape([s for i, s in enumerate(x.shape) if i not in dims])

    return reference


def arguments(*args, **kwargs) -> tuple[tuple, dict]:
    """Capture a call's arguments (the manifest writes error cases as argument lists)."""
    return args, kwargs


def op(namespace: str, qualified: str):
    """The OpOverload ``qualified`` ("add.Tensor", "mm") names in torch.ops.<namespace>."""
    packet, _, name = qualified.partition(".")
    return getattr(getattr(getattr(torch.ops, namespace), packet), name or "default")


@dataclass(frozen=True)
class OpSpec:
    name: str
    kind: str  # pointwise | reduction | other
    functional: str | None  # "add.Tensor"
    inplace: str | None
    out: str | None
    positional: tuple[str, ...]  # the functional's positional argument names
    kwarg_only: tuple[str, ...]
    tensor_args: tuple[str, ...]
    defaults: dict[str, Any]
    arg_values: dict[str, tuple]
    reference: Callable | None
    dtypes: tuple[str, ...]
    skips: dict[str, str]
    tolerance: dict[str, tuple[float, float]]
    domain: str = "any"
    extremes: bool = True
    errors: tuple[ErrorCase, ...] = ()
    # Inputs from the manifest's tests.samples: each takes t(*shape) -> tensor and returns arguments.
    samples: tuple[Callable[[Callable[..., torch.Tensor]], tuple[tuple, dict]], ...] = ()
    namespace: str = "structops"  # the torch.ops namespace the op lives in
    devices: tuple[str, ...] = ("cpu",)  # the devices the op has kernels for
    cuda_skips: dict[str, str] = field(default_factory=dict)  # dtypes without a CUDA kernel, and why
    outs: tuple[str, ...] = ("out",)  # the out= overload's output arguments (layer_norm: out, mean, rstd)
    # The output size depends on data (masked_select): no meta kernel, a fake impl, and an out=
    # overload no tracer can follow (it resizes `out` to a size only the data knows).
    dynamic_output_shape: bool = False
    # The one output is a Tensor(a!)[] (split_with_sizes_copy): the functional returns a list, the
    # out= overload takes a list and returns nothing.
    list_out: bool = False
    # The manifest's `kernels:`: the variant names per device, each run by pinning it.
    kernel_variants: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # The manifest's `out_dtype:` what an out= (or inplace self) of another dtype gets: castable,
    # exact, or dtype_argument (its dtype stands for a missing dtype=).
    out_dtype: str = "castable"

    def overload(self, qualified: str):
        return op(self.namespace, qualified)

    def params(self, few: bool = False) -> list[tuple[str, str]]:
        """(device, dtype) pairs; skipped dtypes become pytest skips with their reason.

        ``few``: only the first floating and the first integral dtype.
        """
        import pytest

        devices = [d for d in self.devices if d != "cuda" or torch.cuda.is_available()]
        dtypes = self.dtypes
        if few:
            floats = [d for d in dtypes if _dtype(d).is_floating_point and d not in self.skips][:1]
            ints = [d for d in dtypes if _is_integral(_dtype(d)) and d not in self.skips][:1]
            dtypes = tuple(floats + ints)
        result = []
        for device in devices:
            for dtype in dtypes:
                skips = self.skips | (self.cuda_skips if device == "cuda" else {})
                marks = [pytest.mark.skip(reason=skips[dtype])] if dtype in skips else []
                result.append(
                    pytest.param(
                        device, dtype, id=f"{self.functional or self.out}-{device}-{dtype}", marks=marks
                    )
                )
        return result


@dataclass
class Sample:
    args: list[Any]
    kwargs: dict[str, Any]
    desc: str

    def map_tensors(self, fn: Callable[[torch.Tensor], torch.Tensor]) -> Sample:
        def f(x):
            if isinstance(x, list | tuple) and x and all(isinstance(e, torch.Tensor) for e in x):
                return [fn(e) for e in x]  # a Tensor[] argument
            return fn(x) if isinstance(x, torch.Tensor) else x

        return Sample([f(a) for a in self.args], {k: f(v) for k, v in self.kwargs.items()}, self.desc)

    def __repr__(self) -> str:
        def show(x):
            if isinstance(x, torch.Tensor):
                return f"Tensor(shape={tuple(x.shape)}, stride={x.stride()}, dtype={x.dtype})"
            return repr(x)

        args = ", ".join([show(a) for a in self.args] + [f"{k}={show(v)}" for k, v in self.kwargs.items()])
        return f"[{self.desc}] ({args})"


# ---------------------------------------------------------------------------------------------
# Sample generation


def _dtype(name: str) -> torch.dtype:
    return getattr(torch, name)


def _is_integral(dtype: torch.dtype) -> bool:
    return not (dtype.is_floating_point or dtype.is_complex or dtype == torch.bool)


def _values(shape, dtype, device, domain, gen) -> torch.Tensor:
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=gen).bool().to(device)
    if dtype.is_floating_point or dtype.is_complex:
        lo, hi = {"any": (-5, 5), "positive": (0.1, 5), "nonzero": (0.5, 5), "unit": (-1, 1)}[domain]
        real_dtype = torch.float64
        x = torch.rand(shape, generator=gen, dtype=real_dtype) * (hi - lo) + lo
        if domain == "nonzero":
            x = x * (torch.randint(0, 2, shape, generator=gen) * 2 - 1)
        if dtype.is_complex:
            x = torch.complex(x, torch.rand(shape, generator=gen, dtype=real_dtype) * (hi - lo) + lo)
        return x.to(dtype).to(device)
    info = torch.iinfo(dtype)
    lo, hi = {"any": (-9, 10), "positive": (1, 10), "nonzero": (1, 10), "unit": (-1, 2)}[domain]
    lo, hi = max(lo, info.min), min(hi, info.max)
    x = torch.randint(lo, hi, shape, generator=gen, dtype=torch.int64)
    if domain == "nonzero" and info.min < 0:
        x = x * (torch.randint(0, 2, shape, generator=gen) * 2 - 1)
    return x.to(dtype).to(device)


def _laid_out(x: torch.Tensor, layout: str) -> torch.Tensor:
    """The same values in another memory layout."""
    if layout == "contiguous" or x.dim() == 0:
        return x
    if layout == "transposed":
        return x.permute(*reversed(range(x.dim()))).contiguous().permute(*reversed(range(x.dim())))
    if layout == "strided":  # every other element of a buffer twice as long in the last dim
        buf = torch.empty((*x.shape[:-1], x.shape[-1] * 2), dtype=x.dtype, device=x.device)
        view = buf[..., ::2]
        view.copy_(x)
        return view
    if layout == "expanded":  # size-1 first dim broadcast
        return x[:1].expand(x.shape) if x.shape[0] > 0 else x
    if layout == "channels_last":
        return x.contiguous(memory_format=torch.channels_last)
    raise ValueError(layout)


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


def _scalar_choices(spec: OpSpec) -> Iterator[dict[str, Any]]:
    """Non-tensor arguments: the defaults with the first listed value of each argument (so an
    argument without a default, or one whose default is not a valid call, gets a value), then
    each other listed value in turn."""
    base = {k: v for k, v in spec.defaults.items() if k not in spec.tensor_args}
    base |= {name: values[0] for name, values in spec.arg_values.items()}
    yield base
    for name, values in spec.arg_values.items():
        for v in values:
            if base.get(name, object()) != v:
                yield {**base, name: v}


def _call_args(spec: OpSpec, values: dict[str, Any], desc: str) -> Sample:
    args = [values[n] for n in spec.positional if n in values]
    kwargs = {n: values[n] for n in spec.kwarg_only if n in values}
    return Sample(args, kwargs, desc)


def _with_tensors(
    spec: OpSpec, tensors: list[torch.Tensor], desc: str, scalars: dict | None = None
) -> Sample:
    """A sample from the op's tensor arguments, in order, and its scalar arguments (default: defaults)."""
    scalars = next(_scalar_choices(spec)) if scalars is None else scalars
    return _call_args(spec, dict(zip(spec.tensor_args, tensors, strict=True)) | scalars, desc)


def samples(spec: OpSpec, device: str, dtype_name: str) -> list[Sample]:
    """Inputs for one (device, dtype); never empty, so no check passes vacuously."""
    import pytest

    dtype = _dtype(dtype_name)
    # crc32, not hash(): str hashes change per process, and a failing sample must reproduce.
    gen = torch.Generator().manual_seed(zlib.crc32(f"{spec.name}/{dtype_name}".encode()))
    result: list[Sample] = []
    if spec.samples:
        # The manifest's samples as written, then with every 2-D+ tensor transposed in memory.
        for layout in ("contiguous", "transposed"):
            for make in spec.samples:

                def t(*shape, _layout=layout):
                    return _laid_out(
                        _values(shape, dtype, device, spec.domain, gen),
                        _layout if len(shape) >= 2 else "contiguous",
                    )

                args, kwargs = make(t)
                sample = Sample(list(args), dict(kwargs), f"{layout} sample")
                result.append(sample.map_tensors(lambda x: x.to(device)))
    elif spec.kind not in ("pointwise", "reduction"):
        pytest.skip(
            f"no sample generator for '{spec.kind}' ops: tag the op pointwise or reduction, or give tests.samples"
        )
    elif spec.kind == "pointwise":
        n = len(spec.tensor_args)
        for shapes in _pointwise_shapes(n):
            for layout in ("contiguous", "transposed", "strided", "expanded", "channels_last"):
                if layout != "contiguous" and len(shapes[0]) < (4 if layout == "channels_last" else 1):
                    continue
                if layout == "channels_last" and len(shapes[0]) != 4:
                    continue
                tensors = [_values(s, dtype, device, spec.domain, gen) for s in shapes]
                tensors[0] = _laid_out(tensors[0], layout)
                for scalars in _scalar_choices(spec):
                    result.append(
                        _with_tensors(spec, tensors, f"{layout} {shapes} {scalars or ''}".strip(), scalars)
                    )
        if n >= 2:
            # Type promotion: a tensor of another dtype, and a 0-dim tensor of another kind.
            other = torch.float32 if not (dtype.is_floating_point or dtype.is_complex) else torch.int64
            for shape, desc in (((3, 4), "mixed dtypes"), ((), "0-dim of another kind")):
                tensors = [_values((3, 4), dtype, device, spec.domain, gen)]
                tensors += [_values(shape, other, device, spec.domain, gen) for _ in range(n - 1)]
                sample = _with_tensors(spec, tensors, f"{desc}: other is {other}")
                if _rejected_by_both(spec, sample):
                    continue
                result.append(sample)
            if _is_integral(dtype) and spec.domain == "any":
                # A 0-dim tensor of the same kind does not promote: int8 + tensor(1000) stays int8.
                tensors = [_values((3, 4), dtype, device, spec.domain, gen)]
                tensors += [torch.tensor(1000, device=device) for _ in range(n - 1)]
                result.append(_with_tensors(spec, tensors, "0-dim int64 of the same kind, value 1000"))
        ext = _extremes(dtype, device) if spec.extremes else None
        if ext is not None and spec.domain == "any":
            tensors = [ext] + [_values((8,), dtype, device, spec.domain, gen) for _ in range(n - 1)]
            result.append(_with_tensors(spec, tensors, "extreme values"))
            if n >= 2:
                result.append(_with_tensors(spec, [ext] * n, "extreme values, all operands"))
    elif spec.kind == "reduction":
        (tensor_arg,) = spec.tensor_args
        dims = spec.arg_values.get("dim", (None, [], [0], [-1], [0, 2], [2, 0]))
        # Other listed arguments (var's correction, norm's p) take their values in turn.
        others = [(name, values) for name, values in spec.arg_values.items() if name != "dim"]
        turn = 0
        for shape in [(), (7,), (3, 4), (2, 3, 4), (5, 0, 3)]:
            for layout in ("contiguous", "transposed", "strided"):
                if layout != "contiguous" and len(shape) < 2:
                    continue
                x = _laid_out(_values(shape, dtype, device, spec.domain, gen), layout)
                for dim in dims:
                    listed = [dim] if isinstance(dim, int) else dim  # argmax takes int? dim
                    if dim is not None and any(
                        d >= max(len(shape), 1) or d < -max(len(shape), 1) for d in listed
                    ):
                        continue
                    for keepdim in (False, True):
                        turn += 1
                        values = {
                            **spec.defaults,
                            tensor_arg: x,
                            "dim": dim,
                            "keepdim": keepdim,
                            **{name: vals[turn % len(vals)] for name, vals in others},
                        }
                        sample = _call_args(spec, values, f"{layout} {shape} dim={dim} keepdim={keepdim}")
                        # amax over an empty dim: torch and structops must both raise; not a value sample.
                        if not _rejected_by_both(spec, sample):
                            result.append(sample)
    assert result, f"no samples for {spec.name} on {device}/{dtype_name}"
    return result


# ---------------------------------------------------------------------------------------------
# Comparisons


def _tolerance(spec: OpSpec, dtype: torch.dtype) -> dict[str, float]:
    name = str(dtype).removeprefix("torch.")
    if name in spec.tolerance:
        atol, rtol = spec.tolerance[name]
        return {"atol": atol, "rtol": rtol}
    return {}


def _same_layout(actual: torch.Tensor, expected: torch.Tensor) -> bool:
    """Strides equal wherever they matter (dims of size 1 never address memory)."""
    if actual.numel() <= 1:
        return True
    return all(
        a == e for a, e, s in zip(actual.stride(), expected.stride(), actual.shape, strict=True) if s != 1
    )


def assert_matches(actual, expected, spec: OpSpec, sample: Sample, what: str, check_strides=True) -> None:
    if isinstance(expected, tuple | list):
        for a, e in zip(actual, expected, strict=True):
            assert_matches(a, e, spec, sample, what, check_strides)
        return
    ctx = f"{spec.name} {what} on {sample!r}"
    assert actual.dtype == expected.dtype, f"{ctx}: dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"{ctx}: shape {tuple(actual.shape)} != {tuple(expected.shape)}"
    if check_strides:
        assert _same_layout(actual, expected), f"{ctx}: strides {actual.stride()} != {expected.stride()}"
    if actual.device.type != "meta":
        torch.testing.assert_close(
            actual,
            expected.to(actual.device),
            equal_nan=True,
            msg=lambda m: f"{ctx}: {m}",
            **_tolerance(spec, expected.dtype),
        )


def _run(fn, sample: Sample, **extra):
    return fn(*sample.args, **sample.kwargs, **extra)


def _functional(spec: OpSpec):
    return spec.overload(spec.functional)


def _clone(sample: Sample) -> Sample:
    return sample.map_tensors(lambda t: t.clone())


def _first(result):
    """The first output of a result (ops like layer_norm return several)."""
    return result[0] if isinstance(result, tuple | list) else result


def _outs(spec: OpSpec, result, device: str, first: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
    """out= keyword arguments for the out overload: an empty tensor of each output's dtype, or
    ``first`` as the first output (the out= rules are checked on it; the others are just given)."""
    if spec.list_out:
        return {spec.outs[0]: [torch.empty(0, dtype=r.dtype, device=device) for r in result]}
    results = result if isinstance(result, tuple | list) else (result,)
    outs = {
        name: torch.empty(0, dtype=r.dtype, device=device) for name, r in zip(spec.outs, results, strict=True)
    }
    if first is not None:
        outs[spec.outs[0]] = first
    return outs


# ---------------------------------------------------------------------------------------------
# Checks


def _rejected_by_both(spec: OpSpec, sample: Sample) -> bool:
    """True when the reference rejects a promotion sample and structops rejects it too (some
    ops, e.g. lerp, require equal dtypes); an input only one of them rejects fails the suite."""
    if spec.reference is None:
        return False
    try:
        _run(spec.reference, sample)
    except (RuntimeError, IndexError):
        try:
            _run(_functional(spec), sample)
        except (RuntimeError, IndexError):
            return True
        raise AssertionError(
            f"{spec.name}: the reference rejects {sample!r} but structops accepts it"
        ) from None
    return False


def check_reference(spec: OpSpec, device: str, dtype: str) -> None:
    """1. Values, dtype, shape and strides equal the torch reference."""
    for s in samples(spec, device, dtype):
        assert_matches(_run(_functional(spec), s), _run(spec.reference, s), spec, s, "vs reference")


def check_kernel_variants(spec: OpSpec, device: str, dtype: str) -> None:
    """12. Every kernel variant (pinned in turn, where it is eligible) matches the reference, through
    the functional and the out= overload."""
    from structops import autotune

    assert spec.reference is not None and spec.out is not None
    out_op = spec.overload(spec.out)
    for variant in spec.kernel_variants.get(device, ()):
        with autotune.pin(f"{spec.out}@{device}", variant):
            for s in samples(spec, device, dtype):
                expected = _run(spec.reference, s)
                assert_matches(
                    _run(_functional(spec), s), expected, spec, s, f"kernel variant {variant!r} vs reference"
                )
                if not spec.list_out and not spec.dynamic_output_shape:
                    first = _first(expected)
                    out = torch.full_like(first, 7) if first.numel() else torch.empty_like(first)
                    _run(out_op, s, **{spec.outs[0]: out})
                    assert_matches(
                        out,
                        first,
                        spec,
                        s,
                        f"kernel variant {variant!r} out= vs reference",
                        check_strides=False,
                    )


def check_meta(spec: OpSpec, device: str, dtype: str) -> None:
    """2. The same call on meta tensors gives the real result's shape, dtype and strides."""
    if spec.dynamic_output_shape:
        import pytest

        pytest.skip(DYNAMIC_META_REASON)
    for s in samples(spec, device, dtype):
        real = _run(_functional(spec), s)
        meta = _run(_functional(spec), s.map_tensors(lambda t: t.to("meta")))
        for r, m in zip(
            real if isinstance(real, tuple | list) else (real,),
            meta if isinstance(meta, tuple | list) else (meta,),
            strict=True,
        ):
            assert m.device.type == "meta"
            ctx = f"{spec.name} meta vs real on {s!r}"
            assert (m.shape, m.dtype) == (r.shape, r.dtype), (
                f"{ctx}: {m.shape}/{m.dtype} != {r.shape}/{r.dtype}"
            )
            assert _same_layout(m, r), f"{ctx}: strides {m.stride()} != {r.stride()}"


def check_variants(spec: OpSpec, device: str, dtype: str) -> None:
    """3. functional == out= == inplace (where inplace is legal for the sample)."""
    for s in samples(spec, device, dtype):
        expected = _run(_functional(spec), s)
        if spec.out:
            outs = _outs(spec, expected, device)
            returned = _run(spec.overload(spec.out), s, **outs)
            if spec.list_out:
                assert returned is None, (
                    f"{spec.out} returns () like torch's list out= overloads, got {returned!r}"
                )
                assert_matches(
                    outs[spec.outs[0]], expected, spec, s, "out= vs functional", check_strides=True
                )
                continue
            given = tuple(outs.values())
            got = tuple(returned) if len(given) > 1 else (returned,)
            assert all(r is o for r, o in zip(got, given, strict=True)), (
                f"{spec.out} did not return its out arguments"
            )
            assert_matches(
                given if len(given) > 1 else given[0],
                expected,
                spec,
                s,
                "out= vs functional",
                check_strides=True,
            )
        if spec.inplace:
            self_ = s.args[0]
            if spec.out_dtype == "dtype_argument" and s.kwargs.get("dtype") is None:
                # self's dtype stands for the missing dtype=
                expected = _functional(spec)(*s.args, **(s.kwargs | {"dtype": self_.dtype}))
            castable = torch.can_cast(expected.dtype, self_.dtype)
            takes = castable if spec.out_dtype == "castable" else expected.dtype == self_.dtype
            legal = expected.shape == self_.shape and takes
            if not legal or self_.stride().count(0) and self_.numel() > 1:
                continue
            t = _clone(s)
            target, ptr = t.args[0], t.args[0].data_ptr()
            assert _run(spec.overload(spec.inplace), t) is target, f"{spec.inplace} did not return self"
            assert target.data_ptr() == ptr, f"{spec.inplace} moved self's storage"
            assert_matches(
                target, expected.to(self_.dtype), spec, s, "inplace vs functional", check_strides=False
            )


def _first_tensor(sample: Sample) -> torch.Tensor:
    """The first tensor argument (the first element of a leading Tensor[] argument)."""
    first = sample.args[0]
    return first[0] if isinstance(first, list | tuple) else first


def _first_sample(spec: OpSpec, device: str, dtype: str, min_numel: int = 2) -> Sample | None:
    for s in samples(spec, device, dtype):
        result = _first(_run(_functional(spec), s))
        self_ = _first_tensor(s)
        if result.numel() >= min_numel and self_.numel() >= 2 and self_.is_contiguous() and result.dim() >= 1:
            return s
    return None


def check_out_rules(spec: OpSpec, device: str, dtype: str) -> None:
    """4. out=: resize (+warning), castability, device, overlap, grad, and what out keeps."""
    import pytest

    s = _first_sample(spec, device, dtype)
    if spec.out is None or s is None:
        pytest.skip("no out= overload" if spec.out is None else "no sample with a non-trivial result")
    op = spec.overload(spec.out)
    if spec.list_out:
        return _check_list_out_rules(spec, op, s, device)
    results = _run(_functional(spec), s)
    expected = _first(results)  # the rules are checked on the first output; the others are given empty
    shape, rdtype = expected.shape, expected.dtype

    def outs(first: torch.Tensor) -> dict[str, torch.Tensor]:
        return _outs(spec, results, device, first)

    # Through the warning bridge, as structops.<op>(..., out=) calls it.
    bridged = functools.partial(call, op)
    wrong = torch.empty(max(expected.numel() - 1, 1) + 5, dtype=rdtype, device=device)
    with pytest.warns(UserWarning, match=RESIZE_WARNING):
        _run(bridged, s, **outs(wrong))
    assert_matches(wrong, expected, spec, s, "resized out")

    empty = torch.empty(0, dtype=rdtype, device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _run(bridged, s, **outs(empty))
    assert_matches(empty, expected, spec, s, "empty out")

    fill = (
        float("nan")
        if (rdtype.is_floating_point or rdtype.is_complex)
        else (torch.iinfo(rdtype).max if rdtype != torch.bool else True)
    )
    prefilled = torch.full(shape, fill, dtype=rdtype, device=device)
    _run(op, s, **outs(prefilled))
    assert_matches(prefilled, expected, spec, s, "prefilled out")

    if expected.dim() >= 2:
        strided = torch.empty(tuple(reversed(shape)), dtype=rdtype, device=device).permute(
            *reversed(range(expected.dim()))
        )
        strides, ptr = strided.stride(), strided.data_ptr()
        _run(op, s, **outs(strided))
        assert (strided.stride(), strided.data_ptr()) == (strides, ptr), "a correctly sized out must be kept"
        assert_matches(strided, expected, spec, s, "non-contiguous out", check_strides=False)

    _check_out_dtype(spec, op, s, device, outs, expected)

    if rdtype.is_floating_point:
        with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
            _run(op, s, **outs(torch.empty(shape, dtype=rdtype, device=device, requires_grad=True)))

    with pytest.raises(RuntimeError, match="(?i)device|meta"):  # the wording differs between torch ops
        _run(op, s, **outs(torch.empty(shape, dtype=rdtype, device="meta")))

    expanded = torch.empty((1, *shape[1:]), dtype=rdtype, device=device).expand(shape)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        _run(op, s, **outs(expanded))

    self_ = s.args[0]
    if isinstance(self_, torch.Tensor) and self_.dtype == rdtype:  # (Tensor[] inputs: not here)
        buf = torch.empty(self_.numel() + expected.numel() + 1, dtype=rdtype, device=device)
        aliased = _clone(s)
        aliased.args[0] = buf[: self_.numel()].view(self_.shape).copy_(self_)
        partial = buf[1 : 1 + expected.numel()].view(shape)
        with pytest.raises(RuntimeError, match="refer to a single memory location"):
            _run(op, aliased, **outs(partial))
        if expected.shape == self_.shape:
            full = _clone(s)
            if spec.kind == "pointwise":
                _run(op, full, **outs(full.args[0]))
                assert_matches(full.args[0], expected, spec, s, "out=self", check_strides=False)
            else:
                with pytest.raises(RuntimeError, match="unsupported operation"):
                    _run(op, full, **outs(full.args[0]))


def _another_float(dtype: torch.dtype) -> torch.dtype:
    """A floating dtype other than `dtype`: what an out of the wrong dtype is made of."""
    return torch.float32 if dtype == torch.float64 else torch.float64


def _check_out_dtype(spec: OpSpec, op, s: Sample, device: str, outs, expected: torch.Tensor) -> None:
    """An out of another dtype, by the op's out_dtype: castable takes a wider one and rejects one
    the result can't be cast to; exact rejects any other; dtype_argument computes in the out's
    dtype, as the functional with that dtype= does."""
    import pytest

    rdtype, shape = expected.dtype, expected.shape
    if spec.out_dtype == "castable":
        narrower = {True: torch.int64, False: torch.bool}[rdtype.is_floating_point or rdtype.is_complex]
        if not torch.can_cast(rdtype, narrower):
            with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
                _run(op, s, **outs(torch.empty(shape, dtype=narrower, device=device)))
        return
    other = _another_float(rdtype)
    if spec.out_dtype == "exact" or s.kwargs.get("dtype") is not None:
        with pytest.raises(RuntimeError, match=f"expected '{spec.outs[0]}' to have the result dtype"):
            _run(op, s, **outs(torch.empty(shape, dtype=other, device=device)))
        return
    written = torch.empty(shape, dtype=other, device=device)
    _run(op, s, **outs(written))
    expected = _functional(spec)(*s.args, **(s.kwargs | {"dtype": other}))
    assert_matches(written, expected, spec, s, "out of another dtype (dtype=)")


def _check_list_out_rules(spec: OpSpec, op, s: Sample, device: str) -> None:
    """out= with a Tensor(a!)[] output: the list's length, then every element by the single-tensor
    rules (resize with its warning, castability, device, overlap with inputs and with each other)."""
    import pytest

    expected = _run(_functional(spec), s)
    name = spec.outs[0]
    dtype = expected[0].dtype

    def fresh(**changes) -> list[torch.Tensor]:
        return [
            torch.empty(r.shape, dtype=changes.get("dtype", dtype), device=changes.get("device", device))
            for r in expected
        ]

    with pytest.raises(RuntimeError, match=f"expected '{name}' to be a list of {len(expected)} tensors"):
        _run(op, s, **{name: fresh()[:-1]})
    bridged = functools.partial(call, op)
    wrong = [torch.empty(r.numel() + 3, dtype=dtype, device=device) for r in expected]
    with pytest.warns(UserWarning, match=RESIZE_WARNING):
        _run(bridged, s, **{name: wrong})
    assert_matches(wrong, expected, spec, s, "resized out")
    strided = [
        torch.empty(tuple(reversed(r.shape)), dtype=dtype, device=device).permute(*reversed(range(r.dim())))
        for r in expected
    ]
    _run(op, s, **{name: strided})
    assert_matches(strided, expected, spec, s, "non-contiguous out", check_strides=False)
    narrower = {True: torch.int64, False: torch.bool}[dtype.is_floating_point or dtype.is_complex]
    if spec.out_dtype == "exact":
        other = _another_float(dtype)
        with pytest.raises(RuntimeError, match=f"expected '{name}\\[0\\]' to have the result dtype"):
            _run(op, s, **{name: fresh(dtype=other)})
    elif not torch.can_cast(dtype, narrower):
        with pytest.raises(
            RuntimeError, match=f"can't be cast to the desired output type .* of '{name}\\[0\\]'"
        ):
            _run(op, s, **{name: fresh(dtype=narrower)})
    with pytest.raises(RuntimeError, match="(?i)device|meta"):
        _run(op, s, **{name: fresh(device="meta")})
    if len(expected) >= 2 and expected[0].numel() and expected[0].shape == expected[1].shape:
        shared = torch.empty(expected[0].shape, dtype=dtype, device=device)
        with pytest.raises(RuntimeError, match="refer to a single memory location"):
            _run(op, s, **{name: [shared, shared] + fresh()[2:]})


def check_inplace_rules(spec: OpSpec, device: str, dtype: str) -> None:
    """5. inplace: a broadcast that changes self's shape or a non-castable result raises."""
    import pytest

    if spec.inplace is None:
        pytest.skip("no inplace overload")
    op = spec.overload(spec.inplace)
    d = _dtype(dtype)
    n = len(spec.tensor_args)
    checked = False
    if spec.kind == "pointwise" and n >= 2:
        tensors = [_values((4,), d, device, spec.domain, torch.Generator().manual_seed(0))]
        tensors += [
            _values((3, 4), d, device, spec.domain, torch.Generator().manual_seed(i)) for i in range(n - 1)
        ]
        s = _with_tensors(spec, tensors, "broadcast changes self")
        with pytest.raises(
            RuntimeError, match=r"output with shape \[4\] doesn't match the broadcast shape \[3, 4\]"
        ):
            _run(op, s)
        if not (d.is_floating_point or d.is_complex) and d != torch.bool:
            tensors = [_values((3,), d, device, spec.domain, torch.Generator().manual_seed(0))]
            tensors += [
                _values((3,), torch.float32, device, spec.domain, torch.Generator()) for _ in range(n - 1)
            ]
            s = _with_tensors(spec, tensors, "float into int self")
            try:
                result = _run(_functional(spec), s.map_tensors(lambda t: t.to("meta")))
            except RuntimeError:  # the op rejects float inputs: so must its inplace form
                with pytest.raises(RuntimeError):
                    _run(op, s)
            else:
                if spec.out_dtype != "castable" and result.dtype != d:
                    with pytest.raises(RuntimeError, match="expected 'self' to have the result dtype"):
                        _run(op, s)
                elif not torch.can_cast(result.dtype, d):  # a comparison's bool result casts to int
                    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
                        _run(op, s)
        checked = True
    sample = _first_sample(spec, device, dtype)
    if sample is not None:
        expanded = _clone(sample)
        self_ = expanded.args[0]
        expanded.args[0] = torch.empty((1, *self_.shape[1:]), dtype=self_.dtype, device=device).expand(
            self_.shape
        )
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            _run(op, expanded)
        checked = True
    if not checked:
        pytest.skip("no sample applies")


def check_errors(spec: OpSpec, device: str, dtype: str) -> None:
    """6. The manifest's error cases raise with their message, on real and meta tensors (real
    only for errors raised from values, such as out-of-range indices)."""
    import pytest

    if not spec.errors:
        pytest.skip("no tests.errors in the manifest")
    for case in spec.errors:
        args, kwargs = case.make_args()
        for where in (device,) if case.data else (device, "meta"):
            moved = [a.to(where) if isinstance(a, torch.Tensor) else a for a in args]
            with pytest.raises((RuntimeError, IndexError, ValueError), match=case.match):
                _functional(spec)(*moved, **kwargs)


DYNAMIC_META_REASON = (
    "the output size depends on the data, which meta tensors lack (they raise, as torch's do); "
    "FakeTensorMode is tested in tests/runtime"
)


DYNAMIC_OUT_REASON = (
    "Dynamo cannot trace an out= overload whose output size is data: torch.compile(fullgraph=True) "
    "of torch's own masked_select(out=) stops with 'Dynamic shape operator (no meta kernel)' too"
)


def _written_inputs(op) -> set[str]:
    """Positional arguments the overload writes (batch_norm's running stats), outs aside."""
    return {
        a.name
        for a in op._schema.arguments
        if a.alias_info is not None and a.alias_info.is_write and not a.kwarg_only
    }


# structops traces a written overload as its functional sibling (csrc/functionalize.cpp). An out=
# overload that also writes inputs (batch_norm.out's running statistics) has none: its functional
# sibling writes them too. torch's own answer is a separate functional op that returns the new
# statistics (_native_batch_norm_legit_functional); the manifest declares none yet, and torch's
# auto-functionalization takes custom ops with aliased returns only as Tag.out ops, whose written
# arguments must all be outs.
MUTATING_OUT_REASON = (
    "this out= overload also writes inputs (running statistics) and no functional op returns "
    "their new values, so it cannot be functionalized"
)


def returns_alias(op) -> bool:
    return any(r.alias_info is not None for r in op._schema.returns)


def traceable(op) -> bool:
    """Whether torch.compile / opcheck's aot_dispatch tests can trace ``op``."""
    return not (any(a.is_out for a in op._schema.arguments) and _written_inputs(op))


def opcheck(op, args, kwargs) -> dict[str, str]:
    """torch.library.opcheck, without the aot_dispatch tests for overloads that cannot be traced
    (MUTATING_OUT_REASON)."""
    if traceable(op):
        return torch.library.opcheck(op, args, kwargs)
    return torch.library.opcheck(
        op, args, kwargs, test_utils=("test_schema", "test_autograd_registration", "test_faketensor")
    )


def check_opcheck(spec: OpSpec, device: str, dtype: str) -> None:
    """7. torch.library.opcheck, every test, one overload at a time, on real-device samples."""

    def has_nan(result) -> bool:  # opcheck compares eager and traced outputs without equal_nan
        return any(
            r.is_floating_point() and bool(r.isnan().any())
            for r in (result if isinstance(result, tuple | list) else (result,))
        )

    chosen = [
        s
        for s in samples(spec, device, dtype)
        if _first_tensor(s).numel() > 0 and not has_nan(_run(_functional(spec), s))
    ][:2]
    for s in chosen:
        results = _run(_functional(spec), s)
        result = _first(results)
        checks = [(spec.functional, s, {})]
        if spec.out:  # opcheck() leaves out the tracing tests torch cannot run on it
            checks.append((spec.out, _clone(s), _outs(spec, results, device)))
        if (
            spec.inplace
            and result.shape == s.args[0].shape
            and torch.can_cast(result.dtype, s.args[0].dtype)
            and 0 not in s.args[0].stride()
        ):
            checks.append((spec.inplace, _clone(s), {}))
        for name, sample, extra in checks:
            report = opcheck(spec.overload(name), tuple(sample.args), {**sample.kwargs, **extra})
            assert set(report.values()) == {"SUCCESS"}, f"{name} on {sample!r}: {report}"


def check_compile(spec: OpSpec, device: str, dtype: str) -> None:
    """8. torch.compile with the default backend (Inductor), fullgraph, with static and with dynamic
    shapes, equals eager for every overload."""
    import torch._dynamo

    # Two different shapes, so the dynamic graph is exercised beyond the sizes it was traced with.
    by_shape = {
        _first_tensor(s).shape: s
        for s in reversed(samples(spec, device, dtype))
        if _first_tensor(s).numel() > 1 and _first_tensor(s).dim() >= 1
    }
    chosen = list(by_shape.values())[-2:]
    untraceable = []
    for name in (spec.functional, spec.out, spec.inplace):
        if name is None:
            continue
        op = spec.overload(name)
        if not traceable(op):
            untraceable.append(f"{name} ({MUTATING_OUT_REASON})")
            continue
        if name == spec.out and spec.dynamic_output_shape:
            untraceable.append(f"{name} ({DYNAMIC_OUT_REASON})")
            continue

        def run(*args, _op=op, _name=name, **kwargs):
            if _name == spec.out:
                # Contiguous and correctly sized: Dynamo traces neither a resize nor a strided out=.
                rs = _functional(spec)(*args, **kwargs)
                if spec.list_out:
                    given = [torch.empty(r.shape, dtype=r.dtype, device=r.device) for r in rs]
                    _op(*args, **kwargs, **{spec.outs[0]: given})
                    return given
                rs = rs if isinstance(rs, tuple | list) else (rs,)
                outs = {
                    n: torch.empty(r.shape, dtype=r.dtype, device=r.device) for n, r in zip(spec.outs, rs)
                }
                return _op(*args, **kwargs, **outs)
            if _name == spec.inplace:
                return _op(args[0].clone(), *args[1:], **kwargs)
            return _op(*args, **kwargs)

        for dynamic in (False, True):
            torch._dynamo.reset()
            compiled = torch.compile(run, fullgraph=True, dynamic=dynamic)
            if (
                spec.dynamic_output_shape
            ):  # else Dynamo breaks the graph at the op, as at torch's masked_select
                compiled = torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True)(compiled)
            # Static shapes compile once per shape: one is enough there.
            for s in chosen if dynamic else chosen[:1]:
                if name == spec.inplace:
                    r = _first(_run(_functional(spec), s))
                    if r.shape != s.args[0].shape or not torch.can_cast(r.dtype, s.args[0].dtype):
                        continue
                mode = "dynamic" if dynamic else "static"
                assert_matches(
                    compiled(*s.args, **s.kwargs),
                    run(*s.args, **s.kwargs),
                    spec,
                    s,
                    f"compiled ({mode} shapes) {name}",
                )
    if untraceable:
        import pytest

        pytest.skip(f"not compiled: {'; '.join(untraceable)}")


def check_backward_raises(spec: OpSpec, device: str, dtype: str) -> None:
    """Ops without derivatives must fail loudly on backward, not warn and return wrong grads."""
    import pytest

    if not (_dtype(dtype).is_floating_point):
        pytest.skip("gradients need a floating dtype")
    s = next(s for s in samples(spec, device, dtype) if _first_tensor(s).numel() > 0)
    written = _written_inputs(_functional(spec))  # in-place updates of a leaf that requires grad fail first
    g = s.map_tensors(lambda t: t.detach().requires_grad_() if t.dtype.is_floating_point else t)
    for i, name in enumerate(spec.positional[: len(g.args)]):
        if name in written and isinstance(g.args[i], torch.Tensor):
            g.args[i] = g.args[i].detach()
    result = _first(_run(_functional(spec), g))
    if not result.dtype.is_floating_point:
        pytest.skip(f"a {result.dtype} result has no gradient")
    with pytest.raises(RuntimeError, match="derivative for .* is not implemented"):
        result.sum().backward()


def _skip_unless_cuda_kernel(spec: OpSpec, device: str, dtype: str) -> None:
    """The CUDA comparisons run once per dtype (under the cpu parameter) where a CUDA kernel is."""
    import pytest

    if "cuda" not in spec.devices:
        pytest.skip("the op has no CUDA kernel")
    if device != "cpu":
        pytest.skip("runs once, under the cpu parameter")
    if dtype in spec.cuda_skips:
        pytest.skip(spec.cuda_skips[dtype])


def check_cuda_matches_cpu(spec: OpSpec, device: str, dtype: str) -> None:
    """10. CPU and CUDA agree on every sample (runs where a GPU is present)."""
    import pytest

    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    _skip_unless_cuda_kernel(spec, device, dtype)
    for s in samples(spec, "cpu", dtype):
        cpu = _run(_functional(spec), s)
        cuda = _run(_functional(spec), s.map_tensors(lambda t: t.cuda()))
        assert_matches(cuda.cpu(), cpu, spec, s, "cuda vs cpu")


@functools.cache
def _emulated_library():
    """torch.ops.structops_emu: every op's CUDA path (generated wrapper, host glue, device code)
    built as host C++ and registered for CPU tensors, the kernels run by the CPU emulator
    (tests/cuda_emu, docs/cuda_emulation.md). The schemas are structops' own."""
    from pathlib import Path

    import structops

    path = Path(structops.ops_library).with_name("libstructops_cuda_emu.so")
    if not path.exists():
        raise AssertionError(
            f"{path.name} is missing: build with STRUCTOPS_CUDA_EMULATION=ON (tools/setup.sh does, "
            "on a torch without CUDA) to run the CUDA kernels on the CPU emulator"
        )
    library = torch.library.Library("structops_emu", "DEF")
    names = {
        n.partition(".")[0] for n in torch._C._dispatch_get_all_op_names() if n.startswith("structops::")
    }
    for name in sorted(names):
        for schema in torch._C._jit_get_schemas_for_operator(name):
            library.define(str(schema).removeprefix("structops::"))
    torch.ops.load_library(str(path))
    return library


def emulated(spec: OpSpec) -> OpSpec:
    """``spec`` with its overloads resolved in torch.ops.structops_emu (_emulated_library)."""
    import dataclasses

    _emulated_library()
    return dataclasses.replace(spec, namespace="structops_emu")


def check_emulated_cuda(spec: OpSpec, device: str, dtype: str) -> None:
    """13. The CUDA path, run by the CPU emulator on CPU tensors, matches the CPU impl on every
    sample, with every CUDA kernel variant pinned in turn, through the functional and out=."""
    import contextlib

    import pytest

    from structops import autotune

    if torch.cuda.is_available():
        pytest.skip("a GPU is present: it runs the same kernels (test_cuda_matches_cpu)")
    _skip_unless_cuda_kernel(spec, device, dtype)
    emu = emulated(spec)
    for variant in spec.kernel_variants.get("cuda", (None,)):
        pin = autotune.pin(f"{spec.out}@cuda", variant) if variant else contextlib.nullcontext()
        what = f"emulated CUDA{f' variant {variant!r}' if variant else ''} vs CPU"
        with pin:
            for s in samples(spec, "cpu", dtype):
                try:
                    expected = _run(_functional(spec), s)
                except (RuntimeError, IndexError) as e:  # a promotion sample the op refuses
                    with pytest.raises(type(e)):
                        _run(_functional(emu), _clone(s))
                    continue
                assert_matches(_run(_functional(emu), _clone(s)), expected, spec, s, what)
                if spec.out is not None and not spec.dynamic_output_shape:
                    outs = _outs(spec, expected, "cpu")
                    _run(emu.overload(emu.out), _clone(s), **outs)
                    written = [outs[n] for n in spec.outs] if not spec.list_out else outs[spec.outs[0]]
                    expected_outs = expected if isinstance(expected, tuple | list) else (expected,)
                    assert_matches(
                        tuple(written), tuple(expected_outs), spec, s, f"{what}, out=", check_strides=False
                    )


# ---------------------------------------------------------------------------------------------
# 9. Property test


def _hypothesis_settings():
    """CI: derandomized and bounded; STRUCTOPS_HYPOTHESIS=fuzz for long random local runs."""
    import os

    from hypothesis import HealthCheck, settings

    common = {"deadline": None, "print_blob": True, "suppress_health_check": list(HealthCheck)}
    if os.environ.get("STRUCTOPS_HYPOTHESIS") == "fuzz":
        return settings(max_examples=2000, **common)
    return settings(max_examples=25, derandomize=True, database=None, **common)


def _draw_pointwise(draw, spec: OpSpec, dtype: torch.dtype, device: str) -> Sample:
    from hypothesis import strategies as st

    ndim = draw(st.integers(0, 4))
    shape = draw(st.lists(st.integers(0, 5), min_size=ndim, max_size=ndim))
    tensors = []
    seed = draw(st.integers(0, 2**16))
    for i in range(len(spec.tensor_args)):
        keep = draw(st.integers(0, ndim))  # broadcast: drop leading dims, set some to 1
        own = [1 if draw(st.booleans()) and i > 0 else s for s in shape[ndim - keep :]]
        layout = draw(st.sampled_from(["contiguous", "transposed", "strided", "expanded"]))
        t = _values(tuple(own), dtype, device, spec.domain, torch.Generator().manual_seed(seed + i))
        tensors.append(_laid_out(t, layout) if own else t)
    return _with_tensors(spec, tensors, "hypothesis")


def _draw_reduction(draw, spec: OpSpec, dtype: torch.dtype, device: str) -> Sample:
    from hypothesis import strategies as st

    ndim = draw(st.integers(0, 4))
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=ndim, max_size=ndim)))
    layout = draw(st.sampled_from(["contiguous", "transposed", "strided"]))
    x = _values(shape, dtype, device, spec.domain, torch.Generator().manual_seed(draw(st.integers(0, 2**16))))
    x = _laid_out(x, layout) if ndim else x
    listed = spec.arg_values.get("dim", (None, []))
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
    others = {name: draw(st.sampled_from(vals)) for name, vals in spec.arg_values.items() if name != "dim"}
    values = {**spec.defaults, spec.tensor_args[0]: x, "dim": dims, "keepdim": draw(st.booleans()), **others}
    return _call_args(spec, values, "hypothesis")


def check_property(spec: OpSpec, device: str, dtype: str) -> None:
    """9. Random shapes, strides and broadcasting: meta == real, and real == reference."""
    import hypothesis
    import pytest
    from hypothesis import given
    from hypothesis import strategies as st

    draw_sample = {"pointwise": _draw_pointwise, "reduction": _draw_reduction}.get(spec.kind)
    if draw_sample is None:
        pytest.skip(f"no sample strategy for '{spec.kind}' ops")
    if spec.samples:
        pytest.skip("the manifest gives this op's samples (tests.samples): random tensors would not fit it")
    d = _dtype(dtype)

    @_hypothesis_settings()
    @given(st.data())
    def prop(data):
        s = draw_sample(data.draw, spec, d, device)
        hypothesis.assume(not _rejected_by_both(spec, s))
        real = _run(_functional(spec), s)
        meta = _run(_functional(spec), s.map_tensors(lambda t: t.to("meta")))
        assert (meta.shape, meta.dtype) == (real.shape, real.dtype), f"meta vs real on {s!r}"
        assert _same_layout(meta, real), f"meta strides {meta.stride()} != real {real.stride()} on {s!r}"
        if spec.reference is not None:
            assert_matches(real, _run(spec.reference, s), spec, s, "vs reference (hypothesis)")

    prop()
