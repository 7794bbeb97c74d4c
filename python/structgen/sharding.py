"""Run an op tile by tile over its index space, cutting inputs with their IPFs.

This is the proof that the index projection functions are right: every tile's inputs are
exactly the regions the IPFs name, and the assembled output equals the unsharded result.

- Parallel dims: tiles are independent.
- Windowed dims (pooling's output rows): a tile reads its windows, halo included; the input
  region starts on the window grid (a multiple of the stride, at least the padding before the
  tile's first window), so the op, called with its own padding, computes the tile's windows as
  the whole call does, and the outputs before the tile's first are dropped.
- Reduced dims (matmul's k, sum's reduced dims) may be split only when the op declares a
  ``combine`` in its rule; partial results are then merged with it (see ``COMBINES``).
- A scanned dim (cumsum's) too: each tile merges in what the earlier tiles carried to its edge.
- A whole dim (softmax's) is never split: every output element needs all of it.
- Diagonal dims (tril's rows and columns) split freely: a tile is the op on its part, the
  argument naming the diagonal shifted by the tile's first row minus its first column.

An output that holds positions in an input (max_pool's indices, argmax; the rule's
``positions``) is moved from the tile's region to the whole tensor's.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import torch

from structgen import rules

SPLITTABLE = ("parallel", "windowed", "diagonal")  # split without a combine


def _bounds(size: int, parts: int) -> list[tuple[int, int]]:
    parts = max(1, min(parts, max(size, 1)))
    edges = [size * i // parts for i in range(parts + 1)]
    return [(edges[i], edges[i + 1]) for i in range(parts)]


def tiles(desc: rules.Description, splits: Mapping[str, int]) -> list[tuple[list[int], list[int]]]:
    """The boxes [lo, hi) that split each named index dim into ``splits[name]`` near-equal parts."""
    names = [d.name for d in desc.index_space]
    unknown = set(splits) - set(names)
    if unknown:
        raise ValueError(f"{desc.op}: no index dim {sorted(unknown)}; the index space is {names}")
    for d in desc.index_space:
        if splits.get(d.name, 1) <= 1 or d.kind in SPLITTABLE:
            continue
        if d.kind == "whole":
            raise ValueError(
                f"{desc.op}: index dim '{d.name}' is whole (each output element needs all of it), "
                "so it cannot be split; split another dim"
            )
        if desc.combine is None:
            what = "reduced" if d.kind == "reduction" else d.kind
            raise ValueError(
                f"{desc.op}: {what} dim '{d.name}' can only be split with a combine step, and the op "
                "declares none (meta.combine)"
            )
    per_dim = [_bounds(d.size, splits.get(d.name, 1)) for d in desc.index_space]
    return [([b[0] for b in box], [b[1] for b in box]) for box in itertools.product(*per_dim)]


# ---------------------------------------------------------------------------------------------
# Combines: how the partial results of tiles of a split reduced dim merge


def _lowest(dtype: torch.dtype):
    if dtype == torch.bool:
        return False
    return -math.inf if dtype.is_floating_point else torch.iinfo(dtype).min


def _highest(dtype: torch.dtype):
    if dtype == torch.bool:
        return True
    return math.inf if dtype.is_floating_point else torch.iinfo(dtype).max


def _truth(op: Callable) -> Callable:
    """all/any: a bool or uint8 result (uint8 for uint8 input, as torch) of 0s and 1s."""
    return lambda acc, part, share: op(acc != 0, part != 0).to(acc.dtype)


@dataclass(frozen=True)
class Combine:
    """``merge(acc, partial, share)``: the output so far with one tile's partial result, where
    ``share`` is the tile's fraction of the reduced elements; ``identity(dtype)``: what an output
    starts from. ``positions``: the merge picks one input element per output (argmax), so it
    compares the input's values at the positions rather than the partial results."""

    merge: Callable
    identity: Callable[[torch.dtype], object]
    positions: str | None = None  # "max" | "min"


