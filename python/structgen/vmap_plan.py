"""How a call of a generated op takes a vmapped batch in one call (structgen.vmap runs the plan),
read off the call's index space (structgen.rules) instead of written per op.

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
  Tried first where an unbatched input is contracted (a matrix against a batch of vectors).
- ``flatten``: a dim argument that is None makes the op reduce all of one tensor as if it were
  flattened (argmax(x): positions over every axis, row-major). With a batch, the tensor is
  viewed as [B, numel] and the dim argument is 1; taken when describe() of the flattened call is
  the None call's combine over one reduced dim and the [B, numel] call prepends to it.
- ``unreduced``: an op whose int argument picks its combine (a loss's ``reduction``: mean or sum
  over every dim) runs batched with the value that reduces nothing (reduction='none', planned as
  above) and the combine's reduction takes every dim but the batch (torch's loss batching
  rules do the same). Taken when describe() of that call has the reduced call's dims as parallel
  dims, every IPF unchanged.
- ``prepend`` to a sibling: where none of the above exists and the manifest writes the call
  that batches this op (``meta.vmap_as``: mm's bmm(self, mat2), addmm's baddbmm(self, mat1,
  mat2, ...)), every tensor gets the batch axis (unbatched ones expanded, no copy; lower-rank
  ones padded where the sibling needs it) and the sibling runs, under prepend's proof:
  describe() of the sibling's call, renamed to this op's arguments, is this call's index space
  plus one parallel dim at axis 0 of every tensor. (mm with both operands batched: no parallel
  dim both read, so no fold; bmm's b is one.)
- ``offset``: a batched tensor read at positions an input holds (meta.positions: index_select's
  index over dims(self, dim)) takes the batch in those axes, batch-major, and element b's
  positions move by b times their range; the call left, the positions batched, is planned as
  above. Positions out of range stay out of range, so the op still refuses them. A batched 0-d
  holder alone is read as [1] where the op gives the same outputs so.
- ``expanded``: a batched input that broadcasts against the output (baddbmm's self) is expanded
  to the output's shape where describe() shows it read exactly where the output is written;
  the call left is planned as above.
- ``affine``: a batched weight or bias that scales and shifts an output (meta.affine:
  layer_norm's out * weight + bias): the op without them, planned as above, then one addcmul.
- ``unit``: a batched 1-D input that the op reads as a matrix with a size-1 axis (matmul's
  vector) gets that axis, the call left is planned as above, and the outputs' size-1 axis is
  squeezed.
- ``collapse``: two adjacent parallel dims read straight at adjacent axes by every tensor that
  has them are merged (linear's [2, 40, k] input as [80, k]), the call left planned as above.
- ``loop``: the op per batch element, stacked; only where none exists (an op without a rule; an
  unbatched input the op writes; embedding_bag's batched indices: docs/vmap.md).

A batched input the op writes (batch_norm's running statistics) is written through: passed as a
view, or copied back where the batched form had to copy it.

structgen.vmap registers the batching rule that runs these plans.
"""

from __future__ import annotations

import dataclasses
import math
import threading
from dataclasses import dataclass

import torch

from structgen import packages, rules


@dataclass(frozen=True)
class Plan:
    kind: str  # prepend | fold | flatten | unreduced | offset | expanded | affine | unit | collapse | loop
    dim: str | None = None  # fold: the index dim the batch joins
    axes: tuple[tuple[tuple[str, int | None], int], ...] = ()  # fold: each tensor's axis for it
    out_axes: tuple[int | None, ...] = ()  # fold: each output's axis for it (None: an empty output)
    pad: int | None = None  # prepend: batched inputs padded with size-1 axes to this rank
    shifted: tuple[tuple[str, object], ...] = ()  # prepend: dim arguments moved past the batch axis
    expand: bool = False  # prepend: unbatched tensors get the batch axis too (expanded, no copy)
    flat: tuple[str, str] | None = None  # flatten: the tensor viewed as [B, numel], its dim argument
    out_shapes: tuple[tuple[int, ...], ...] = ()  # flatten: each output's per-example shape
    unreduced: tuple[str, int, str] | None = None  # unreduced: (argument, value reducing nothing, combine)
    inner: Plan | None = None  # unreduced, offset, expanded: the plan of the call that is left
    sibling: str | None = None  # prepend: the op that runs the batch (meta.vmap_as), not the op itself
    passed: tuple[tuple[str, object], ...] = ()  # prepend to a sibling: its arguments (_passed)
    # offset: (holder, tensor, axis, count, as_1d) per batched tensor read at the positions an
    # input holds (meta.positions): the batch merges into the tensor's axis, the positions move by
    # batch element times count (the positions' range), a 0-d holder is read as [1] where as_1d;
    # ``inner`` plans the call that is left
    offsets: tuple[tuple[str, str | None, int, int, bool], ...] = ()
    expanded: tuple[str, tuple[int, ...]] | None = None  # expanded: the input, the output shape it gets
    # affine: per given weight/bias (meta.affine), its shape padded to the output's rank (size-1
    # axes in front); ``inner`` plans the call without them (None: nothing else batched)
    aligned: tuple[tuple[str, tuple[int, ...]], ...] = ()
    # unit: the batched 1-D input given a size-1 axis (at 0: [1, k], at 1: [k, 1]) and each
    # output's axis that has it (None: none), squeezed after ``inner`` ran
    unit: tuple[str, int, tuple[int | None, ...]] | None = None
    # collapse: the index dims merged (sizes), and per tensor and output its first axis of them
    collapsed: tuple[tuple[int, int], tuple[tuple[tuple[str, int | None], int], ...]] | None = None
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


