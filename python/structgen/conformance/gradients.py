"""The gradient checks (registered into checks.CHECKS on import): gradcheck and gradgradcheck
in float64, gradients against torch's for the reference op in every floating dtype, and backward
raising for ops without derivatives."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
from torch.autograd.gradcheck import GradcheckError

import structgen
from structgen.codegen.dest.conformance_suite import SuiteSpec
from structgen.conformance.checks import _first, _outputs, _tolerance, _written_inputs, check, opcheck
from structgen.conformance.samples import samples
from structgen.conformance.spec import functional, on_cpu, qualified, reference_on
from structgen.conformance.tensors import Sample, dtype_of


def _with_grad(s: Sample, spec: SuiteSpec) -> tuple[Sample, list[torch.Tensor]]:
    """The sample with every floating tensor a leaf that requires grad (not the tensors the op
    writes, such as batch_norm's running statistics), and those leaves."""
    written = _written_inputs(functional(spec))
    leaves: list[torch.Tensor] = []

    def leaf(t: torch.Tensor) -> torch.Tensor:
        if not (t.is_floating_point() or t.is_complex()):
            return t
        t = t.detach().clone().requires_grad_()
        leaves.append(t)
        return t

    g = Sample(list(s.args), dict(s.kwargs), s.desc)
    wanted = set(spec.grad_inputs) - written if spec.differentiable else set(spec.positional) - written
    for i, a in enumerate(g.args):
        name = spec.positional[i] if i < len(spec.positional) else None
        if name in wanted:
            g.args[i] = Sample([a], {}, "").map_tensors(leaf).args[0]
    g.kwargs = {
        k: Sample([v], {}, "").map_tensors(leaf).args[0] if k in wanted else v for k, v in g.kwargs.items()
    }
    return g, leaves


def _gradcheck_samples(spec: SuiteSpec, device: str, dtype: str, limit: int | None = 3) -> list[Sample]:
    """Small samples with finite values (gradcheck's finite differences need no infinity and no
    point where the function is not differentiable: the extremes samples have both), the first
    ``limit`` of them."""

    def small(s: Sample) -> bool:
        found = []
        s.map_tensors(lambda t: found.append(t) or t)
        return bool(found) and all(
            t.numel() <= 512 and bool(torch.isfinite(t).all())
            for t in found
            if t.is_floating_point() or t.is_complex()
        )

    def finite(s: Sample) -> bool:  # the function is defined there (var of one element is not)
        return all(
            bool(torch.isfinite(o).all())
            for o in _outputs(s.call(functional(spec)))
            if o.is_floating_point() or o.is_complex()
        )

    return [s for s in samples(spec, device, dtype) if small(s) and s.first_tensor.numel() > 0 and finite(s)][
        :limit
    ]


@check(applies=lambda spec: spec.differentiable)
def check_gradients(spec: SuiteSpec, device: str, dtype: str) -> None:
    """float64 (complex64: in complex128): torch.autograd.gradcheck and gradgradcheck (the
    gradients and their own gradients against finite differences); every floating and complex
    dtype: each input's gradient against torch's for the reference op, for one random
    grad_output."""
    if not (dtype_of(dtype).is_floating_point or dtype_of(dtype).is_complex):
        pytest.skip("gradients need a floating or complex dtype")
    fn = functional(spec)
    found = _gradcheck_samples(spec, device, dtype)
    if not found:
        pytest.skip("no small finite sample")
    for s in found:
        g, leaves = _with_grad(s, spec)
        outputs = [o for o in _outputs(g.call(fn)) if o.requires_grad]
        if not leaves or not outputs:
            continue
        ctx = f"{spec.name} on {s!r}"
        if dtype in ("float64", "complex64"):
            wide = (
                s
                if dtype == "float64"
                else s.map_tensors(lambda t: t.to(torch.complex128) if t.is_complex() else t)
            )
            w, w_leaves = _with_grad(wide, spec)

            def call(*inputs, w=w):
                it = iter(inputs)
                return tuple(
                    o
                    for o in _outputs(w.map_tensors(lambda t: next(it) if t.requires_grad else t).call(fn))
                    if o.requires_grad
                )

            for name, gradcheck in (
                ("gradcheck", torch.autograd.gradcheck),
                ("gradgradcheck", torch.autograd.gradgradcheck),
            ):
                try:
                    gradcheck(call, tuple(w_leaves), raise_exception=True)
                except GradcheckError as e:
                    raise AssertionError(f"{ctx}: {name}: {e}") from None
        reference = reference_on(spec, device, grads=True)
        if reference is not None:
            _compare_gradients(spec, s, g, leaves, outputs, reference, ctx)


def _compare_gradients(spec, s: Sample, g: Sample, leaves, outputs, reference, ctx: str) -> None:
    """Every input's gradient against torch's for the reference op, for one random grad_output.
    float32/float64: close. float16/bfloat16: as close to the float64 gradient as torch's is (up
    to twice torch's error, plus a few ulps of the largest gradient)."""
    gen = torch.Generator().manual_seed(0)
    grads_out = [torch.randn(o.shape, generator=gen, dtype=torch.float64).to(o) for o in outputs]

    def grads(sample: Sample, fn, cast=None) -> list[torch.Tensor]:
        try:
            return _grads(sample, fn, cast)
        except NotImplementedError:  # torch has no backward kernel for the dtype on this device
            if sample.first_tensor.device.type == "cpu":
                raise
            return _grads(sample, on_cpu(fn), cast)  # the leaves stay on the device

    def _grads(sample: Sample, fn, cast=None) -> list[torch.Tensor]:
        if cast is not None:
            sample = sample.map_tensors(lambda t: t.to(cast) if t.is_floating_point() else t)
        r, r_leaves = _with_grad(sample, spec)
        outs = [o for o in _outputs(r.call(fn)) if o.requires_grad]
        go = [x.to(o) for x, o in zip(grads_out, outs, strict=True)]
        found = torch.autograd.grad(outs, r_leaves, go, allow_unused=True)
        return [torch.zeros_like(t) if x is None else x for x, t in zip(found, r_leaves, strict=True)]

    got = torch.autograd.grad(outputs, leaves, grads_out, allow_unused=True)
    got = [torch.zeros_like(t) if x is None else x for x, t in zip(got, leaves, strict=True)]
    want = grads(s, reference)
    dtype = leaves[0].dtype
    if dtype in (torch.float16, torch.bfloat16):
        truth = grads(s, reference, torch.float64)
        for i, (a, b, t) in enumerate(zip(got, want, truth, strict=True)):
            defined = torch.isfinite(t)  # where the float64 gradient itself is inf or NaN, no truth
            if not bool(defined.any()):
                continue
            a, b, t = a.double()[defined], b.double()[defined], t[defined]
            scale = max(1.0, float(t.abs().max()))
            ours, theirs = (a - t).abs().max(), (b - t).abs().max()
            bound = 2 * theirs + 8 * torch.finfo(dtype).eps * scale
            assert ours <= bound, (
                f"{ctx}: gradient {i} is off the float64 gradient by {float(ours):.3g}, torch's by "
                f"{float(theirs):.3g}"
            )
        return
    for i, (a, b) in enumerate(zip(got, want, strict=True)):
        tol = _tolerance(spec, a.dtype)

        def msg(m: str, i: int = i) -> str:
            return f"{ctx}: gradient {i}: {m}"

        torch.testing.assert_close(a, b, equal_nan=True, msg=msg, **tol)


@check(few_dtypes=True, applies=lambda spec: spec.differentiable)
def check_forward_ad(spec: SuiteSpec, device: str, dtype: str) -> None:
    """Forward mode (torch.func.jvp): the tangent equals torch's for the reference op, in
    float64, and so does the Hessian of sum(output^2) by its first input, forward over reverse
    (torch.func.hessian: jacfwd of jacrev); an op without a forward formula refuses by name.
    Where torch has no forward mode for the reference (embedding_bag, _cdist_forward) or there is
    no reference, the tangent is checked against the Jacobian of reverse mode (checked against
    torch by check_gradients), and the Hessian against reverse over reverse."""
    if not dtype_of(dtype).is_floating_point:
        pytest.skip("torch has no tangents for integer or bool tensors (forward AD refuses them)")
    fn, reference = functional(spec), reference_on(spec, device, grads=True)
    for s in _gradcheck_samples(spec, device, "float64")[:2]:
        g, leaves = _with_grad(s, spec)
        leaves = [t.detach() for t in leaves]
        if not leaves:
            continue
        gen = torch.Generator().manual_seed(0)
        tangents = tuple(torch.randn(t.shape, generator=gen, dtype=t.dtype).to(t.device) for t in leaves)

        def call(f, g=g):
            def run(*primals):
                it = iter(primals)

                def place(x, it=it):
                    return next(it) if x.requires_grad else x

                return tuple(o for o in _outputs(g.map_tensors(place).call(f)) if o.is_floating_point())

            return run

        if not spec.forward_ad:
            with pytest.raises(NotImplementedError, match=f"forward AD with {qualified(spec)}"):
                torch.func.jvp(call(fn), tuple(leaves), tangents)
            return
        got = torch.func.jvp(call(fn), tuple(leaves), tangents)[1]
        points = tuple(leaves)
        theirs = _unless_refused(torch.func.jvp, call(reference), points, tangents) if reference else None
        want = theirs[1] if theirs is not None else _by_reverse(call(fn), leaves, tangents)
        ctx = f"{spec.name} on {s!r}"
        assert len(got) == len(want), f"{ctx}: {len(got)} tangents, torch gives {len(want)}"
        for i, (a, b) in enumerate(zip(got, want, strict=True)):
            torch.testing.assert_close(a, b, msg=lambda m, i=i, ctx=ctx: f"{ctx}: tangent {i}: {m}")
        if leaves[0].numel() <= 64:

            def squares(f, call=call, rest=tuple(leaves[1:])):
                return lambda first: sum((o * o).sum() for o in call(f)(first, *rest))

            # hessian is jacfwd(jacrev): a random op draws one mask for every tangent ("same")
            def hessian_of(f, spec=spec):
                return torch.func.jacfwd(torch.func.jacrev(f), randomness="same" if spec.seeded else "error")

            hessian = hessian_of(squares(fn))(leaves[0])
            theirs = _unless_refused(hessian_of(squares(reference)), leaves[0]) if reference else None
            if theirs is None:
                theirs = torch.func.jacrev(torch.func.jacrev(squares(fn)))(leaves[0])
            torch.testing.assert_close(
                hessian, theirs, msg=lambda m, ctx=ctx: f"{ctx}: Hessian of sum(output^2) by its input: {m}"
            )


def _unless_refused(run: Callable, *args: Any) -> Any:
    """``run(*args)`` (forward mode through torch's reference), or None where torch has no forward
    formula for an op it calls."""
    try:
        return run(*args)
    except NotImplementedError as e:
        if "Trying to use forward AD with" not in str(e):
            raise
        return None


def _by_reverse(run: Callable, leaves: list[torch.Tensor], tangents: tuple[torch.Tensor, ...]) -> tuple:
    """The tangents J t, J the Jacobian reverse mode gives (one vector-Jacobian product per
    output element)."""
    outputs = run(*leaves)
    jacobians = torch.func.jacrev(run, argnums=tuple(range(len(leaves))))(*leaves)

    def product(o: torch.Tensor, per_input: tuple[torch.Tensor, ...]) -> torch.Tensor:
        if o.numel() == 0:
            return torch.zeros_like(o)
        return sum(
            (j.reshape(o.numel(), t.numel()) @ t.reshape(-1).to(j.dtype)).reshape(o.shape)
            for j, t in zip(per_input, tangents, strict=True)
        )

    return tuple(product(o, per_input) for o, per_input in zip(outputs, jacobians, strict=True))


@check(applies=lambda spec: not spec.differentiable)
def check_backward_raises(spec: SuiteSpec, device: str, dtype: str) -> None:
    """Ops without derivatives must fail loudly on backward, not warn and return wrong grads."""
    if not (dtype_of(dtype).is_floating_point or dtype_of(dtype).is_complex):
        pytest.skip("torch has no gradients for integer or bool tensors (requires_grad refuses them)")
    s = next(s for s in samples(spec, device, dtype) if s.first_tensor.numel() > 0)
    written = _written_inputs(functional(spec))  # in-place updates of a leaf that requires grad fail first
    g = s.map_tensors(lambda t: t.detach().requires_grad_() if t.is_floating_point() or t.is_complex() else t)
    for i, name in enumerate(spec.positional[: len(g.args)]):
        if name in written and isinstance(g.args[i], torch.Tensor):
            g.args[i] = g.args[i].detach()
    result = _first(g.call(functional(spec)))
    if not (result.dtype.is_floating_point or result.dtype.is_complex):
        pytest.skip(f"torch gives a {result.dtype} result no gradient")
    with pytest.raises(RuntimeError, match="derivative for .* is not implemented"):
        result.sum().abs().backward()  # abs: a real scalar, for complex results too


def _grown(spec: SuiteSpec, s: Sample) -> tuple[Sample, Sample] | None:
    """``s`` by keyword, and ``s`` with one dim of its index space (2 or more long; a parallel one
    first, else a reduced, whole, scanned or windowed one, whose size a derivative may divide by)
    one longer in every input that has it, the new slice a copy of the first (so indices stay in
    range); None where no dim can grow (a non-tensor argument fixes them all)."""
    from structgen.rules import _bind

    d = structgen.describe(qualified(spec), *s.args, **s.kwargs)
    _, values = _bind(qualified(spec), s.args, s.kwargs)
    outputs = {name for name, *_ in d.outputs}
    order = sorted(range(len(d.index_space)), key=lambda j: d.index_space[j].kind != "parallel")
    for j in order:
        dim = d.index_space[j]
        if dim.size < 2:
            continue  # a size of 1 is specialised by every compiler (0/1 specialisation)
        grown = dict(values)
        for ipf in d.ipfs:
            if ipf.tensor in outputs:
                continue
            axes = [
                a
                for a, row in enumerate(ipf.matrix)
                if row[j] == 1 and sum(map(abs, row)) == 1 and ipf.tile[a] == 1 and ipf.shape[a] == dim.size
            ]
            if not axes:
                continue
            value = grown[ipf.tensor]
            t = value if ipf.element is None else value[ipf.element]
            for a in axes:
                t = torch.cat([t, t.narrow(a, 0, 1)], a)
            if ipf.element is None:
                grown[ipf.tensor] = t
            else:
                grown[ipf.tensor] = [t if i == ipf.element else x for i, x in enumerate(value)]
        candidate = Sample([], grown, f"{s.desc}, {dim.name} grown by 1")
        try:
            candidate.call(functional(spec))
        except (RuntimeError, ValueError, IndexError):
            continue  # another argument ties this dim to its size
        return Sample([], values, s.desc), candidate
    return None


@check(few_dtypes=True, applies=lambda spec: spec.differentiable and spec.described)
def check_compiled_backward(spec: SuiteSpec, device: str, dtype: str) -> None:
    """Backward under torch.compile(dynamic=True): AOT autograd traces the derivatives on symbolic
    sizes, so a formula that reads a size as a number bakes it in and every new batch size
    recompiles. Run on a sample and on the same sample with one dim of its index space grown, the
    loss sum(output^2) compiles one graph, and its gradients equal eager's; opcheck on inputs
    that require grad runs torch's own AOT-dispatch tests through the backward."""
    if not dtype_of(dtype).is_floating_point:
        pytest.skip("gradients need a floating dtype")
    pair = next((p for s in _gradcheck_samples(spec, device, dtype, None) if (p := _grown(spec, s))), None)
    assert pair is not None, (
        f"{spec.name}: no small finite sample has an index-space dim of 2 or more that no other "
        "argument fixes: add one (tests: samples) so the backward is compiled at two sizes"
    )
    s, grown = pair
    fn = functional(spec)

    def loss(*args, **kwargs):
        return sum((o * o).sum() for o in _outputs(fn(*args, **kwargs)) if o.requires_grad)

    import torch.fx.experimental._config as shapes_config

    # No duck sizing: two dims that are equal in one sample are not guarded equal.
    with shapes_config.patch(use_duck_shape=False):
        first, second = _compiled_grads_match(spec, loss, [s, grown])
    assert second == first, (
        f"{spec.name}: forward+backward compiled again for {grown!r} after {s!r}: a derivative "
        "reads a size as a number (sym_size and sym_numel keep it symbolic)"
    )
    g, _ = _with_grad(s, spec)
    report = opcheck(fn, tuple(g.args), g.kwargs)
    assert set(report.values()) == {"SUCCESS"}, f"{spec.name} opcheck with requires_grad on {s!r}: {report}"


def _compiled_grads_match(spec: SuiteSpec, loss, samples_: list[Sample]) -> list[int]:
    """Each sample's gradients of ``loss`` compiled (dynamic shapes, AOT autograd) against eager;
    after each, the number of graphs compiled so far (a first compile may take two tries)."""
    import torch._dynamo
    import torch._dynamo.testing

    torch._dynamo.reset()
    counter = torch._dynamo.testing.CompileCounterWithBackend("aot_eager")
    compiled_loss = torch.compile(loss, dynamic=True, backend=counter)
    frames = []
    for sample in samples_:
        ctx = f"{spec.name} compiled backward (dynamic shapes) on {sample!r}"
        eager, eager_leaves = _with_grad(sample, spec)
        traced, traced_leaves = _with_grad(sample, spec)
        assert eager_leaves, f"{ctx}: a differentiable op with no floating input to differentiate"
        want = torch.autograd.grad(eager.call(loss), eager_leaves, allow_unused=True)
        got = torch.autograd.grad(traced.call(compiled_loss), traced_leaves, allow_unused=True)
        for i, (a, b) in enumerate(zip(got, want, strict=True)):
            assert (a is None) == (b is None), f"{ctx}: gradient {i} is defined in one of the two only"
            if a is not None:
                torch.testing.assert_close(
                    a,
                    b,
                    equal_nan=True,
                    msg=lambda m, i=i, ctx=ctx: f"{ctx}: gradient {i}: {m}",
                    **_tolerance(spec, a.dtype),
                )
        frames.append(counter.frame_count)
    return frames