COMBINES = {
    "add": Combine(lambda acc, part, share: acc + part, lambda dtype: 0),
    "mul": Combine(lambda acc, part, share: acc * part, lambda dtype: 1),
    "max": Combine(lambda acc, part, share: torch.maximum(acc, part), _lowest),  # NaN propagates (amax)
    "min": Combine(lambda acc, part, share: torch.minimum(acc, part), _highest),
    "and": Combine(_truth(torch.logical_and), lambda dtype: True),
    "or": Combine(_truth(torch.logical_or), lambda dtype: False),
    "logaddexp": Combine(lambda acc, part, share: torch.logaddexp(acc, part), lambda dtype: -math.inf),
    # a mean is the sum of the tiles' means, each weighted by its share of the elements
    "mean": Combine(lambda acc, part, share: acc + part * share, lambda dtype: 0),
    "argmax": Combine(None, lambda dtype: 0, positions="max"),
    "argmin": Combine(None, lambda dtype: 0, positions="min"),
}


# ---------------------------------------------------------------------------------------------
# Tiles


@dataclass(frozen=True)
class _Cut:
    """The region of a tensor a tile reads, and per windowed index dim j the first output the
    op computes from it (``first[j]``: its windows start on the grid at the region's start)."""

    region: tuple[slice, ...]
    first: dict[int, int]