# How many plans deep a call may go through plans that rewrite it (offset, expanded, unit,
# collapse, ...): each makes progress, this bounds a chain of them that would undo each other.
_MAX_NESTED = 6
_nested = threading.local()  # per thread: plans made on two threads do not share a depth


def plan(op: str, batched: set[tuple[str, int | None]], size: int, *args, **kwargs) -> Plan:
    """How ``op(*args, **kwargs)`` (one batch element) takes a batch of ``size`` over the tensors
    named in ``batched`` ((argument, Tensor[] element) pairs)."""
    depth = getattr(_nested, "depth", 0)
    if depth >= _MAX_NESTED:
        return Plan("loop", why=f"more than {_MAX_NESTED} rewrites of the call")
    _nested.depth = depth + 1
    try:
        return _plan(op, batched, size, *args, **kwargs)
    finally:
        _nested.depth = depth


def _plan(op: str, batched: set[tuple[str, int | None]], size: int, *args, **kwargs) -> Plan:
    rule, values = rules._bind(op, args, kwargs)
    if any((name, None) not in batched for name in written_inputs(rule, values)):
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
    # An unbatched operand that is contracted (matmul's matrix times a batch of vectors): a fold
    # makes one product of the batch (one GEMM), a prepend one per element (a batched GEMV).
    outputs = {n for n, *_ in single.outputs}
    contracted = any(
        single.index_space[j].kind == "reduction"
        for i in single.ipfs
        if i.tensor not in outputs and (i.tensor, i.element) not in batched
        for row in i.matrix
        for j, m in enumerate(row)
        if m
    )
    if contracted and (folded := _fold(single, batched)) is not None:
        return folded
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
    for other in (
        _fold(single, batched),
        _sibling(rule, single, values, batched, size),
        _offset(op, single, values, batched, size),
        _holder_as_1d(op, single, values, batched, size),
        _expanded(op, single, values, rule, batched, size),
        _affine(op, single, values, rule, batched, size),
        _unit(op, single, values, rule, batched, size),
        _collapse(op, single, values, rule, batched, size),
    ):
        if other is not None:
            return other
    return Plan("loop", why="no parallel dim is read straight by every batched tensor and every output")


def _fold(single: rules.Description, batched) -> Plan | None:
    """The ``fold`` plan: the batch joins the first parallel dim every batched tensor and every
    output read straight."""
    for j, d in enumerate(single.index_space):
        if d.kind == "parallel" and _foldable(single, j, batched):
            inputs = [i for i in single.ipfs if i.tensor not in {n for n, *_ in single.outputs}]
            axes = tuple(((i.tensor, i.element), _axes(i, j)[0]) for i in inputs if _axes(i, j))
            outs = {(i.tensor, i.element): i for i in single.ipfs}
            out_axes = tuple(next(iter(_axes(outs[(n, None)], j)), None) for n, *_ in single.outputs)
            return Plan("fold", dim=d.name, axes=axes, out_axes=out_axes)
    return None


def _every_dim_shifted(single: rules.Description, values: dict, ranks: dict) -> dict:
    """Each dim argument moved past a batch axis that every tensor gets."""
    return {
        arg: _shift(values[arg], ranks.get(tensor, 0), empty)
        for arg, tensor, empty in single.dim_args
        if arg in values and tensor in ranks
    }


