"""torch.func.vmap for generated ops: one batching rule per functional and inplace overload,
registered with torch.library.register_vmap, that runs the call's plan (structgen.vmap_plan: how
the index space takes a batch in one call, proven with describe()); an inplace call writes the
functional's batched result into self."""

from __future__ import annotations

import functools

import torch

from structgen import packages, rules
from structgen.vmap_plan import REDUCTIONS, Plan, plan, sibling_args, written_inputs

__all__ = ["Plan", "plan", "register"]


def _offset_positions(positions: torch.Tensor, size: int, count: int) -> torch.Tensor:
    """Element b's positions (batch first) as positions in the batch-major merged axis: p + b *
    count. A negative position (-count <= p < 0; take counts from the end, the other ops refuse
    it) becomes one that wraps to the same entry and is still negative; one out of range goes
    out of the merged range too, so the op still refuses it rather than read another element."""
    p = positions.long()
    b = torch.arange(size, device=p.device).view(size, *([1] * (p.dim() - 1)))
    return torch.where(
        p >= count,
        p + size * count,
        torch.where(
            p >= 0, p + b * count, torch.where(p >= -count, p - (size - 1 - b) * count, p - size * count)
        ),
    )


def _element(t: torch.Tensor, d: int) -> torch.Tensor:
    """Element 0 along batch axis d, where the plan needs one; a batch of none has no element 0,
    and zeros of an element's shape stand in (the plan reads shapes, dtypes and layouts)."""
    if t.size(d):
        return t.select(d, 0)
    return t.new_zeros(t.shape[:d] + t.shape[d + 1 :])


# ---------------------------------------------------------------------------------------------
# The batching rule


def _apply(rule: dict, info, in_dims, args, kwargs):
    op = _functional_op(rule)
    names = [a.name for a in op._schema.arguments if not a.kwarg_only]
    dims = dict(zip(names, in_dims))
    bdim = {}  # (argument, element) -> the batch axis
    for name, d in dims.items():
        if isinstance(d, int):
            bdim[(name, None)] = d
        elif isinstance(d, list | tuple):
            bdim.update({(name, i): e for i, e in enumerate(d) if e is not None})
    values = rules._bind(packages.qualified(rule), args, kwargs)[1]  # defaults filled in
    size = info.batch_size

    def example(name, element, t):
        d = bdim.get((name, element))
        return t if d is None else _element(t, d)

    per_example = _map_tensors(rule, values, example)
    if size == 0:
        result = _empty_batch(rule, op, per_example)
        return result, (0 if isinstance(result, torch.Tensor) else type(result)(0 for _ in result))
    key = tuple(_key(per_example[name]) for name, _ in rule["args"])
    p = _cached_plan(packages.qualified(rule), frozenset(bdim), size, key, per_example)
    result = _run(p, rule, op, values, bdim, size)
    return result, (0 if isinstance(result, torch.Tensor) else type(result)(0 for _ in result))


def _empty_batch(rule: dict, op, per_example: dict):
    """A batch of none: empty outputs of the element's shapes and dtypes (torch's vmap gives
    those), found by the meta function; no plan (they index element 0) and no kernel runs."""
    tensors = [t for v in per_example.values() for t in (v if isinstance(v, list | tuple) else [v])]
    device = next(t.device for t in tensors if isinstance(t, torch.Tensor))
    element = op(**_map_tensors(rule, per_example, lambda n, e, t: t.to("meta")))
    outs = [element] if isinstance(element, torch.Tensor) else list(element)
    empty = [torch.empty((0, *o.shape), dtype=o.dtype, device=device) for o in outs]
    return empty[0] if isinstance(element, torch.Tensor) else type(element)(empty)


def _key(v):
    """What the plan of a call depends on in one argument: a tensor's shape and dtype, a value."""
    if isinstance(v, torch.Tensor):
        return (tuple(v.shape), v.dtype)
    if isinstance(v, list | tuple):
        return tuple(_key(e) for e in v)
    return v


_PLANS: dict = {}


def _cached_plan(op: str, batched: frozenset, size: int, key: tuple, per_example: dict) -> Plan:
    """plan(), once per op, batched tensors, batch size and per-example shapes, dtypes and
    arguments (describe() costs about 100 us; a vmapped call runs it for every batch otherwise)."""
    k = (op, batched, size, key)
    if k not in _PLANS:
        if len(_PLANS) > 4096:
            _PLANS.clear()
        _PLANS[k] = plan(op, set(batched), size, **per_example)
    return _PLANS[k]