def _cut(ipf: rules.IPF, lo: list[int], hi: list[int], windowed: list[int]) -> _Cut | None:
    region = ipf.region(lo, hi)
    if region is None:
        return None
    first = {}
    for j in windowed:
        for a, row in enumerate(ipf.matrix):
            if row[j]:
                stride, padding = row[j], -ipf.offset[a]
                start = max(0, stride * (lo[j] - -(-padding // stride)))
                region = region[:a] + (slice(start, region[a].stop),) + region[a + 1 :]
                first[j] = start // stride
    return _Cut(region, first)


def _positions_to_whole(
    local: torch.Tensor, region: tuple[slice, ...], shape, axes: list[int]
) -> torch.Tensor:
    """Flat positions over ``axes`` of a tile's region -> the same elements' positions over those
    axes of the whole tensor (row-major, as max_pool's indices and argmax count them)."""
    extents = [region[a].stop - region[a].start for a in axes]
    whole = torch.zeros_like(local)
    rest = local.clone()
    for a, extent in reversed(list(zip(axes, extents, strict=True))):
        coordinate = rest % extent + region[a].start
        rest = rest // extent
        whole += coordinate * math.prod(shape[b] for b in axes if b > a)
    return whole


def _values_at(tensor: torch.Tensor, axes: list[int], local: torch.Tensor) -> torch.Tensor:
    """The values of ``tensor`` (a tile's input) at flat positions over ``axes``, one per element
    of ``local`` (the op's output over the other axes, in order; keepdim's 1s change nothing)."""
    kept = [a for a in range(tensor.dim()) if a not in axes]
    shape = (math.prod(tensor.shape[a] for a in kept), math.prod(tensor.shape[a] for a in axes))
    rows = tensor.permute(*kept, *axes).reshape(shape)
    return rows.gather(1, local.reshape(-1, 1).to(torch.int64)).reshape(local.shape)


def _better(kind: str, new: torch.Tensor, old: torch.Tensor, new_at, old_at) -> torch.Tensor:
    """argmax/argmin: the new candidate wins with a larger (smaller) value, a NaN over a number
    (torch counts NaN as the extreme), or the same value at an earlier position."""
    beats = new > old if kind == "max" else new < old
    new_nan, old_nan = torch.isnan(new), torch.isnan(old)
    same = (new == old) | (new_nan & old_nan)
    return (beats & ~old_nan) | (new_nan & ~old_nan) | (same & (new_at < old_at))


def run_sharded(op: str, *args, splits: Mapping[str, int], **kwargs):
    """``op(*args, **kwargs)`` computed tile by tile; returns the assembled output (a tuple for an
    op with several: each written through its own IPF)."""
    desc = rules.describe(op, *args, **kwargs)
    rule, values = rules._bind(op, args, kwargs)
    fn = rules._functional(rule)
    if rule.get("custom") or not desc.ipfs:  # no output IPFs: one tile, the whole call
        tiles(desc, splits)  # refuses any split by name
        return fn(**values)
    first = next(
        t for v in values.values() for t in (v if isinstance(v, list) else [v]) if isinstance(t, torch.Tensor)
    )
    combine = COMBINES.get(desc.combine, COMBINES["add"])
    outs = [
        torch.full(s, combine.identity(getattr(torch, dt)), dtype=getattr(torch, dt), device=first.device)
        for _, s, dt, _ in desc.outputs
    ]
    best = [None] * len(outs)  # argmax/argmin: the input's value at each output's position so far
    ipfs = {(i.tensor, i.element): i for i in desc.ipfs}
    out_ipfs = [ipfs[(name, None)] for name, *_ in desc.outputs]
    positions = {out: (tensor, list(axes)) for out, tensor, axes in desc.positions}
    space = desc.index_space
    # A scanned dim is an output axis (index dims 0..rank-1 are the first output's axes, in order).
    scanned = [j for j, d in enumerate(space) if d.kind == "scanned" and splits.get(d.name, 1) > 1]
    windowed = [j for j, d in enumerate(space) if d.kind == "windowed" and splits.get(d.name, 1) > 1]
    reduced = [j for j, d in enumerate(space) if d.kind == "reduction"]
    diagonal = [j for j, d in enumerate(space) if d.kind == "diagonal"]  # rows, columns
    if desc.offset is not None and len(diagonal) != 2:
        raise ValueError(
            f"{desc.op}: meta.index.diagonal names {len(diagonal)} index dims; it takes two (rows, columns)"
        )
    merge = desc.combine is not None and bool(reduced)
    for lo, hi in tiles(desc, splits):
        if out_ipfs[0].region(lo, hi) is None:
            continue
        tile_args, cuts, empty = {}, {}, False
        for name, kind in rule["args"]:
            v = values[name]
            if kind == "tensor" or (kind == "tensor?" and v is not None):
                cut = _cut(ipfs[(name, None)], lo, hi, windowed)
                empty = empty or cut is None
                cuts[name] = cut
                tile_args[name] = v[cut.region] if cut is not None else v
            elif kind == "tensors":
                parts = [(t, ipfs[(name, i)].region(lo, hi)) for i, t in enumerate(v)]
                kept = [t[r] for t, r in parts if r is not None]
                empty = empty or not kept
                tile_args[name] = kept
            else:
                tile_args[name] = v
        if desc.offset is not None:  # element (i, j) of the tile is (lo_row + i, lo_col + j)
            row, col = diagonal
            tile_args[desc.offset] = values[desc.offset] + lo[row] - lo[col]
        if empty:
            continue
        share = math.prod((hi[j] - lo[j]) / space[j].size for j in reduced if space[j].size)
        starts = {j: f for c in cuts.values() if c is not None for j, f in c.first.items()}
        for k, (out, ipf, partial) in enumerate(zip(outs, out_ipfs, _as_tuple(fn(**tile_args)), strict=True)):
            region = ipf.region(lo, hi)
            if region is None:
                continue
            for j, f in starts.items():  # windows the op computed before the tile's first
                a = next(a for a, row in enumerate(ipf.matrix) if row[j])
                partial = partial.narrow(a, lo[j] - f, hi[j] - lo[j])
            if out[region].shape != partial.shape:  # an axis no index dim stands for, cut by the tile
                raise NotImplementedError(
                    f"{desc.op}: output '{desc.outputs[k][0]}' has axes no index dim stands for; a tile "
                    f"gives {list(partial.shape)} for its region {list(out[region].shape)}"
                )
            name = desc.outputs[k][0]
            if name in positions:
                tensor, axes = positions[name]
                local = partial
                partial = _positions_to_whole(local, cuts[tensor].region, values[tensor].shape, axes)
                if combine.positions and merge:
                    value = _values_at(tile_args[tensor], axes, local)
                    if best[k] is None:
                        best[k] = (
                            torch.empty(out.shape, dtype=value.dtype, device=value.device),
                            torch.zeros(out.shape, dtype=torch.bool, device=value.device),
                        )
                    so_far, taken = best[k]
                    wins = ~taken[region] | _better(
                        combine.positions, value, so_far[region], partial, out[region]
                    )
                    so_far[region] = torch.where(wins, value, so_far[region])
                    out[region] = torch.where(wins, partial, out[region])
                    taken[region] = True
                    continue
            out[region] = combine.merge(out[region], partial, share) if merge else partial
            for j in scanned if k == 0 else ():
                if lo[j] > 0:  # the running total at the tile's edge, from the tiles before it
                    edge = list(region)
                    edge[j] = slice(lo[j] - 1, lo[j])
                    out[region] = combine.merge(out[region], out[tuple(edge)], 1.0)
    if rule["list_outputs"]:
        return outs  # a Tensor[], as the op returns it
    return outs[0] if len(outs) == 1 else tuple(outs)


def _as_tuple(result) -> tuple:
    return tuple(result) if isinstance(result, tuple | list) else (result,)