def _sibling(rule: dict, single: rules.Description, values: dict, batched, size: int) -> Plan | None:
    """``prepend`` to the call meta.vmap_as writes (addmm's: baddbmm(self, mat1, mat2, ...); the
    first case whose optional arguments are given), every tensor batched (unbatched ones
    expanded), lower-rank ones padded with size-1 axes where the sibling needs them (addmm's self
    [m] as [B, 1, m])."""
    cases = rule.get("vmap_as")
    case = next((c for c in cases or () if all(values.get(g) is not None for g in c[0])), None)
    if case is None:
        return None
    _, target, passed = case
    target = packages.qualified(rule, target)
    if any(isinstance(s, tuple) and values[s[1]].dim() < 2 for s in passed.values()):
        return None  # mT of a tensor with fewer than two dims of its own
    tensors = _tensor_args(rule, values)
    every = {(n, e) for n, e, _ in tensors}
    ranks = {n: t.dim() for n, e, t in tensors}
    moved = _every_dim_shifted(single, values, ranks)
    if None in moved.values():
        return None
    for pad in (None, max(ranks.values(), default=0)):

        def shape_of(n, e, t, pad=pad):
            return (size,) + (1,) * (pad - t.dim() if pad is not None else 0) + tuple(t.shape)

        try:
            wide = rules.describe(target, **sibling_args(passed, _with(values, rule, shape_of) | moved))
        except (RuntimeError, ValueError, IndexError, TypeError):
            continue  # the sibling refuses the batched call
        if _prepends(single, _renamed(wide, passed, single), every, pad):
            return Plan(
                "prepend",
                pad=pad,
                shifted=tuple(moved.items()),
                expand=every != set(batched),
                sibling=target,
                passed=tuple(passed.items()),
            )
    return None


def sibling_args(passed: dict, values: dict) -> dict:
    """The sibling's arguments (meta.vmap_as): each this op's argument it names, that argument
    with its last two dims swapped (("mT", name)), or a constant."""
    return {
        param: values[s] if isinstance(s, str) else values[s[1]].mT if isinstance(s, tuple) else s
        for param, s in passed.items()
    }


def _renamed(wide: rules.Description, passed: dict, single: rules.Description) -> rules.Description:
    """describe() of the sibling's call with this op's names: its inputs by the arguments passed
    to them (a transposed one's last two axes swapped back), its outputs by position. Where this
    op declares no combine (linear: its bias would be added per partial sum), its reduced dims
    are read whole rather than split, so the sibling's (bmm's k) are too: a combine says how a
    sharded run merges partial results, not what one call computes."""
    names = {p: (s, False) for p, s in passed.items() if isinstance(s, str)}  # constants name none
    names |= {p: (s[1], True) for p, s in passed.items() if isinstance(s, tuple)}
    names |= {o[0]: (mine[0], False) for o, mine in zip(wide.outputs, single.outputs, strict=True)}

    def back(i: rules.IPF) -> rules.IPF:
        name, transposed = names.get(i.tensor, (i.tensor, False))
        order = list(range(len(i.shape)))
        if transposed:
            order[-2:] = order[:-3:-1]
        return dataclasses.replace(
            i,
            tensor=name,
            shape=tuple(i.shape[a] for a in order),
            matrix=tuple(i.matrix[a] for a in order),
            offset=tuple(i.offset[a] for a in order),
            tile=tuple(i.tile[a] for a in order),
        )

    renamed = dataclasses.replace(
        wide,
        outputs=tuple((names.get(o[0], (o[0],))[0], *o[1:]) for o in wide.outputs),
        ipfs=tuple(back(i) for i in wide.ipfs),
    )
    return _read_whole(renamed) if single.combine is None and wide.combine is not None else renamed


