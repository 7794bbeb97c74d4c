"""The checks, each registered with @check: one function per property an op must have, run per
(op, device, dtype). A check raises AssertionError naming op, sample and what differed (the test
ID names check, device and dtype), or skips with the limitation of torch or hardware that stops it.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import re
import warnings
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import pytest
import torch

import structgen
from structgen._dispatch import call
from structgen.codegen.dest.conformance_suite import SuiteSpec
from structgen.conformance.drawn import HypothesisPick, accepted, drawn_sample
from structgen.conformance.emulation import emulated, poison_checked
from structgen.conformance.samples import (
    draw_pointwise,
    draw_reduction,
    rejected_by_both,
    samples,
    with_tensors,
)
from structgen.conformance.spec import (
    compiled,
    functional,
    on_cpu,
    overload,
    own_bits_expected,
    qualified,
    reference_on,
    under_test,
)
from structgen.conformance.tensors import Sample, dtype_of, is_integral, seed_call, values

RESIZE_WARNING = "An output with one or more elements was resized"


def _autotune():
    """The package under test's autotune module (<package>.autotune: pin() a kernel variant), for
    the ops that declare variants."""
    return importlib.import_module(f"{under_test().python_package}.autotune")


# ---------------------------------------------------------------------------------------------
# The registry


@dataclass(frozen=True)
class Check:
    name: str
    run: Callable[[SuiteSpec, str, str], None]  # (spec, device, dtype)
    # One floating and one integral dtype: the check tests registration or tracing, not arithmetic.
    few_dtypes: bool
    applies: Callable[[SuiteSpec], bool]  # the ops it is collected for


CHECKS: dict[str, Check] = {}  # in the order they run


def check(few_dtypes: bool = False, applies: Callable[[SuiteSpec], bool] = lambda spec: True):
    """Register ``check_<name>`` as the check <name>."""

    def register(fn):
        name = fn.__name__.removeprefix("check_")
        CHECKS[name] = Check(name, fn, few_dtypes, applies)
        return fn

    return register


def _params(spec: SuiteSpec, few_dtypes: bool) -> list[tuple[str, str]]:
    """(device, dtype) pairs: CUDA where a GPU is, and every dtype the op is tested with, or the
    first floating and the first integral one."""
    devices = [d for d in spec.devices if d != "cuda" or torch.cuda.is_available()]
    dtypes = spec.dtypes
    if few_dtypes:
        tested = [d for d in dtypes if d not in dict(spec.skips)]
        floats = [d for d in tested if dtype_of(d).is_floating_point][:1]
        dtypes = tuple(floats + [d for d in tested if is_integral(dtype_of(d))][:1])
    return [(device, dtype) for device in devices for dtype in dtypes]


def cases(specs: Iterable[SuiteSpec]) -> list:
    """Every (check, spec, device, dtype) as a pytest param, ID'd op-check-device-dtype; a dtype
    the manifest skips is a pytest skip with the manifest's reason."""
    result = []
    for spec in specs:
        for chk in CHECKS.values():
            if not chk.applies(spec):
                continue
            for device, dtype in _params(spec, chk.few_dtypes):
                skips = dict(spec.skips) | (dict(spec.cuda_skips) if device == "cuda" else {})
                marks = [pytest.mark.skip(reason=skips[dtype])] if dtype in skips else []
                name = f"{spec.name}-{chk.name}-{device}-{dtype}"
                result.append(pytest.param(chk, spec, device, dtype, id=name, marks=marks))
    return result


# ---------------------------------------------------------------------------------------------
# Comparisons and results


def _tolerance(spec: SuiteSpec, dtype: torch.dtype) -> dict[str, float]:
    pair = dict(spec.tolerance).get(str(dtype).removeprefix("torch."))
    return {} if pair is None else {"atol": pair[0], "rtol": pair[1]}


def same_layout(actual: torch.Tensor, expected: torch.Tensor) -> bool:
    """Strides equal wherever they matter (dims of size 1 never address memory)."""
    if actual.numel() <= 1:
        return True
    return all(
        a == e for a, e, s in zip(actual.stride(), expected.stride(), actual.shape, strict=True) if s != 1
    )


def assert_matches(actual, expected, spec: SuiteSpec, sample: Sample, what: str, check_strides=True) -> None:
    if isinstance(expected, tuple | list):
        for a, e in zip(actual, expected, strict=True):
            assert_matches(a, e, spec, sample, what, check_strides)
        return
    ctx = f"{spec.name} {what} on {sample!r}"
    assert actual.dtype == expected.dtype, f"{ctx}: dtype {actual.dtype} != {expected.dtype}"
    assert actual.shape == expected.shape, f"{ctx}: shape {tuple(actual.shape)} != {tuple(expected.shape)}"
    if check_strides:
        assert same_layout(actual, expected), f"{ctx}: strides {actual.stride()} != {expected.stride()}"
    if actual.device.type != "meta":
        torch.testing.assert_close(
            actual,
            expected.to(actual.device),
            equal_nan=True,
            msg=lambda m: f"{ctx}: {m}",
            **_tolerance(spec, expected.dtype),
        )