def _map_tensors(rule: dict, values: dict, fn) -> dict:
    out = dict(values)
    for name, kind in rule["args"]:
        v = values[name]
        if kind in ("tensor", "tensor?") and isinstance(v, torch.Tensor):
            out[name] = fn(name, None, v)
        elif kind == "tensors":
            out[name] = [fn(name, i, t) for i, t in enumerate(v)]
    return out


def _run(p: Plan, rule: dict, op, values: dict, bdim: dict, size: int):
    front = _map_tensors(
        rule, values, lambda n, e, t: t if (n, e) not in bdim else t.movedim(bdim[(n, e)], 0)
    )
    if p.kind == "prepend":

        def padded(n, e, t):
            if (n, e) not in bdim:
                if not p.expand:
                    return t
                t = t.expand(size, *t.shape)
            if p.pad is None:
                return t
            return t.reshape((t.shape[0],) + (1,) * (p.pad - (t.dim() - 1)) + tuple(t.shape[1:]))

        args = _map_tensors(rule, front, padded) | dict(p.shifted)
        if p.sibling is None:
            result = op(**args)
        else:
            sibling = _functional_op(packages.rule_of(p.sibling))
            result = sibling(**sibling_args(dict(p.passed), args))
        for name in written_inputs(rule, values):  # padded through a copy: back
            if args[name].untyped_storage().data_ptr() != front[name].untyped_storage().data_ptr():
                front[name].copy_(args[name].reshape(front[name].shape))
        return result
    if p.kind == "offset":
        moved, moved_bdim = dict(front), {k: 0 for k in bdim}
        for holder, tensor, axis, count, as_1d in p.offsets:
            held = (
                front[holder] if (holder, None) in bdim else front[holder].expand(size, *front[holder].shape)
            )
            held = held.reshape(size, 1) if as_1d else held
            if tensor is not None:  # None: the holder read as [1], no tensor merged
                t = front[tensor].movedim(0, axis)
                moved[tensor] = t.reshape(*t.shape[:axis], size * t.shape[axis + 1], *t.shape[axis + 2 :])
                del moved_bdim[(tensor, None)]
                held = _offset_positions(held, size, count)
            moved[holder] = held
            moved_bdim[(holder, None)] = 0
        return _run(p.inner, rule, op, moved, moved_bdim, size)
    if p.kind == "expanded":
        name, shape = p.expanded
        t = front[name]
        t = t.reshape(size, *(1,) * (len(shape) - (t.dim() - 1)), *t.shape[1:]).expand(size, *shape)
        return _run(p.inner, rule, op, front | {name: t}, {k: 0 for k in bdim}, size)  # batch first
    if p.kind == "unit":
        name, at, squeezed = p.unit
        matrix = front[name].unsqueeze(1 + at)  # batch first: [B, 1, k] or [B, k, 1]
        result = _run(p.inner, rule, op, front | {name: matrix}, {k: 0 for k in bdim}, size)
        outs = [result] if isinstance(result, torch.Tensor) else list(result)
        outs = [o if a is None else o.squeeze(1 + a) for o, a in zip(outs, squeezed, strict=True)]
        return outs[0] if isinstance(result, torch.Tensor) else type(result)(outs)
    if p.kind == "collapse":
        (first, second), axes = p.collapsed
        at = dict(axes)

        def merged(n, e, t):
            a = at.get((n, e))
            return t if a is None else t.flatten(a + 1, a + 2) if (n, e) in bdim else t.flatten(a, a + 1)

        result = _run(p.inner, rule, op, _map_tensors(rule, front, merged), {k: 0 for k in bdim}, size)
        outs = [result] if isinstance(result, torch.Tensor) else list(result)
        outs = [
            o if (n, None) not in at else o.unflatten(at[(n, None)] + 1, (first, second))
            for o, n in zip(outs, rule["outputs"], strict=True)
        ]
        return outs[0] if isinstance(result, torch.Tensor) else type(result)(outs)
    if p.kind == "affine":
        return _run_affine(p, rule, op, front, bdim, size)
    if p.kind == "unreduced":
        arg, value, combine = p.unreduced
        kept = _run(p.inner, rule, op, values | {arg: value}, bdim, size)
        every = list(range(1, kept.dim()))
        return REDUCTIONS[combine](kept, every) if every else kept
    if p.kind == "flatten":
        name, arg = p.flat
        result = op(**(front | {name: front[name].reshape(size, -1), arg: 1}))
        outs = [result] if isinstance(result, torch.Tensor) else list(result)
        shaped = [o.reshape(size, *s) for o, s in zip(outs, p.out_shapes, strict=True)]
        return shaped[0] if isinstance(result, torch.Tensor) else type(result)(shaped)
    if p.kind == "fold":
        axes = dict(p.axes)

        def folded(n, e, t):
            a = axes.get((n, e))
            if a is None:
                return t
            if (n, e) in bdim:
                t = t.movedim(0, a)
            else:
                t = t.unsqueeze(a).expand(*t.shape[:a], size, *t.shape[a:])
            return t.reshape(*t.shape[:a], t.shape[a] * t.shape[a + 1], *t.shape[a + 2 :])

        args = _map_tensors(rule, front, folded)
        result = op(**args)
        for name in written_inputs(rule, values):  # a batched input the op wrote, through a copy: back
            a, into = axes[(name, None)], front[name]
            if args[name].untyped_storage().data_ptr() != into.untyped_storage().data_ptr():
                into.copy_(args[name].unflatten(a, (size, into.shape[a + 1])).movedim(a, 0))
        outs = [result] if isinstance(result, torch.Tensor) else list(result)
        split = []
        for a, out in zip(p.out_axes, outs, strict=True):
            if a is None:  # empty for every element
                split.append(out.new_empty((size, *out.shape)))
            else:
                split.append(out.unflatten(a, (size, out.shape[a] // size)).movedim(a, 0))
        return split[0] if isinstance(result, torch.Tensor) else type(result)(split)
    results = []
    for b in range(size):
        results.append(op(**_map_tensors(rule, front, lambda n, e, t, b=b: t[b] if (n, e) in bdim else t)))
    if isinstance(results[0], torch.Tensor):
        return torch.stack(results)
    return type(results[0])(torch.stack(r) for r in zip(*results, strict=True))  # a tuple or a Tensor[]


def _run_affine(p: Plan, rule: dict, op, front: dict, bdim: dict, size: int):
    """The op without its weight and bias (batched as planned, or once), then one addcmul (or
    mul, add) of the output with them, aligned to its axes; the other outputs get the batch."""
    out, *names = rule["affine"]
    names = [n for n in names if n is not None]  # "out * weight": no bias
    plain = front | dict.fromkeys(names)
    if p.inner is None:
        result = op(**plain)
    else:
        result = _run(p.inner, rule, op, plain, {k: 0 for k in bdim if k[0] not in names}, size)
    outs = [result] if isinstance(result, torch.Tensor) else list(result)
    by = {}
    for name, shape in p.aligned:
        t = front[name]
        by[name] = t.reshape(size, *shape) if (name, None) in bdim else t.reshape(shape)
    weight, bias = (by.get(n) for n in rule["affine"][1:])
    at = rule["outputs"].index(out)
    o = outs[at]
    if weight is not None and bias is not None:
        outs[at] = torch.addcmul(bias, o, weight)
    elif weight is not None:
        outs[at] = torch.mul(o, weight)
    else:
        outs[at] = torch.add(o, bias)
    if p.inner is None:  # the others computed once: each element's copy
        outs = [o if i == at else o.expand(size, *o.shape).clone() for i, o in enumerate(outs)]
    return outs[0] if isinstance(result, torch.Tensor) else type(result)(outs)


def _functional_op(rule: dict):
    return rules._functional(rule)


def register(package: packages.Package) -> None:
    """A vmap rule for every functional and inplace overload of ``package`` with an index space,
    and a loop for the functional overloads without one (torch's own fallback loops too, but
    refuses a batch of size 0); out= overloads cannot be vmapped, as torch's."""
    table = package.rules
    for qualified, rule_name in table.OVERLOADS.items():
        rule = table.RULES[rule_name]
        op = package.op(qualified)
        if _writes_kwarg_tensor(op):
            continue  # out=: register_vmap refuses kwarg-only tensors
        if qualified == rule["functional"] and torch.Tag.nondeterministic_seeded in op.tags:
            torch.library.register_vmap(op, functools.partial(_vmap_random, op))
        elif qualified == rule["functional"]:
            torch.library.register_vmap(op, functools.partial(_vmap_rule, rule))
        elif qualified.split(".")[0].endswith("_"):
            torch.library.register_vmap(op, functools.partial(_vmap_inplace_rule, rule, op))
    for qualified in table.LOOPED:
        op = package.op(qualified)
        torch.library.register_vmap(op, functools.partial(_vmap_loop, op))


def _writes_kwarg_tensor(op) -> bool:
    return any(a.kwarg_only and a.type.isSubtypeOf(torch._C.TensorType.get()) for a in op._schema.arguments)


# torch's refusal of a random op under vmap's default randomness="error", word for word
RANDOMNESS_ERROR = (
    "vmap: called random operation while in randomness error mode. Please either use the 'same' or "
    "'different' randomness flags on vmap or perform the randomness operation out of vmap"
)


def _vmap_random(op, info, in_dims, *args, **kwargs):
    """A random op (tags: [nondeterministic_seeded]) under vmap, with torch's randomness modes:
    "error" refuses as torch does; "different" calls the op per element in turn, so each draws its
    own bits from the advancing generator; "same" calls it per element from one generator state,
    so every element draws the same bits, and leaves the generator where one call leaves it."""
    if info.randomness == "error":
        raise RuntimeError(RANDOMNESS_ERROR)
    if info.randomness != "same":
        return _vmap_loop(op, info, in_dims, *args, **kwargs)
    device = next(a.device for a in args if isinstance(a, torch.Tensor))
    cuda = device.type == "cuda"
    start = torch.cuda.get_rng_state(device) if cuda else torch.get_rng_state()

    def from_start(*element_args, **element_kwargs):
        if cuda:
            torch.cuda.set_rng_state(start, device)
        else:
            torch.set_rng_state(start)
        return op(*element_args, **element_kwargs)

    return _vmap_loop(from_start, info, in_dims, *args, **kwargs)


def _vmap_loop(op, info, in_dims, *args, **kwargs):
    """An op without an index space (a hand-written meta function): one call per batch element,
    stacked; a batch of none gets the element's outputs from the meta function, empty."""
    size = info.batch_size

    def element(a, d, b):
        if d is None:
            return a
        if isinstance(a, list | tuple):
            return [element(t, e, b) for t, e in zip(a, d, strict=True)]
        return a.select(d, b) if size else _element(a, d).to("meta")

    calls = range(size) if size else [None]
    results = [op(*(element(a, d, b) for a, d in zip(args, in_dims, strict=True)), **kwargs) for b in calls]
    first = results[0]
    if not size:
        device = next(a.device for a in args if isinstance(a, torch.Tensor))
        outs = [torch.empty((0, *o.shape), dtype=o.dtype, device=device) for o in _as_list(first)]
    else:
        outs = [torch.stack(r) for r in zip(*(_as_list(r) for r in results), strict=True)]
    result = outs[0] if isinstance(first, torch.Tensor) else type(first)(outs)
    return result, (0 if isinstance(first, torch.Tensor) else type(first)(0 for _ in outs))


def _as_list(result) -> list:
    return [result] if isinstance(result, torch.Tensor) else list(result)


def _vmap_rule(rule: dict, info, in_dims, *args, **kwargs):
    return _apply(rule, info, in_dims, args, kwargs)


def _vmap_inplace_rule(rule: dict, op, info, in_dims, self, *args, **kwargs):
    """The functional's batched result written into self: checked first by the inplace meta
    function on one element, so an element torch would refuse (a dtype self cannot hold, a
    broadcast self) is refused the same way."""
    namespace, _, name = op._schema.name.partition("::")
    d = in_dims[0]
    if d is None:
        batched = [a.name for a, b in zip(op._schema.arguments[1:], in_dims[1:]) if b is not None]
        raise RuntimeError(
            f"vmap: {namespace}.{name}: self is not batched but {', '.join(batched)} is; an inplace op "
            "cannot write a batch into it (call the functional op)"
        )

    def element_on_meta(t, b):
        t = t if b is None else _element(t, b)
        return torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device="meta")

    op(
        *[
            element_on_meta(a, b) if isinstance(a, torch.Tensor) else a
            for a, b in zip((self, *args), in_dims)
        ],
        **kwargs,
    )
    result, _ = _apply(rule, info, in_dims, (self, *args), kwargs)
    self.movedim(d, 0).copy_(result)
    return self, d