def _read_whole(d: rules.Description) -> rules.Description:
    """``d`` with its reduced dims not split: each axis that steps along one is read whole."""
    kept = [j for j, dim in enumerate(d.index_space) if dim.kind != "reduction"]

    def whole(i: rules.IPF) -> rules.IPF:
        reduced = [any(row[j] for j in range(len(row)) if j not in kept) for row in i.matrix]
        return dataclasses.replace(
            i,
            matrix=tuple(tuple(row[j] for j in kept) for row in i.matrix),
            offset=tuple(0 if r else o for r, o in zip(reduced, i.offset, strict=True)),
            tile=tuple(n if r else t for r, n, t in zip(reduced, i.shape, i.tile, strict=True)),
        )

    return dataclasses.replace(
        d,
        index_space=tuple(d.index_space[j] for j in kept),
        ipfs=tuple(whole(i) for i in d.ipfs),
        combine=None,
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


def _holder_as_1d(op: str, single: rules.Description, values: dict, batched, size: int) -> Plan | None:
    """A batched 0-d positions holder read as [1] where the call gives the same outputs so
    (index_select's 0-d index keeps the dim, as one of shape [1] does): the call left, with the
    holder [B, 1], is planned as any other (a fold into the index)."""
    outputs = {name for name, *_ in single.outputs}
    for holder, _, _ in single.positions:
        if holder in outputs or (holder, None) not in batched or values[holder].dim() != 0:
            continue
        element = values | {holder: _meta(values[holder], (1,))}
        if _same_outputs(op, single, element):
            inner = plan(op, set(batched), size, **element)
            if inner.kind != "loop":
                return Plan("offset", offsets=((holder, None, 0, 0, True),), inner=inner)
    return None


def _expanded(
    op: str, single: rules.Description, values: dict, rule: dict, batched, size: int
) -> Plan | None:
    """A batched input that broadcasts against the output (baddbmm's self [3, 1] against [b, n, m])
    expanded to the output's shape (a view), where the op takes it so and describe() shows it read
    exactly where the output is written, every other IPF unchanged: the same values, and the call
    left is planned as any other (baddbmm: a fold along b)."""
    name_out, shape_out = single.outputs[0][:2]
    if not all(isinstance(d, int) for d in shape_out):
        return None
    written = next(i for i in single.ipfs if i.tensor == name_out)
    before = {(i.tensor, i.element): i for i in single.ipfs}
    for name, element, t in _tensor_args(rule, values):
        if element is not None or (name, None) not in batched or tuple(t.shape) == tuple(shape_out):
            continue
        try:
            if torch.broadcast_shapes(t.shape, shape_out) != tuple(shape_out):
                continue
            expanded = values | {name: _meta(t, shape_out)}
            wide = rules.describe(op, **expanded)
        except (RuntimeError, ValueError, IndexError, TypeError):
            continue  # the op takes no input of the output's shape there
        read = next(i for i in wide.ipfs if i.tensor == name)
        same = [(d.size, d.kind) for d in wide.index_space] == [(d.size, d.kind) for d in single.index_space]
        where = (read.matrix, read.offset, read.tile)
        if not same or where != (written.matrix, written.offset, written.tile):
            continue  # not read where the output is written
        if any(before.get((i.tensor, i.element)) != i for i in wide.ipfs if i.tensor != name):
            continue
        inner = plan(op, set(batched), size, **expanded)
        if inner.kind != "loop":
            return Plan("expanded", expanded=(name, tuple(shape_out)), inner=inner)
    return None


def _affine(op: str, single: rules.Description, values: dict, rule: dict, batched, size: int) -> Plan | None:
    """The ``affine`` plan, where a batched weight or bias scales and shifts an output (meta.affine:
    layer_norm's out * weight + bias, broadcasting as the formula reads): the op runs without
    them (planned as above, or once where nothing else is batched), then one addcmul (mul, add)
    with each padded to the output's rank after the batch axis."""
    if rule.get("affine") is None:
        return None
    out, *names = rule["affine"]
    names = [n for n in names if n is not None]  # "out * weight": no bias
    given = [n for n in names if values.get(n) is not None]
    if not any((n, None) in batched for n in given):
        return None
    shape = next(s for n, s, *_ in single.outputs if n == out)
    aligned = []
    for name in given:
        t = values[name]
        if t.dim() > len(shape) or torch.broadcast_shapes(t.shape, shape) != tuple(shape):
            return None
        aligned.append((name, (1,) * (len(shape) - t.dim()) + tuple(t.shape)))
    left = set(batched) - {(n, None) for n in names}
    inner = None
    if left:
        inner = plan(op, left, size, **(values | dict.fromkeys(names)))
        if inner.kind == "loop":
            return None
    return Plan("affine", aligned=tuple(aligned), inner=inner)


def _unit(op: str, single: rules.Description, values: dict, rule: dict, batched, size: int) -> Plan | None:
    """The ``unit`` plan, where a batched 1-D input is a vector the op reads as a matrix with a
    size-1 axis (matmul's [k] as [k, 1], or [1, k] on the left): describe() of that call must be
    this one's plus a size-1 parallel dim that only the new axis and one axis of each output
    step along; the call left is planned as above and those output axes are squeezed."""
    for name, element, t in _tensor_args(rule, values):
        if element is not None or (name, None) not in batched or t.dim() != 1:
            continue
        for at in (1, 0):
            wider = values | {name: _meta(t, (*t.shape, 1) if at else (1, *t.shape))}
            try:
                squeezed = _unit_axes(single, rules.describe(op, **wider), name, at)
            except (RuntimeError, ValueError, IndexError, TypeError):
                continue  # the op refuses the matrix
            if squeezed is not None:
                inner = plan(op, set(batched), size, **wider)
                if inner.kind != "loop":
                    return Plan("unit", unit=(name, at, squeezed), inner=inner)
    return None


def _unit_axes(
    single: rules.Description, d: rules.Description, name: str, at: int
) -> tuple[int | None, ...] | None:
    """Per output of ``d`` the axis of the size-1 dim that axis ``at`` of ``name`` adds, where
    ``d`` without that dim and those axes is ``single``; None where it is not."""
    if len(d.index_space) != len(single.index_space) + 1 or d.combine != single.combine:
        return None
    read = next(i for i in d.ipfs if i.tensor == name)
    # The new size-1 axis steps along the new size-1 dim, or along none (read as broadcast):
    # then each size-1 dim of d is the candidate.
    for j in [j for j, m in enumerate(read.matrix[at]) if m] or range(len(d.index_space)):
        if d.index_space[j].size == 1 and d.index_space[j].kind == "parallel":
            found = _unit_axes_along(single, d, name, at, j)
            if found is not None:
                return found
    return None


def _unit_axes_along(
    single: rules.Description, d: rules.Description, name: str, at: int, j: int
) -> tuple[int | None, ...] | None:
    if [(x.size, x.kind) for k, x in enumerate(d.index_space) if k != j] != [
        (x.size, x.kind) for x in single.index_space
    ]:
        return None
    before = {(i.tensor, i.element): i for i in single.ipfs}
    outputs = [n for n, *_ in d.outputs]
    squeezed = {}
    for i in d.ipfs:
        axes = [at] if i.tensor == name else _axes(i, j)
        if len(axes) > 1 or (axes and i.tensor != name and i.tensor not in outputs):
            return None
        kept = [a for a in range(len(i.shape)) if a not in axes]
        old = before.get((i.tensor, i.element))
        if old is None or tuple(i.shape[a] for a in kept) != old.shape:
            return None
        columns = [k for k in range(len(d.index_space)) if k != j]
        if _rows(i, kept, columns) != _rows(old, range(len(old.shape)), range(len(single.index_space))):
            return None
        if i.tensor in outputs:
            squeezed[i.tensor] = axes[0] if axes else None
    return tuple(squeezed[n] for n in outputs)


def _collapse(
    op: str, single: rules.Description, values: dict, rule: dict, batched, size: int
) -> Plan | None:
    """The ``collapse`` plan, where two adjacent parallel dims are read straight at adjacent axes by
    every tensor that has them (linear's [2, 40, k] input and [2, 40, n] output): the call with
    those axes merged ([80, k]) is planned as above, where describe() shows it is this one with
    the two dims merged into one, and the outputs are unflattened."""
    dims, outputs = single.index_space, {n for n, *_ in single.outputs}
    for j in range(len(dims) - 1):
        if any(d.kind != "parallel" or d.size == 1 for d in dims[j : j + 2]):
            continue  # a size-1 dim may be one the unit plan added: merged, its call would be undone
        first = {}
        for i in single.ipfs:
            a, b = _axes(i, j), _axes(i, j + 1)
            if not a and not b:
                continue
            if [len(a), len(b)] != [1, 1] or b[0] != a[0] + 1 or not _straight(i, a[0], j):
                break
            if not _straight(i, b[0], j + 1) or i.shape[a[0] : b[0] + 1] != (dims[j].size, dims[j + 1].size):
                break
            first[(i.tensor, i.element)] = a[0]
        else:
            inputs = {k: a for k, a in first.items() if k[0] not in outputs}
            if {t for _, t, _ in single.dim_args} & {n for n, _ in inputs}:
                continue  # a dim argument would count the merged axes
            fewer = _with(
                values, rule, lambda n, e, t, inputs=inputs: _merge_axes(t.shape, inputs.get((n, e)))
            )
            try:
                if not _same_description(rules.describe(op, **fewer), _merged(single, j, first)):
                    continue
            except (RuntimeError, ValueError, IndexError, TypeError):
                continue
            inner = plan(op, set(batched), size, **fewer)
            if inner.kind != "loop":
                sizes = (dims[j].size, dims[j + 1].size)
                return Plan("collapse", collapsed=(sizes, tuple(first.items())), inner=inner)
    return None


def _merge_axes(shape, a: int | None) -> tuple:
    """``shape`` with axes a and a + 1 merged into one (unchanged where a is None)."""
    shape = tuple(shape)
    return shape if a is None else (*shape[:a], shape[a] * shape[a + 1], *shape[a + 2 :])


def _same_description(d: rules.Description, other: rules.Description) -> bool:
    """The same index space (sizes and kinds: dims are named by their position), IPFs, combine
    and output shapes and dtypes (strides aside)."""
    return ([(x.size, x.kind) for x in d.index_space], d.ipfs, d.combine, [o[:3] for o in d.outputs]) == (
        [(x.size, x.kind) for x in other.index_space],
        other.ipfs,
        other.combine,
        [o[:3] for o in other.outputs],
    )


def _merged(single: rules.Description, j: int, first: dict) -> rules.Description:
    """``single`` with index dims j and j + 1 merged into one, and each tensor's axes of them."""
    d = single.index_space[j]
    dim = dataclasses.replace(d, size=d.size * single.index_space[j + 1].size)

    def merge(i: rules.IPF) -> rules.IPF:
        a = first.get((i.tensor, i.element))
        keep = [x for x in range(len(i.shape)) if a is None or x != a + 1]
        return dataclasses.replace(
            i,
            shape=_merge_axes(i.shape, a),
            matrix=tuple(tuple(m for k, m in enumerate(i.matrix[x]) if k != j + 1) for x in keep),
            offset=tuple(i.offset[x] for x in keep),
            tile=tuple(i.tile[x] for x in keep),
        )

    return dataclasses.replace(
        single,
        index_space=(*single.index_space[:j], dim, *single.index_space[j + 2 :]),
        ipfs=tuple(merge(i) for i in single.ipfs),
        outputs=tuple((n, _merge_axes(s, first.get((n, None))), *rest) for n, s, *rest in single.outputs),
    )


def _same_outputs(op: str, single: rules.Description, values: dict) -> bool:
    """Whether the call with ``values`` gives the outputs ``single`` has, shapes and dtypes."""
    try:
        other = rules.describe(op, **values)
    except (RuntimeError, ValueError, IndexError, TypeError):
        return False
    return [o[:3] for o in other.outputs] == [o[:3] for o in single.outputs]


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


# The reduction over every dim but the batch that does what a combine does to split parts:
# torch's own, so that the runtime serves any package, whichever ops it has.
REDUCTIONS = {
    "add": lambda t, dims: torch.sum(t, dims),
    "mean": lambda t, dims: torch.mean(t, dims),
    "mul": lambda t, dims: torch.prod(t.flatten(1), 1),  # dims: every one but the batch's
    "max": lambda t, dims: torch.amax(t, dims),
    "min": lambda t, dims: torch.amin(t, dims),
    "and": lambda t, dims: torch.all(t.flatten(1), 1),
    "or": lambda t, dims: torch.any(t.flatten(1), 1),
    "logaddexp": lambda t, dims: torch.logsumexp(t, dims),
}


def _unreduce(
    op: str, single: rules.Description, values: dict, rule: dict, batched, size: int
) -> Plan | None:
    """The ``unreduced`` plan, where an int argument's value picked a combine over every dim."""
    by = rule["combine"] if isinstance(rule["combine"], dict) else None
    if by is None or single.combine not in REDUCTIONS:
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


def written_inputs(rule: dict, values: dict) -> list[str]:
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
        if _rows(ipf, kept, rest) != _rows(old, range(len(old.shape)), range(len(single.index_space))):
            return False
    return True


def _rows(ipf: rules.IPF, axes, columns) -> list:
    """The IPF's rows (matrix entries in ``columns``, offset, tile) at ``axes``, a size-1 axis's as
    a broadcast one's: it reads its one element whether or not a describe() steps it along a
    size-1 dim (linear's features of a [1, k] weight do not, bmm's m does)."""
    return [
        ((0,) * len(columns), 0, 1)
        if ipf.shape[a] == 1
        else (tuple(ipf.matrix[a][j] for j in columns), ipf.offset[a], ipf.tile[a])
        for a in axes
    ]


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
