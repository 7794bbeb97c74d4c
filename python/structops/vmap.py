"""torch.func.vmap for structops' ops: one batching rule per functional overload, read off the
call's index space (structops.rules) instead of written per op.

A vmapped dim is one more parallel dim of the index space. ``plan()`` finds how the op can take
it in one call, and proves it with describe():

- ``prepend``: each batched tensor keeps the batch as a new leading axis (broadcast inputs of
  lower rank padded with size-1 axes). Taken when describe() of that call is the per-example
  call's index space plus one parallel dim, read straight at axis 0 of every batched tensor and
  written at axis 0 of every output, with every other IPF unchanged: then output[b] reads only
  inputs[b], as a loop would. (sum(x, [0]) is refused: its dim 0 would become the batch.) An
  op that takes no broadcasting (gather's index has self's rank) gets the batch axis on its
  unbatched tensors too, expanded without a copy, under the same proof.
- ``fold``: the batch joins a parallel dim ``j`` of the per-example call that every batched
  tensor and every output reads straight: tensors are laid batch-major along j's axis (an
  unbatched input that has j is repeated), the op runs once on B times the dim, and the outputs
  are split back. Tiles of a parallel dim are independent (the sharding check proves it), so
  this is the loop's result. (mm with only x batched: the batch joins n.)
- ``flatten``: a dim argument that is None makes the op reduce all of one tensor as if it were
  flattened (argmax(x): positions over every axis, row-major). With a batch, the tensor is
  viewed as [B, numel] and the dim argument is 1; taken when describe() of the flattened call is
  the None call's combine over one reduced dim and the [B, numel] call prepends to it.
- ``unreduced``: an op whose int argument picks its combine (a loss's ``reduction``: mean or sum
  over every dim) runs batched with the value that reduces nothing (reduction='none', planned as
  above) and the combine's reduction takes every dim but the batch (torch's loss batching
  rules do the same). Taken when describe() of that call has the reduced call's dims as parallel
  dims, every IPF unchanged.
- ``prepend`` to a sibling: where none of the above exists and the manifest names the op that
  batches this one (``meta.vmap_as``: mm's is bmm), every tensor gets the batch axis (unbatched
  ones expanded, no copy) and the sibling runs, under prepend's proof: describe() of the
  sibling's call is this call's index space plus one parallel dim at axis 0 of every tensor.
  (mm with both operands batched: no parallel dim both read, so no fold; bmm's b is one.)
- ``offset``: a batched tensor read at positions an input holds (meta.positions: index_select's
  index over dims(self, dim)) takes the batch in those axes, batch-major, and element b's
  positions move by b times their range; the call left, the positions batched, is planned as
  above. Positions out of range stay out of range, so the op still refuses them.
- ``loop``: the op per batch element, stacked; only where none exists (an op without a rule; an
  unbatched input the op writes; addmm and linear with every tensor batched, which name none).

A batched input the op writes (batch_norm's running statistics) is written through: passed as a
view, or copied back where the batched form had to copy it.

``register()`` registers the rule with torch.library.register_vmap for every functional and
inplace overload (an inplace call writes the functional's batched result into self).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import torch

from structops import _rules, rules


@dataclass(frozen=True)
class Plan:
    kind: str  # prepend | fold | flatten | unreduced | offset | loop
    dim: str | None = None  # fold: the index dim the batch joins
    axes: tuple[tuple[tuple[str, int | None], int], ...] = ()  # fold: each tensor's axis for it
    out_axes: tuple[int | None, ...] = ()  # fold: each output's axis for it (None: an empty output)
    pad: int | None = None  # prepend: batched inputs padded with size-1 axes to this rank
    shifted: tuple[tuple[str, object], ...] = ()  # prepend: dim arguments moved past the batch axis
    expand: bool = False  # prepend: unbatched tensors get the batch axis too (expanded, no copy)
    flat: tuple[str, str] | None = None  # flatten: the tensor viewed as [B, numel], its dim argument
    out_shapes: tuple[tuple[int, ...], ...] = ()  # flatten: each output's per-example shape
    unreduced: tuple[str, int, str] | None = None  # unreduced: (argument, value reducing nothing, combine)
    inner: Plan | None = None  # unreduced, offset: the plan of the call that is left
    sibling: str | None = None  # prepend: the op that runs the batch (meta.vmap_as), not the op itself
    # offset: (holder, tensor, axis, count, as_1d) per batched tensor read at the positions an
    # input holds (meta.positions): the batch merges into the tensor's axis, the positions move by
    # batch element times count (the positions' range), a 0-d holder is read as [1] where as_1d;
    # ``inner`` plans the call that is left
    offsets: tuple[tuple[str, str, int, int, bool], ...] = ()
    why: str = ""  # loop: why neither batched form applies


def _shift(value, rank: int, empty: str):
    """A dim argument of a tensor of ``rank`` dims, for the same tensor with a batch axis in
    front; None where it cannot say the same (all dims of a 0-d tensor)."""
    if value is None or (isinstance(value, list | tuple) and not value and empty == "ALL"):
        return list(range(1, rank + 1)) if rank > 0 else None
    if isinstance(value, int):
        return value + 1 if value >= 0 else value
    return [d + 1 if d >= 0 else d for d in value]


# ---------------------------------------------------------------------------------------------
# The plan: pure functions of the per-example call


def _tensor_args(rule: dict, values: dict) -> list[tuple[str, int | None, torch.Tensor]]:
    found = []
    for name, kind in rule["args"]:
        v = values[name]
        if kind in ("tensor", "tensor?") and isinstance(v, torch.Tensor):
            found.append((name, None, v))
        elif kind == "tensors":
            found.extend((name, i, t) for i, t in enumerate(v))
    return found


def _meta(t: torch.Tensor, shape) -> torch.Tensor:
    return torch.empty(shape, dtype=t.dtype, device="meta")


def _with(values: dict, rule: dict, shape_of) -> dict:
    """``values`` with each tensor replaced by a meta tensor of shape shape_of(name, element, t)."""
    out = dict(values)
    for name, kind in rule["args"]:
        v = values[name]
        if kind in ("tensor", "tensor?") and isinstance(v, torch.Tensor):
            out[name] = _meta(v, shape_of(name, None, v))
        elif kind == "tensors":
            out[name] = [_meta(t, shape_of(name, i, t)) for i, t in enumerate(v)]
    return out


def plan(op: str, batched: set[tuple[str, int | None]], size: int, *args, **kwargs) -> Plan:
    """How ``op(*args, **kwargs)`` (one batch element) takes a batch of ``size`` over the tensors
    named in ``batched`` ((argument, Tensor[] element) pairs)."""
    rule, values = rules._bind(op, args, kwargs)
    if any((name, None) not in batched for name in _written(rule, values)):
        return Plan("loop", why="it writes an unbatched input (each batch element writes it in turn)")
    single = rules.describe(op, **_with(values, rule, lambda n, e, t: t.shape))
    if not single.ipfs:
        return Plan("loop", why="an element of its Tensor[] output has an axis no input axis stands for")
    tensors = _tensor_args(rule, values)
    ranks = {n: t.dim() for n, e, t in tensors}
    shifted = {}
    for arg, tensor, empty in single.dim_args:
        if arg in values and any(n == tensor for n, _ in batched):
            shifted[arg] = _shift(values[arg], ranks.get(tensor, 0), empty)
    rank = max((t.dim() for n, e, t in tensors), default=0)
    # Unbatched tensors broadcast (nothing to do, or padded to the batched ones' rank), or, where
    # the op takes no broadcasting (gather's index must have self's rank), get the batch axis too.
    every = {(n, e) for n, e, _ in tensors}
    for pad, expand in ((None, False), (rank, False), (None, True)):
        wider = every if expand else batched
        moved = shifted
        if expand:
            moved = _every_dim_shifted(single, values, ranks)

        def shape_of(n, e, t, pad=pad, wider=wider):
            if (n, e) not in wider:
                return t.shape
            return (size,) + (1,) * (pad - t.dim() if pad is not None else 0) + tuple(t.shape)

        if None in moved.values():
            continue  # all dims of a 0-d tensor: with a batch axis, no dim list says it
        try:
            wide = rules.describe(op, **(_with(values, rule, shape_of) | moved))
        except (RuntimeError, ValueError, IndexError, TypeError):
            continue  # the op refuses the wider call (mm of a 3-D tensor)
        if _prepends(single, wide, wider, pad):
            return Plan("prepend", pad=pad, shifted=tuple(moved.items()), expand=expand and wider != batched)
    for other in (
        _flatten(op, single, values, rule, batched, size),
        _unreduce(op, single, values, rule, batched, size),
    ):
        if other is not None:
            return other
    for j, d in enumerate(single.index_space):
        if d.kind == "parallel" and _foldable(single, j, batched):
            inputs = [i for i in single.ipfs if i.tensor not in {n for n, *_ in single.outputs}]
            axes = tuple(((i.tensor, i.element), _axes(i, j)[0]) for i in inputs if _axes(i, j))
            outs = {(i.tensor, i.element): i for i in single.ipfs}
            out_axes = tuple(next(iter(_axes(outs[(n, None)], j)), None) for n, *_ in single.outputs)
            return Plan("fold", dim=d.name, axes=axes, out_axes=out_axes)
    for other in (_sibling(rule, single, values, batched, size), _offset(op, single, values, batched, size)):
        if other is not None:
            return other
    return Plan("loop", why="no parallel dim is read straight by every batched tensor and every output")


def _every_dim_shifted(single: rules.Description, values: dict, ranks: dict) -> dict:
    """Each dim argument moved past a batch axis that every tensor gets."""
    return {
        arg: _shift(values[arg], ranks.get(tensor, 0), empty)
        for arg, tensor, empty in single.dim_args
        if arg in values and tensor in ranks
    }


def _sibling(rule: dict, single: rules.Description, values: dict, batched, size: int) -> Plan | None:
    """``prepend`` to the op meta.vmap_as names, every tensor batched (unbatched ones expanded)."""
    if rule.get("vmap_as") is None:
        return None
    tensors = _tensor_args(rule, values)
    every = {(n, e) for n, e, _ in tensors}
    moved = _every_dim_shifted(single, values, {n: t.dim() for n, e, t in tensors})
    if None in moved.values():
        return None
    batch_first = _with(values, rule, lambda n, e, t: (size, *t.shape))
    try:
        wide = rules.describe(rule["vmap_as"], **(batch_first | moved))
    except (RuntimeError, ValueError, IndexError, TypeError):
        return None  # the sibling refuses the batched call
    if not _prepends(single, wide, every, None):
        return None
    return Plan(
        "prepend", shifted=tuple(moved.items()), expand=every != set(batched), sibling=rule["vmap_as"]
    )


def _offset(op: str, single: rules.Description, values: dict, batched, size: int) -> Plan | None:
    """The ``offset`` plan, where a batched tensor is read at positions an input holds
    (index_select's self at index): the batch joins the first of the positions' axes, batch-major
    (element b's positions move by b times their range), and the call left, with the positions
    batched instead, is planned as any other."""
    outputs = {name for name, *_ in single.outputs}
    held = [
        (holder, tensor, axes)
        for holder, tensor, axes in single.positions
        if holder not in outputs and (tensor, None) in batched
    ]
    if not held or {h for h, *_ in held} & {t for _, t, _ in held}:
        return None  # none, or positions into a tensor that holds positions itself (not planned)
    left, moves = set(batched), []
    element = dict(values)
    for holder, tensor, axes in held:
        shape = list(values[tensor].shape)
        if not axes or list(axes) != list(range(axes[0], axes[0] + len(axes))) or (tensor, None) not in left:
            return None  # no axes (a 0-d tensor), not one run of them, or read at two tensors' positions
        count = math.prod(shape[a] for a in axes)
        shape[axes[0]] *= size
        element[tensor] = _meta(values[tensor], shape)
        left = (left - {(tensor, None)}) | {(holder, None)}
        as_1d = values[holder].dim() == 0 and _same_outputs(
            op, single, element | {holder: _meta(values[holder], (1,))}
        )
        if as_1d:  # index_select's 0-d index keeps the dim, as one of shape [1] does
            element[holder] = _meta(values[holder], (1,))
        moves.append((holder, tensor, axes[0], count, as_1d))
    inner = plan(op, left, size, **element)
    if inner.kind == "loop":
        return None
    return Plan("offset", offsets=tuple(moves), inner=inner)


def _same_outputs(op: str, single: rules.Description, values: dict) -> bool:
    """Whether the call with ``values`` gives the outputs ``single`` has, shapes and dtypes."""
    try:
        other = rules.describe(op, **values)
    except (RuntimeError, ValueError, IndexError, TypeError):
        return False
    return [o[:3] for o in other.outputs] == [o[:3] for o in single.outputs]


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


def _flatten(op: str, single: rules.Description, values: dict, rule: dict, batched, size: int) -> Plan | None:
    """The ``flatten`` plan, where a None dim argument reduces a whole tensor (argmax(x))."""
    nones = [(arg, t) for arg, t, _ in single.dim_args if arg in values and values[arg] is None]
    tensors = _tensor_args(rule, values)
    if len(nones) != 1 or {(n, e) for n, e, _ in tensors} != {(nones[0][1], None)}:
        return None  # one tensor, reduced whole through one dim argument
    arg, name = nones[0]
    if any(d.kind != "reduction" and d.size != 1 for d in single.index_space):
        return None
    rank = values[name].dim()
    if any(t != name or axes != tuple(range(rank)) for _, t, axes in single.positions):
        return None  # positions over every axis, row-major: the flattened tensor's positions
    numel = values[name].numel()
    try:
        one = rules.describe(op, **(_with(values, rule, lambda n, e, t: (numel,)) | {arg: 0}))
        wide = rules.describe(op, **(_with(values, rule, lambda n, e, t: (size, numel)) | {arg: 1}))
    except (RuntimeError, ValueError, IndexError, TypeError):
        return None
    if one.combine != single.combine or any(d.kind != "reduction" and d.size != 1 for d in one.index_space):
        return None
    shapes = tuple(tuple(s) for _, s, *_ in single.outputs)
    if any(math.prod(s) != 1 for s in shapes) or not _prepends(one, wide, batched, None):
        return None
    return Plan("flatten", flat=(name, arg), out_shapes=shapes)


# The reduction over every dim but the batch that does what a combine does to split parts.
_REDUCTIONS = {
    "add": torch.ops.structops.sum.dim_IntList,
    "mean": torch.ops.structops.mean.dim,
    "mul": torch.ops.structops.prod.dims,
    "max": torch.ops.structops.amax.default,
    "min": torch.ops.structops.amin.default,
    "and": torch.ops.structops.all.dims,
    "or": torch.ops.structops.any.dims,
    "logaddexp": torch.ops.structops.logsumexp.default,
}


def _unreduce(
    op: str, single: rules.Description, values: dict, rule: dict, batched, size: int
) -> Plan | None:
    """The ``unreduced`` plan, where an int argument's value picked a combine over every dim."""
    by = rule["combine"] if isinstance(rule["combine"], dict) else None
    if by is None or single.combine not in _REDUCTIONS:
        return None
    if any(d.kind != "reduction" for d in single.index_space):
        return None
    arg = by["by"]
    for value in sorted(set(range(max(by["cases"]) + 2)) - set(by["cases"])):
        try:
            keeps = rules.describe(op, **(_with(values, rule, lambda n, e, t: t.shape) | {arg: value}))
        except (RuntimeError, ValueError, IndexError, TypeError):
            continue
        same_dims = [(d.size, "parallel") for d in keeps.index_space] == [
            (d.size, "parallel") for d in single.index_space
        ]
        inputs = {(i.tensor, i.element): i for i in single.ipfs}
        outputs = {n for n, *_ in keeps.outputs}
        if same_dims and all(
            inputs.get((i.tensor, i.element), i) == i for i in keeps.ipfs if i.tensor not in outputs
        ):
            inner = plan(op, set(batched), size, **(values | {arg: value}))
            if inner.kind != "loop":
                return Plan("unreduced", unreduced=(arg, value, single.combine), inner=inner)
    return None


def _written(rule: dict, values: dict) -> list[str]:
    """The given tensor arguments the op writes (batch_norm's running statistics)."""
    schema = rules._functional(rule)._schema
    return [
        a.name
        for a in schema.arguments
        if a.alias_info is not None and a.alias_info.is_write and values.get(a.name) is not None
    ]


def _straight(ipf: rules.IPF, axis: int, j: int) -> bool:
    row = ipf.matrix[axis]
    return row[j] == 1 and sum(1 for m in row if m) == 1 and ipf.offset[axis] == 0 and ipf.tile[axis] == 1


def _axes(ipf: rules.IPF, j: int) -> list[int]:
    return [a for a, row in enumerate(ipf.matrix) if row[j]]


def _prepends(single: rules.Description, wide: rules.Description, batched, pad: int | None) -> bool:
    """``wide`` is ``single`` plus a parallel batch dim at axis 0 of every batched tensor and
    output, every other IPF entry unchanged."""
    if len(wide.index_space) != len(single.index_space) + 1 or wide.combine != single.combine:
        return False
    outputs = {name for name, *_ in wide.outputs}
    b = 0  # the first output's axis 0 is index dim 0
    if wide.index_space[b].kind != "parallel":
        return False
    rest = [j for j in range(len(wide.index_space)) if j != b]
    if [(d.size, d.kind) for d in (wide.index_space[j] for j in rest)] != [
        (d.size, d.kind) for d in single.index_space
    ]:
        return False
    before = {(i.tensor, i.element): i for i in single.ipfs}
    for ipf in wide.ipfs:
        old = before.get((ipf.tensor, ipf.element))
        if old is None:
            return False
        is_batched = ipf.tensor in outputs or (ipf.tensor, ipf.element) in batched
        if not is_batched:
            if _axes(ipf, b):
                return False
            kept = list(range(len(ipf.shape)))
        else:
            if not (_axes(ipf, b) == [0] and _straight(ipf, 0, b)):
                return False
            added = 1 + (pad - len(old.shape) if pad is not None and ipf.tensor not in outputs else 0)
            kept = list(range(added, len(ipf.shape)))
        if tuple(ipf.shape[a] for a in kept) != old.shape:
            return False
        if [[ipf.matrix[a][j] for j in rest] for a in kept] != [list(r) for r in old.matrix]:
            return False
        if [ipf.offset[a] for a in kept] != list(old.offset) or [ipf.tile[a] for a in kept] != list(old.tile):
            return False
    return True


def _foldable(single: rules.Description, j: int, batched) -> bool:
    outputs = {name for name, *_ in single.outputs}
    for ipf in single.ipfs:
        axes = _axes(ipf, j)
        if ipf.select is not None and ipf.select[0] == j:
            return False
        must = ipf.tensor in outputs or (ipf.tensor, ipf.element) in batched
        if ipf.tensor in outputs and not axes and math.prod(ipf.shape) == 0:
            continue  # an empty output (batch_norm's saved statistics in eval) is empty per element
        if must and len(axes) != 1:
            return False
        if len(axes) > 1 or (axes and not _straight(ipf, axes[0], j)):
            return False
        if axes and ipf.shape[axes[0]] != single.index_space[j].size:
            return False  # a longer axis (gather's self) would not repeat in step with the dim
    return True


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
    values = rules._bind(rule["functional"], args, kwargs)[1]  # defaults filled in
    size = info.batch_size

    def example(name, element, t):
        d = bdim.get((name, element))
        return t if d is None else t.select(d, 0)

    per_example = _map_tensors(rule, values, example)
    key = tuple(_key(per_example[name]) for name, _ in rule["args"])
    p = _cached_plan(rule["functional"], frozenset(bdim), size, key, per_example)
    result = _run(p, rule, op, values, bdim, size)
    return result, (0 if isinstance(result, torch.Tensor) else type(result)(0 for _ in result))


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
                return t.expand(size, *t.shape) if p.expand else t
            if p.pad is None:
                return t
            return t.reshape((t.shape[0],) + (1,) * (p.pad - (t.dim() - 1)) + tuple(t.shape[1:]))

        args = _map_tensors(rule, front, padded) | dict(p.shifted)
        runs = op if p.sibling is None else _functional_op(_rules.RULES[_rules.OVERLOADS[p.sibling]])
        result = runs(**args)
        for name in _written(rule, values):  # padded through a copy: back
            if args[name].untyped_storage().data_ptr() != front[name].untyped_storage().data_ptr():
                front[name].copy_(args[name].reshape(front[name].shape))
        return result
    if p.kind == "offset":
        moved, moved_bdim = dict(front), {k: 0 for k in bdim}
        for holder, tensor, axis, count, as_1d in p.offsets:
            t = front[tensor].movedim(0, axis)
            moved[tensor] = t.reshape(*t.shape[:axis], size * t.shape[axis + 1], *t.shape[axis + 2 :])
            del moved_bdim[(tensor, None)]
            held = (
                front[holder] if (holder, None) in bdim else front[holder].expand(size, *front[holder].shape)
            )
            moved[holder] = _offset_positions(held.reshape(size, 1) if as_1d else held, size, count)
            moved_bdim[(holder, None)] = 0
        return _run(p.inner, rule, op, moved, moved_bdim, size)
    if p.kind == "unreduced":
        arg, value, combine = p.unreduced
        kept = _run(p.inner, rule, op, values | {arg: value}, bdim, size)
        every = list(range(1, kept.dim()))
        return _REDUCTIONS[combine](kept, every) if every else kept
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
        for name in _written(rule, values):  # a batched input the op wrote, through a copy: back
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


def _functional_op(rule: dict):
    return rules._functional(rule)


def register() -> None:
    """A vmap rule for every functional and inplace overload with an index space (the rest keep
    torch's own fallback, a loop over the batch; out= overloads cannot be vmapped, as torch's)."""
    for qualified, rule_name in _rules.OVERLOADS.items():
        rule = _rules.RULES[rule_name]
        packet, overload = qualified.split(".")
        op = getattr(getattr(torch.ops.structops, packet), overload)
        if any(a.kwarg_only and a.type.isSubtypeOf(torch._C.TensorType.get()) for a in op._schema.arguments):
            continue  # out=: register_vmap refuses kwarg-only tensors
        if qualified == rule["functional"]:
            torch.library.register_vmap(op, functools.partial(_vmap_rule, rule))
        elif packet.endswith("_"):
            torch.library.register_vmap(op, functools.partial(_vmap_inplace_rule, rule, op))


def _vmap_rule(rule: dict, info, in_dims, *args, **kwargs):
    return _apply(rule, info, in_dims, args, kwargs)


def _vmap_inplace_rule(rule: dict, op, info, in_dims, self, *args, **kwargs):
    """The functional's batched result written into self: checked first by the inplace meta
    function on one element, so an element torch would refuse (a dtype self cannot hold, a
    broadcast self) is refused the same way."""
    name = op._schema.name.removeprefix("structops::")
    d = in_dims[0]
    if d is None:
        batched = [a.name for a, b in zip(op._schema.arguments[1:], in_dims[1:]) if b is not None]
        raise RuntimeError(
            f"vmap: structops.{name}: self is not batched but {', '.join(batched)} is; an inplace op "
            "cannot write a batch into it (call the functional op)"
        )

    def element_on_meta(t, b):
        t = t if b is None else t.select(b, 0)
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
