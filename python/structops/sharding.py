"""Run an op tile by tile over its index space, cutting inputs with their IPFs.

This is the proof that the index projection functions are right: every tile's inputs are
exactly the regions the IPFs name, and the assembled output equals the unsharded result.
Reduced index dims (matmul's k, sum's reduced dims) may be split only when the op declares a
``combine`` in its rule; partial results are then merged with it (``add``: summed; ``max``,
``min``: amax's and amin's, NaN propagating). A scanned dim (cumsum's) too: each tile merges in
what the earlier tiles carried to its edge. A whole dim
(softmax's) is never split: every output element needs all of it.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

import torch

from structops import rules


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
        if splits.get(d.name, 1) <= 1 or d.kind == "parallel":
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


def run_sharded(op: str, *args, splits: Mapping[str, int], **kwargs):
    """``op(*args, **kwargs)`` computed tile by tile; returns the assembled output (a tuple for an
    op with several: each written through its own IPF)."""
    desc = rules.describe(op, *args, **kwargs)
    rule, values = rules._bind(op, args, kwargs)
    fn = getattr(
        getattr(torch.ops.structops, rule["functional"].split(".")[0]), rule["functional"].split(".")[1]
    )
    if rule.get("list_outputs"):  # no index space yet: one tile, the whole call
        tiles(desc, splits)  # refuses any split by name
        return fn(**values)
    first = next(
        t for v in values.values() for t in (v if isinstance(v, list) else [v]) if isinstance(t, torch.Tensor)
    )
    merge_fn, identity = _COMBINES.get(desc.combine, _COMBINES["add"])
    outs = [
        torch.full(s, identity(getattr(torch, dt)), dtype=getattr(torch, dt), device=first.device)
        for _, s, dt, _ in desc.outputs
    ]
    ipfs = {(i.tensor, i.element): i for i in desc.ipfs}
    out_ipfs = [ipfs[(name, None)] for name, *_ in desc.outputs]
    # A scanned dim is an output axis (index dims 0..rank-1 are the first output's axes, in order).
    scanned = [j for j, d in enumerate(desc.index_space) if d.kind == "scanned" and splits.get(d.name, 1) > 1]
    merge = desc.combine is not None and any(d.kind == "reduction" for d in desc.index_space)
    for lo, hi in tiles(desc, splits):
        if out_ipfs[0].region(lo, hi) is None:
            continue
        tile_args, empty = {}, False
        for name, kind in rule["args"]:
            v = values[name]
            if kind == "tensor" or (kind == "tensor?" and v is not None):
                r = ipfs[(name, None)].region(lo, hi)
                empty = empty or r is None
                tile_args[name] = v[r] if r is not None else v
            elif kind == "tensors":
                parts = [(t, ipfs[(name, i)].region(lo, hi)) for i, t in enumerate(v)]
                kept = [t[r] for t, r in parts if r is not None]
                empty = empty or not kept
                tile_args[name] = kept
            else:
                tile_args[name] = v
        if empty:
            continue
        partials = fn(**tile_args)
        for k, (out, ipf, partial) in enumerate(zip(outs, out_ipfs, _as_tuple(partials), strict=True)):
            region = ipf.region(lo, hi)
            if region is None:
                continue
            if out[region].shape != partial.shape:  # an axis no index dim stands for, cut by the tile
                raise NotImplementedError(
                    f"{desc.op}: output '{desc.outputs[k][0]}' has axes no index dim stands for; a tile "
                    f"gives {list(partial.shape)} for its region {list(out[region].shape)}"
                )
            out[region] = merge_fn(out[region], partial) if merge else partial
            for j in scanned if k == 0 else ():
                if lo[j] > 0:  # the running total at the tile's edge, from the tiles before it
                    edge = list(region)
                    edge[j] = slice(lo[j] - 1, lo[j])
                    out[region] = merge_fn(out[region], out[tuple(edge)])
    return outs[0] if len(outs) == 1 else tuple(outs)


def _lowest(dtype: torch.dtype):
    if dtype == torch.bool:
        return False
    return -float("inf") if dtype.is_floating_point else torch.iinfo(dtype).min


def _highest(dtype: torch.dtype):
    if dtype == torch.bool:
        return True
    return float("inf") if dtype.is_floating_point else torch.iinfo(dtype).max


# combine -> (merge two partial results, the identity an output starts from)
_COMBINES = {
    "add": (torch.add, lambda dtype: 0),
    "max": (torch.maximum, _lowest),  # NaN propagates, as amax
    "min": (torch.minimum, _highest),
}


def _as_tuple(result) -> tuple:
    return tuple(result) if isinstance(result, tuple | list) else (result,)