def _outputs(result) -> tuple:
    """Every output of a result (ops like layer_norm return several)."""
    return tuple(result) if isinstance(result, tuple | list) else (result,)


def _first(result):
    return _outputs(result)[0]


def _outs(spec: SuiteSpec, result, device: str, first: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
    """out= keyword arguments for the out overload: an empty tensor of each output's dtype, or
    ``first`` as the first output (the out= rules are checked on it; the others are just given)."""
    if spec.list_out:
        return {spec.outs[0]: [torch.empty(0, dtype=r.dtype, device=device) for r in result]}
    outs = {
        name: torch.empty(0, dtype=r.dtype, device=device)
        for name, r in zip(spec.outs, _outputs(result), strict=True)
    }
    if first is not None:
        outs[spec.outs[0]] = first
    return outs


def _first_sample(spec: SuiteSpec, device: str, dtype: str, min_numel: int = 2) -> Sample | None:
    for s in samples(spec, device, dtype):
        result = _first(s.call(functional(spec)))
        self_ = s.first_tensor
        if result.numel() >= min_numel and self_.numel() >= 2 and self_.is_contiguous() and result.dim() >= 1:
            return s
    return None


# ---------------------------------------------------------------------------------------------
# Values, meta, variants


@check()
def check_reference(spec: SuiteSpec, device: str, dtype: str) -> None:
    """Values, dtype, shape and strides equal the torch reference."""
    reference = reference_on(spec, device)
    if reference is None:
        pytest.skip("no tests.reference in the manifest")
    for s in samples(spec, device, dtype):
        assert_matches(s.call(functional(spec)), reference_result(reference, s), spec, s, "vs reference")


def reference_result(reference, s: Sample):
    """The reference's result; where torch has no kernel for the dtype on the sample's device
    (integer pooling on CUDA), torch's CPU kernel's result."""
    try:
        return s.call(reference)
    except NotImplementedError:
        if s.first_tensor.device.type == "cpu":
            raise
        return s.call(on_cpu(reference))


DYNAMIC_META_REASON = (
    "the output size depends on the data, which meta tensors lack (they raise, as torch's do); "
    "FakeTensorMode is tested in tests/runtime"
)


@check()
def check_meta(spec: SuiteSpec, device: str, dtype: str) -> None:
    """The same call on meta tensors gives the real result's shape, dtype and strides."""
    if spec.dynamic_output_shape:
        pytest.skip(DYNAMIC_META_REASON)
    for s in samples(spec, device, dtype):
        real = s.call(functional(spec))
        meta = s.on_meta().call(functional(spec))
        for r, m in zip(_outputs(real), _outputs(meta), strict=True):
            assert m.device.type == "meta"
            ctx = f"{spec.name} meta vs real on {s!r}"
            assert (m.shape, m.dtype) == (r.shape, r.dtype), (
                f"{ctx}: {m.shape}/{m.dtype} != {r.shape}/{r.dtype}"
            )
            assert same_layout(m, r), f"{ctx}: strides {m.stride()} != {r.stride()}"


@check(few_dtypes=True, applies=lambda spec: spec.described)
def check_describe(spec: SuiteSpec, device: str, dtype: str) -> None:
    """structgen.describe() gives the real call's outputs, its generated index-space function
    agrees with the C++ meta function (describe() raises otherwise), and the whole index space
    reads every input and writes every output whole through the IPFs, but for input elements
    the op does not read (rows past a pooling's last window), which then change nothing."""
    if device != "cpu":
        pytest.skip("describe() runs the meta function and Python only: the cpu case covers it")
    for s in samples(spec, device, dtype):
        d = structgen.describe(qualified(spec), *s.args, **s.kwargs)
        real = _outputs(s.call(functional(spec)))  # a Tensor[] output: its elements
        ctx = f"{spec.name} describe() on {s!r}"
        assert [(o[1], o[2]) for o in d.outputs] == [
            (tuple(r.shape), str(r.dtype).removeprefix("torch.")) for r in real
        ], f"{ctx}: outputs {d.outputs}"
        lo, hi = [0] * len(d.index_space), [i.size for i in d.index_space]
        if any(size == 0 for size in hi):
            continue  # an empty index space reads nothing
        outputs = {name for name, *_ in d.outputs}
        for ipf in d.ipfs:
            whole = tuple(slice(0, n) for n in ipf.shape)
            region = ipf.region(lo, hi)
            if region in (whole, None if ipf.select else whole):
                continue
            assert ipf.tensor not in outputs and ipf.element is None and region is not None, (
                f"{ctx}: the whole index space maps {ipf.tensor} to {region}, not all of it"
            )
            _check_unread(spec, s, ipf.tensor, region, real, ctx)


def _check_unread(spec: SuiteSpec, s: Sample, name: str, region, real, ctx: str) -> None:
    """Input ``name``'s elements outside ``region`` (what the whole index space reads) do not
    change the outputs."""
    from structgen.rules import _bind

    _, values = _bind(qualified(spec), s.args, s.kwargs)
    t = values[name]
    changed = (~t if t.dtype == torch.bool else t + 1000).clone()
    changed[region] = t[region]
    got = _outputs(functional(spec)(**{**values, name: changed}))
    for g, r in zip(got, real, strict=True):
        assert torch.equal(g, r) or torch.allclose(g, r, equal_nan=True, rtol=0, atol=0), (
            f"{ctx}: {name} is read outside {region}, the region the whole index space maps it to"
        )


def _splittable(d, combine: str | None) -> bool:
    return d.kind in ("parallel", "windowed", "diagonal") or (
        d.kind in ("reduction", "scanned") and combine is not None
    )


def _merged_tolerance(expected: torch.Tensor, n: int) -> dict[str, float]:
    """Partial results merged over a split dim of length n: another summation order, each of
    its n roundings up to eps of the largest partial sum."""
    if not (expected.is_floating_point() or expected.is_complex()):
        return {"rtol": 0.0, "atol": 0.0}
    eps = torch.finfo(expected.dtype).eps
    scale = max(1.0, float(expected.abs().max())) if expected.numel() else 1.0
    return {"rtol": 4 * n * eps, "atol": 4 * n * eps * scale}


@check(few_dtypes=True, applies=lambda spec: spec.described)
def check_sharding(spec: SuiteSpec, device: str, dtype: str) -> None:
    """Run tile by tile through the IPFs (structgen.sharding), the op gives its unsharded result
    for every split of each splittable index dim in 2 and 3 and for a random split of all of
    them; a dim that may not be split (whole, or reduced with no combine) is refused by name."""
    from structgen import sharding

    rng = torch.Generator().manual_seed(zlib.crc32(spec.name.encode()))
    for s in samples(spec, device, dtype):
        d = structgen.describe(qualified(spec), *s.args, **s.kwargs)
        expected = _outputs(s.call(functional(spec)))
        big = [i for i in d.index_space if i.size >= 2]
        free = [i for i in big if _splittable(i, d.combine)]
        splits = [{}] + [{i.name: n} for i in free for n in (2, 3)]
        splits.append({i.name: int(torch.randint(1, 5, (), generator=rng)) for i in free})
        for split in splits:
            seed_call()
            got = _outputs(sharding.run_sharded(qualified(spec), *s.args, splits=split, **s.kwargs))
            merged = [i.size for i in d.index_space if i.kind != "parallel" and split.get(i.name, 1) > 1]
            names = spec.outs if not spec.list_out else [f"{spec.outs[0]}[{i}]" for i in range(len(expected))]
            for name, g, e in zip(names, got, expected, strict=True):
                ctx = f"{spec.name} split {split}, output {name}, on {s!r}"
                tol = _merged_tolerance(e, max(merged)) if merged else _tolerance(spec, e.dtype)
                torch.testing.assert_close(g, e, equal_nan=True, msg=lambda m, ctx=ctx: f"{ctx}: {m}", **tol)
        for i in big:
            if not _splittable(i, d.combine):
                with pytest.raises(ValueError, match=f"'{i.name}'"):
                    sharding.run_sharded(qualified(spec), *s.args, splits={i.name: 2}, **s.kwargs)


@check()
def check_variants(spec: SuiteSpec, device: str, dtype: str) -> None:
    """functional == out= == inplace (where inplace is legal for the sample)."""
    for s in samples(spec, device, dtype):
        expected = s.call(functional(spec))
        if spec.out:
            outs = _outs(spec, expected, device)
            returned = s.call(overload(spec, spec.out), **outs)
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
                expected = functional(spec)(*s.args, **(s.kwargs | {"dtype": self_.dtype}))
            castable = torch.can_cast(expected.dtype, self_.dtype)
            takes = castable if spec.out_dtype == "castable" else expected.dtype == self_.dtype
            legal = expected.shape == self_.shape and takes
            if not legal or self_.stride().count(0) and self_.numel() > 1:
                continue
            t = s.clone()
            target, ptr = t.args[0], t.args[0].data_ptr()
            assert t.call(overload(spec, spec.inplace)) is target, f"{spec.inplace} did not return self"
            assert target.data_ptr() == ptr, f"{spec.inplace} moved self's storage"
            assert_matches(
                target, expected.to(self_.dtype), spec, s, "inplace vs functional", check_strides=False
            )


# ---------------------------------------------------------------------------------------------
# PyTorch's out= and inplace rules


@check()
def check_out_rules(spec: SuiteSpec, device: str, dtype: str) -> None:
    """out=: resize (+warning), castability, device, overlap, grad, and what out keeps."""
    s = _first_sample(spec, device, dtype)
    if spec.out is None or s is None:
        pytest.skip("no out= overload" if spec.out is None else "no sample with a non-trivial result")
    op = overload(spec, spec.out)
    if spec.list_out:
        return _check_list_out_rules(spec, op, s, device)
    results = s.call(functional(spec))
    expected = _first(results)  # the rules are checked on the first output; the others are given empty
    shape, rdtype = expected.shape, expected.dtype

    def outs(first: torch.Tensor) -> dict[str, torch.Tensor]:
        return _outs(spec, results, device, first)

    # Through the warning bridge, as <package>.<op>(..., out=) calls it.
    bridged = functools.partial(call, op)
    wrong = torch.empty(max(expected.numel() - 1, 1) + 5, dtype=rdtype, device=device)
    with pytest.warns(UserWarning, match=RESIZE_WARNING):
        s.call(bridged, **outs(wrong))
    assert_matches(wrong, expected, spec, s, "resized out")

    empty = torch.empty(0, dtype=rdtype, device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s.call(bridged, **outs(empty))
    assert_matches(empty, expected, spec, s, "empty out")

    fill = (
        float("nan")
        if (rdtype.is_floating_point or rdtype.is_complex)
        else (torch.iinfo(rdtype).max if rdtype != torch.bool else True)
    )
    prefilled = torch.full(shape, fill, dtype=rdtype, device=device)
    s.call(op, **outs(prefilled))
    assert_matches(prefilled, expected, spec, s, "prefilled out")

    if expected.dim() >= 2:
        strided = torch.empty(tuple(reversed(shape)), dtype=rdtype, device=device).permute(
            *reversed(range(expected.dim()))
        )
        strides, ptr = strided.stride(), strided.data_ptr()
        s.call(op, **outs(strided))
        assert (strided.stride(), strided.data_ptr()) == (strides, ptr), "a correctly sized out must be kept"
        assert_matches(strided, expected, spec, s, "non-contiguous out", check_strides=False)

    _check_out_dtype(spec, op, s, device, outs, expected)

    if rdtype.is_floating_point:
        with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
            s.call(op, **outs(torch.empty(shape, dtype=rdtype, device=device, requires_grad=True)))

    with pytest.raises(RuntimeError, match="(?i)device|meta"):  # the wording differs between torch ops
        s.call(op, **outs(torch.empty(shape, dtype=rdtype, device="meta")))

    # An out expanded along a dim of size > 1 (a shape has none: no such out) is refused.
    wide = next((d for d, n in enumerate(shape) if n > 1), None)
    if wide is not None:
        one = (*shape[:wide], 1, *shape[wide + 1 :])
        expanded = torch.empty(one, dtype=rdtype, device=device).expand(shape)
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            s.call(op, **outs(expanded))

    self_ = s.args[0]
    if isinstance(self_, torch.Tensor) and self_.dtype == rdtype:  # (Tensor[] inputs: not here)
        buf = torch.empty(self_.numel() + expected.numel() + 1, dtype=rdtype, device=device)
        aliased = s.clone()
        aliased.args[0] = buf[: self_.numel()].view(self_.shape).copy_(self_)
        partial = buf[1 : 1 + expected.numel()].view(shape)
        with pytest.raises(RuntimeError, match="refer to a single memory location"):
            aliased.call(op, **outs(partial))
        if expected.shape == self_.shape:
            full = s.clone()
            if spec.kind == "pointwise":
                full.call(op, **outs(full.args[0]))
                assert_matches(full.args[0], expected, spec, s, "out=self", check_strides=False)
            else:
                with pytest.raises(RuntimeError, match="unsupported operation"):
                    full.call(op, **outs(full.args[0]))


def _another_float(dtype: torch.dtype) -> torch.dtype:
    """A floating dtype other than `dtype`: what an out of the wrong dtype is made of."""
    return torch.float32 if dtype == torch.float64 else torch.float64


def _check_out_dtype(spec: SuiteSpec, op, s: Sample, device: str, outs, expected: torch.Tensor) -> None:
    """An out of another dtype, by the op's out_dtype: castable takes a wider one and rejects one
    the result can't be cast to; exact rejects any other; dtype_argument computes in the out's
    dtype, as the functional with that dtype= does."""
    rdtype, shape = expected.dtype, expected.shape
    if spec.out_dtype == "castable":
        narrower = {True: torch.int64, False: torch.bool}[rdtype.is_floating_point or rdtype.is_complex]
        if not torch.can_cast(rdtype, narrower):
            with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
                s.call(op, **outs(torch.empty(shape, dtype=narrower, device=device)))
        return
    other = _another_float(rdtype)
    if spec.out_dtype == "exact" or s.kwargs.get("dtype") is not None:
        with pytest.raises(RuntimeError, match=f"expected '{spec.outs[0]}' to have the result dtype"):
            s.call(op, **outs(torch.empty(shape, dtype=other, device=device)))
        return
    written = torch.empty(shape, dtype=other, device=device)
    s.call(op, **outs(written))
    expected = functional(spec)(*s.args, **(s.kwargs | {"dtype": other}))
    assert_matches(written, expected, spec, s, "out of another dtype (dtype=)")


def _check_list_out_rules(spec: SuiteSpec, op, s: Sample, device: str) -> None:
    """out= with a Tensor(a!)[] output: the list's length, then every element by the single-tensor
    rules (resize with its warning, castability, device, overlap with inputs and with each other)."""
    expected = s.call(functional(spec))
    name = spec.outs[0]
    dtype = expected[0].dtype

    def fresh(**changes) -> list[torch.Tensor]:
        return [
            torch.empty(r.shape, dtype=changes.get("dtype", dtype), device=changes.get("device", device))
            for r in expected
        ]

    with pytest.raises(RuntimeError, match=f"expected '{name}' to be a list of {len(expected)} tensors"):
        s.call(op, **{name: fresh()[:-1]})
    bridged = functools.partial(call, op)
    wrong = [torch.empty(r.numel() + 3, dtype=dtype, device=device) for r in expected]
    with pytest.warns(UserWarning, match=RESIZE_WARNING):
        s.call(bridged, **{name: wrong})
    assert_matches(wrong, expected, spec, s, "resized out")
    strided = [
        torch.empty(tuple(reversed(r.shape)), dtype=dtype, device=device).permute(*reversed(range(r.dim())))
        for r in expected
    ]
    s.call(op, **{name: strided})
    assert_matches(strided, expected, spec, s, "non-contiguous out", check_strides=False)
    narrower = {True: torch.int64, False: torch.bool}[dtype.is_floating_point or dtype.is_complex]
    if spec.out_dtype == "exact":
        other = _another_float(dtype)
        with pytest.raises(RuntimeError, match=f"expected '{name}\\[0\\]' to have the result dtype"):
            s.call(op, **{name: fresh(dtype=other)})
    elif not torch.can_cast(dtype, narrower):
        with pytest.raises(
            RuntimeError, match=f"can't be cast to the desired output type .* of '{name}\\[0\\]'"
        ):
            s.call(op, **{name: fresh(dtype=narrower)})
    with pytest.raises(RuntimeError, match="(?i)device|meta"):
        s.call(op, **{name: fresh(device="meta")})
    if len(expected) >= 2 and expected[0].numel() and expected[0].shape == expected[1].shape:
        shared = torch.empty(expected[0].shape, dtype=dtype, device=device)
        with pytest.raises(RuntimeError, match="refer to a single memory location"):
            s.call(op, **{name: [shared, shared] + fresh()[2:]})


@check()
def check_inplace_rules(spec: SuiteSpec, device: str, dtype: str) -> None:
    """inplace: a broadcast that changes self's shape or a non-castable result raises."""
    if spec.inplace is None:
        pytest.skip("no inplace overload")
    op = overload(spec, spec.inplace)
    d = dtype_of(dtype)
    n = len(spec.tensor_args)
    checked = False
    if spec.kind == "pointwise" and n >= 2:
        tensors = [values((4,), d, device, spec.domain, torch.Generator().manual_seed(0))]
        tensors += [
            values((3, 4), d, device, spec.domain, torch.Generator().manual_seed(i)) for i in range(n - 1)
        ]
        s = with_tensors(spec, tensors, "broadcast changes self")
        with pytest.raises(
            RuntimeError, match=r"output with shape \[4\] doesn't match the broadcast shape \[3, 4\]"
        ):
            s.call(op)
        if not (d.is_floating_point or d.is_complex) and d != torch.bool:
            tensors = [values((3,), d, device, spec.domain, torch.Generator().manual_seed(0))]
            tensors += [
                values((3,), torch.float32, device, spec.domain, torch.Generator()) for _ in range(n - 1)
            ]
            s = with_tensors(spec, tensors, "float into int self")
            try:
                result = s.on_meta().call(functional(spec))
            except RuntimeError:  # the op rejects float inputs: so must its inplace form
                with pytest.raises(RuntimeError):
                    s.call(op)
            else:
                if spec.out_dtype != "castable" and result.dtype != d:
                    with pytest.raises(RuntimeError, match="expected 'self' to have the result dtype"):
                        s.call(op)
                elif not torch.can_cast(result.dtype, d):  # a comparison's bool result casts to int
                    with pytest.raises(RuntimeError, match="can't be cast to the desired output type"):
                        s.call(op)
        checked = True
    sample = _first_sample(spec, device, dtype)
    if sample is not None:
        expanded = sample.clone()
        self_ = expanded.args[0]
        expanded.args[0] = torch.empty((1, *self_.shape[1:]), dtype=self_.dtype, device=device).expand(
            self_.shape
        )
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            expanded.call(op)
        checked = True
    if not checked:
        pytest.skip("no sample applies")


@check(few_dtypes=True)
def check_errors(spec: SuiteSpec, device: str, dtype: str) -> None:
    """The manifest's error cases raise with their message, on real and meta tensors (real
    only for errors raised from values, such as out-of-range indices)."""
    errors = compiled(spec).errors
    if not errors:
        pytest.skip("no tests.errors in the manifest")
    for case in errors:
        args, kwargs = case.make_args()
        for where in (device,) if case.data else (device, "meta"):
            moved = [a.to(where) if isinstance(a, torch.Tensor) else a for a in args]
            named = f"{spec.name}: tests.errors case ({case.source}) on {where}"
            try:
                functional(spec)(*moved, **kwargs)
            except (RuntimeError, IndexError, ValueError) as e:
                assert re.search(case.match, str(e)), f"{named}: {e!r} does not match {case.match!r}"
            else:
                pytest.fail(f"{named}: no error, where one matching {case.match!r} was expected")


# ---------------------------------------------------------------------------------------------
# Registration and tracing: opcheck, torch.compile


def _written_inputs(op) -> set[str]:
    """Positional arguments the overload writes (batch_norm's running stats), outs aside."""
    return {
        a.name
        for a in op._schema.arguments
        if a.alias_info is not None and a.alias_info.is_write and not a.kwarg_only
    }


# A generated package traces a written overload as its functional sibling (csrc/functionalize.cpp). An out=
# overload that also writes inputs (batch_norm.out's running statistics) has none: its functional
# sibling writes them too. torch's own answer is a separate functional op that returns the new
# statistics (_native_batch_norm_legit_functional); the manifest declares none yet, and torch's
# auto-functionalization takes custom ops with aliased returns only as Tag.out ops, whose written
# arguments must all be outs.
MUTATING_OUT_REASON = (
    "this out= overload also writes inputs (running statistics) and no functional op returns "
    "their new values, so it cannot be functionalized"
)
DYNAMIC_OUT_REASON = (
    "Dynamo cannot trace an out= overload whose output size is data: torch.compile(fullgraph=True) "
    "of torch's own masked_select(out=) stops with 'Dynamic shape operator (no meta kernel)' too"
)


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


@check(few_dtypes=True)
def check_opcheck(spec: SuiteSpec, device: str, dtype: str) -> None:
    """torch.library.opcheck, every test, one overload at a time, on real-device samples."""

    def has_nan(result) -> bool:  # opcheck compares eager and traced outputs without equal_nan
        return any(r.is_floating_point() and bool(r.isnan().any()) for r in _outputs(result))

    chosen = [
        s
        for s in samples(spec, device, dtype)
        if s.first_tensor.numel() > 0 and not has_nan(s.call(functional(spec)))
    ][:2]
    for s in chosen:
        results = s.call(functional(spec))
        result = _first(results)
        checks = [(spec.functional, s, {})]
        if spec.out:  # opcheck() leaves out the tracing tests torch cannot run on it
            checks.append((spec.out, s.clone(), _outs(spec, results, device)))
        if (
            spec.inplace
            and result.shape == s.args[0].shape
            and torch.can_cast(result.dtype, s.args[0].dtype)
            and 0 not in s.args[0].stride()
        ):
            checks.append((spec.inplace, s.clone(), {}))
        for name, sample, extra in checks:
            report = opcheck(overload(spec, name), tuple(sample.args), {**sample.kwargs, **extra})
            assert set(report.values()) == {"SUCCESS"}, f"{name} on {sample!r}: {report}"


def _lowered(spec: SuiteSpec, dtype: str) -> bool:
    """Whether Inductor compiles the functional as its formula for inputs of ``dtype``."""
    floating = getattr(torch, dtype).is_floating_point or getattr(torch, dtype).is_complex
    return spec.lowered == "all" or (spec.lowered == "floating" and floating)


@check(few_dtypes=True)
def check_compile(spec: SuiteSpec, device: str, dtype: str) -> None:
    """torch.compile with the default backend (Inductor), fullgraph, with static and with dynamic
    shapes, equals eager for every overload; a formula op's functional compiles as its formula
    (no call of the op in Inductor's code)."""
    import torch._dynamo

    # Two different shapes, so the dynamic graph is exercised beyond the sizes it was traced with.
    by_shape = {
        s.first_tensor.shape: s
        for s in reversed(samples(spec, device, dtype))
        if s.first_tensor.numel() > 1 and s.first_tensor.dim() >= 1
    }
    chosen = list(by_shape.values())[-2:]
    untraceable = []
    for name in (spec.functional, spec.out, spec.inplace):
        if name is None:
            continue
        op = overload(spec, name)
        if not traceable(op):
            untraceable.append(f"{name} ({MUTATING_OUT_REASON})")
            continue
        if name == spec.out and spec.dynamic_output_shape:
            untraceable.append(f"{name} ({DYNAMIC_OUT_REASON})")
            continue

        def run(*args, _op=op, _name=name, **kwargs):
            if _name == spec.out:
                # Contiguous and correctly sized: Dynamo traces neither a resize nor a strided out=.
                rs = functional(spec)(*args, **kwargs)
                if spec.list_out:
                    given = [torch.empty(r.shape, dtype=r.dtype, device=r.device) for r in rs]
                    _op(*args, **kwargs, **{spec.outs[0]: given})
                    return given
                outs = {
                    n: torch.empty(r.shape, dtype=r.dtype, device=r.device)
                    for n, r in zip(spec.outs, _outputs(rs))
                }
                if spec.seeded:  # returned, so the compiled graph keeps both draws, in order
                    return (*_outputs(_op(*args, **kwargs, **outs)), *_outputs(rs))
                return _op(*args, **kwargs, **outs)
            if _name == spec.inplace:
                return _op(args[0].clone(), *args[1:], **kwargs)
            return _op(*args, **kwargs)

        for dynamic in (False, True):
            torch._dynamo.reset()
            compiled_run = torch.compile(run, fullgraph=True, dynamic=dynamic)
            if (
                spec.dynamic_output_shape
            ):  # else Dynamo breaks the graph at the op, as at torch's masked_select
                compiled_run = torch._dynamo.config.patch(capture_dynamic_output_shape_ops=True)(compiled_run)
            # Static shapes compile once per shape: one is enough there.
            for s in chosen if dynamic else chosen[:1]:
                if name == spec.inplace:
                    r = _first(s.call(functional(spec)))
                    if r.shape != s.args[0].shape or not torch.can_cast(r.dtype, s.args[0].dtype):
                        continue
                mode = "dynamic" if dynamic else "static"
                if name == spec.functional and _lowered(spec, dtype):
                    from torch._inductor.utils import run_and_get_code

                    got, code = run_and_get_code(s.call, compiled_run)
                    called = f"{spec.namespace}.{name if '.' in name else name + '.default'}("
                    assert not any(called in c for c in code), (
                        f"{spec.name}: Inductor calls {called[:-1]} ({mode} shapes, {s!r}) instead of "
                        "generating code from its formula (structgen/lowering.py)"
                    )
                else:
                    got = s.call(compiled_run)
                assert_matches(got, s.call(run), spec, s, f"compiled ({mode} shapes) {name}")
    if untraceable:
        pytest.skip(f"not compiled: {'; '.join(untraceable)}")


# ---------------------------------------------------------------------------------------------
# Random inputs, gradients


def _hypothesis(spec: SuiteSpec, dtype: str):
    """Settings for the property check. CI: 25 examples, seeded by op and dtype (as samples are), so
    the examples do not move when the engine's code does; STRUCTGEN_HYPOTHESIS=fuzz: 2000 random
    ones, for long local runs."""
    from hypothesis import HealthCheck, seed, settings

    common = {"deadline": None, "print_blob": True, "suppress_health_check": list(HealthCheck)}
    if os.environ.get("STRUCTGEN_HYPOTHESIS") == "fuzz":
        return settings(max_examples=2000, **common)
    ci = settings(max_examples=25, database=None, **common)
    return lambda test: seed(zlib.crc32(f"{spec.name}/{dtype}".encode()))(ci(test))


@check()
def check_property(spec: SuiteSpec, device: str, dtype: str) -> None:
    """Random shapes, strides and broadcasting: meta == real, and real == reference."""
    import hypothesis
    from hypothesis import given
    from hypothesis import strategies as st

    if spec.samples:
        pytest.skip("the manifest gives this op's samples (tests.samples): random tensors would not fit it")
    d = dtype_of(dtype)
    reference = reference_on(spec, device)

    def from_rule(draw, spec: SuiteSpec, dtype: torch.dtype, device: str) -> Sample:
        s = drawn_sample(HypothesisPick(draw), spec, dtype, device, draw(st.integers(0, 2**16)))
        hypothesis.assume(accepted(spec, s))  # both refuse: says nothing about either
        return s

    draw_sample = {"pointwise": draw_pointwise, "reduction": draw_reduction}.get(spec.kind, from_rule)

    @_hypothesis(spec, dtype)
    @given(st.data())
    def prop(data):
        s = draw_sample(data.draw, spec, d, device)
        hypothesis.assume(not rejected_by_both(spec, s))
        real = s.call(functional(spec))
        meta = s.on_meta().call(functional(spec))
        assert (meta.shape, meta.dtype) == (real.shape, real.dtype), f"meta vs real on {s!r}"
        assert same_layout(meta, real), f"meta strides {meta.stride()} != real {real.stride()} on {s!r}"
        if reference is not None:
            assert_matches(real, s.call(reference), spec, s, "vs reference (hypothesis)")

    prop()


# ---------------------------------------------------------------------------------------------
# CUDA: on a GPU, and on the CPU emulator; every kernel variant


def _skip_unless_cuda_kernel(spec: SuiteSpec, device: str, dtype: str) -> None:
    """The CUDA comparisons run once per dtype (under the cpu parameter) where a CUDA kernel is."""
    if "cuda" not in spec.devices:
        pytest.skip("the op has no CUDA kernel")
    if device != "cpu":
        pytest.skip("runs once, under the cpu parameter")
    if dtype in dict(spec.cuda_skips):
        pytest.skip(dict(spec.cuda_skips)[dtype])


@check()
def check_cuda_matches_cpu(spec: SuiteSpec, device: str, dtype: str) -> None:
    """CPU and CUDA agree on every sample (runs where a GPU is present)."""
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    _skip_unless_cuda_kernel(spec, device, dtype)
    for s in samples(spec, "cpu", dtype):
        cuda = (on_gpu := s.map_tensors(lambda t: t.cuda())).call(functional(spec))
        own_bits = compiled(spec).bits_reference is not None  # then checked against its own draw
        expected = own_bits_expected(spec, on_gpu, cuda) if own_bits else s.call(functional(spec))
        assert_matches(cuda, expected, spec, s, "cuda vs cpu")


@check(applies=lambda spec: "cuda" in spec.devices)
def check_emulated_cuda(spec: SuiteSpec, device: str, dtype: str) -> None:
    """The CUDA path, run by the CPU emulator on CPU tensors, matches the CPU impl on every
    sample, with every CUDA kernel variant pinned in turn, through the functional and out=; and
    gives the same bits with another poison in unwritten shared memory (emulation.poison_checked)."""
    if torch.cuda.is_available():
        pytest.skip("a GPU is present: it runs the same kernels (the cuda_matches_cpu check)")
    _skip_unless_cuda_kernel(spec, device, dtype)
    emu = emulated(spec)
    for variant in dict(spec.kernel_variants).get("cuda", (None,)):
        pin = _autotune().pin(f"{spec.out}@cuda", variant) if variant else contextlib.nullcontext()
        what = f"emulated CUDA{f' variant {variant!r}' if variant else ''} vs CPU"
        with pin:
            for s in samples(spec, "cpu", dtype):
                try:
                    expected = s.call(functional(spec))
                except (RuntimeError, IndexError) as e:  # a promotion sample the op refuses
                    with pytest.raises(type(e)):
                        s.clone().call(functional(emu))
                    continue
                run = lambda s=s: s.clone().call(functional(emu))
                result = poison_checked(run, f"{spec.name} {dtype}, {what} on {s!r}")
                if compiled(spec).bits_reference is not None:  # its own bits: checked against its own draw
                    expected = own_bits_expected(spec, s, result)
                assert_matches(result, expected, spec, s, what)
                if spec.out is not None and not spec.dynamic_output_shape:
                    outs = _outs(spec, expected, "cpu")
                    s.clone().call(overload(emu, emu.out), **outs)
                    written = [outs[n] for n in spec.outs] if not spec.list_out else outs[spec.outs[0]]
                    assert_matches(
                        tuple(written), _outputs(expected), spec, s, f"{what}, out=", check_strides=False
                    )
                    if spec.out_dtype == "dtype_argument" and len(spec.outs) == 1 and not spec.list_out:
                        # An out of another dtype computes in it (sum(z, out=float64) casts z first).
                        one_out = lambda t: {spec.outs[0]: t}
                        _check_out_dtype(spec, overload(emu, emu.out), s.clone(), "cpu", one_out, expected)


@check(applies=lambda spec: bool(spec.kernel_variants))
def check_kernel_variants(spec: SuiteSpec, device: str, dtype: str) -> None:
    """Every kernel variant (pinned in turn, where it is eligible) matches the reference, through
    the functional and the out= overload."""
    reference = reference_on(spec, device)
    assert reference is not None and spec.out is not None
    out_op = overload(spec, spec.out)
    for variant in dict(spec.kernel_variants).get(device, ()):
        with _autotune().pin(f"{spec.out}@{device}", variant):
            for s in samples(spec, device, dtype):
                expected = s.call(reference)
                assert_matches(
                    s.call(functional(spec)), expected, spec, s, f"kernel variant {variant!r} vs reference"
                )
                if not spec.list_out and not spec.dynamic_output_shape:
                    wanted = _outputs(expected)
                    outs = {
                        name: torch.full_like(w, 7) if w.numel() else torch.empty_like(w)
                        for name, w in zip(spec.outs, wanted, strict=True)
                    }
                    s.call(out_op, **outs)
                    for name, w in zip(spec.outs, wanted, strict=True):
                        assert_matches(
                            outs[name],
                            w,
                            spec,
                            s,
                            f"kernel variant {variant!r} out= ({name}) vs reference",
                            check_strides=False,
                        )


# The vmap and gradient checks live in modules of their own (registered on import, after the
# checks above).
from structgen.conformance import batching, gradients, hostile  # noqa: F401
