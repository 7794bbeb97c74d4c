"""Generated ops on DTensor: every overload's sharding strategy, derived from its index space.

A strategy is a set of placements, on one mesh dim, under which the op run on each rank's local
tensors gives that rank's part of the result. ``strategies(describe(op, ...))`` reads them off
the call's index space and IPFs (structgen.rules), so they are as right as the IPFs, which the
conformance suite proves by running every op tile by tile (structgen.sharding):

- a parallel index dim that every tensor reads straight (its axis is the index dim, with no
  offset, stride or window): Shard on every axis that carries it, Replicate for a tensor that
  has none (a broadcast input, addmm's bias over n);
- a reduced dim of an op whose rule declares a ``combine`` with an all-reduce (sum's and
  matmul's k: sum; prod: product; amax/amin: max/min; all/any: min/max; mean: avg, for equal
  parts): the inputs sharded the same way, every output Partial of that reduction;
- always: everything Replicate.

Whole and scanned dims (softmax's, cumsum's), windows (pooling), offsets (cat's dim), selectors
(stack's dim) and data-dependent dims (gather's source) are never sharded: the Replicate strategy
covers them, and DTensor gathers what a call needs.

``register()`` hands one strategy function per overload (functional, inplace, out=) to DTensor's
sharding propagator (``ShardingPropagator.register_op_strategy``, the call
``torch.distributed.tensor.experimental.register_sharding`` makes). Why not register_sharding
itself: it keys its cache on the tensor arguments and int arguments only, so sum(x, [0]) and
then sum(x, [1]) would reuse the first call's strategy; it flattens Tensor[] only in some
versions, and does not check out= tensors (torch < 2.13 then writes into a redistributed copy).
Here the cache key holds every argument, and the strategies of an out= or inplace call are those
that leave the written tensors where they are. The strategies are expanded to every mesh dim by
``expand_to_full_mesh_op_strategy``, as register_sharding does, so 2-D meshes work.

Importing a generated package registers its ops' strategies as soon as torch.distributed.tensor is
imported (before or after the package): nothing to call.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import torch

from structgen import packages, rules
from structgen._after_import import when_imported


@dataclass(frozen=True)
class Placement:
    """How one tensor lies on one mesh dim: ``shard`` along ``axis``, ``replicate``, or
    ``partial`` (each rank holds a summand of the value)."""

    kind: str
    axis: int | None = None
    reduce: str = "sum"  # partial: how the ranks' values combine (sum, max, min)

    def __str__(self) -> str:
        return {
            "shard": f"Shard({self.axis})",
            "replicate": "Replicate()",
            "partial": f'Partial("{self.reduce}")',
        }[self.kind]


REPLICATE = Placement("replicate")
# A rule's combine -> the Partial whose all-reduce merges the ranks' results. all/any take min and
# max (not torch's product and sum, which give 2 for two true uint8 parts); mean takes avg, right
# only when every rank holds as many of the reduced elements. logaddexp and argmax/argmin have no
# all-reduce: their reduced dims are not split on DTensor (structgen.sharding splits them).
_PARTIAL = {
    "add": "sum",
    "mul": "product",
    "max": "max",
    "min": "min",
    "and": "min",
    "or": "max",
    "mean": "avg",
}
# Combines whose op refuses an empty reduction (amax of nothing is undefined): a rank's part must
# not be empty, or that rank alone raises and the others wait for it in the next collective.
_NEEDS_ELEMENTS = {"max", "min"}
_NEEDS_EQUAL_PARTS = {"mean"}


@dataclass(frozen=True)
class Strategy:
    """One way to run the call on one mesh dim: the index dim it splits (None: nothing), each
    output's placement, and each input tensor's (by name and Tensor[] element; an input not
    listed is Replicate)."""

    dim: str | None
    outputs: tuple[Placement, ...]
    inputs: tuple[tuple[tuple[str, int | None], Placement], ...]

    def input(self, name: str, element: int | None = None) -> Placement:
        return dict(self.inputs).get((name, element), REPLICATE)

    def __str__(self) -> str:
        ins = ", ".join(
            f"{n if e is None else f'{n}[{e}]'}: {p}" for (n, e), p in self.inputs if p != REPLICATE
        )
        outs = ", ".join(str(p) for p in self.outputs)
        return f"{self.dim or 'replicate'}: ({ins or 'all Replicate'}) -> ({outs})"


def strategies(desc: rules.Description, mesh: tuple[int, ...] = ()) -> list[Strategy]:
    """The single-mesh-dim strategies of the call ``desc`` describes (see the module doc), for a
    mesh of shape ``mesh`` (a reduced dim of a max/min combine is split only where every rank's
    part has elements, of a mean only where the parts are equal, however many mesh dims split
    it)."""
    outputs = [name for name, *_ in desc.outputs]
    strategies = [Strategy(None, (REPLICATE,) * len(outputs), ())]
    for j, dim in enumerate(desc.index_space):
        if dim.kind == "parallel":
            output_kind = "shard"
        elif dim.kind == "reduction" and desc.combine in _PARTIAL:
            parts = _parts(dim.size, mesh)
            if desc.combine in _NEEDS_ELEMENTS and not all(parts):
                continue
            if desc.combine in _NEEDS_EQUAL_PARTS and len(set(parts)) > 1:
                continue
            output_kind = "partial"
        else:
            continue
        placements = {}
        for ipf in desc.ipfs:
            placement = _placement(ipf, j, dim.size)
            if placement is None:
                break
            placements[(ipf.tensor, ipf.element)] = placement
        else:
            if not any(p.kind == "shard" for (name, _), p in placements.items() if name not in outputs):
                continue  # no input carries the dim (keepdim's size-1 axis): no rank holds a part
            result = []
            for name in outputs:
                p = placements.pop((name, None))
                if output_kind == "shard" and p.kind != "shard":
                    break  # an output that does not follow the dim: its tiles are not its parts
                if output_kind == "partial":
                    if p.kind != "replicate":
                        break
                    p = Placement("partial", reduce=_PARTIAL[desc.combine])
                result.append(p)
            else:
                strategies.append(Strategy(dim.name, tuple(result), tuple(placements.items())))
    return strategies


def _parts(size: int, mesh: tuple[int, ...]) -> list[int]:
    """How many of ``size`` elements each rank holds under DTensor's Shard (torch.chunk per mesh
    dim, nested when several mesh dims split the same axis), in the worst case of every mesh dim
    splitting it."""
    parts = [size]
    for n in mesh:
        parts = [min(-(-p // n), max(p - i * -(-p // n), 0)) for p in parts for i in range(n)]
    return parts


def _placement(ipf: rules.IPF, j: int, size: int) -> Placement | None:
    """Shard along the axis of ``ipf``'s tensor that reads index dim ``j`` straight, Replicate
    when no axis reads it; None when an axis reads it any other way."""
    if ipf.select is not None and ipf.select[0] == j:
        return None
    axes = [a for a, row in enumerate(ipf.matrix) if row[j]]
    if not axes:
        return REPLICATE
    (a,) = axes if len(axes) == 1 else (None,)
    if a is None:
        return None
    row = ipf.matrix[a]
    straight = row[j] == 1 and sum(1 for m in row if m) == 1 and ipf.offset[a] == 0 and ipf.tile[a] == 1
    return Placement("shard", a) if straight and ipf.shape[a] == size else None


# ---------------------------------------------------------------------------------------------
# DTensor: the strategies handed to its sharding propagator


def _all_overloads(package: packages.Package) -> list[str]:
    """Every overload of ``package`` torch knows, as "packet.overload"."""
    prefix = f"{package.namespace}::"
    names = []
    for op in sorted(n for n in torch._C._dispatch_get_all_op_names() if n.startswith(prefix)):
        packet, _, overload = op.removeprefix(prefix).partition(".")
        names.append(f"{packet}.{overload or 'default'}")
    return names


def register(package: packages.Package) -> None:
    """Give DTensor a strategy for every overload of ``package`` (idempotent)."""
    from torch.distributed.tensor import DTensor
    from torch.distributed.tensor._op_schema import RuntimeSchemaInfo

    propagator = DTensor._op_dispatcher.sharding_propagator
    for qualified in _all_overloads(package):
        overload = package.op(qualified)
        rule_name = package.rules.OVERLOADS.get(qualified)
        if not overload._schema.returns:
            continue  # a Tensor[] out= returns nothing to hold a placement: DTensor refuses it by name
        schema = overload._schema
        info = RuntimeSchemaInfo(
            static_argnum=0,  # every argument (dims, keepdim, p, ...) decides the strategy
            static_kwargkey=[a.name for a in schema.arguments if a.kwarg_only] or None,
            needs_pytree=True,  # Tensor[] and Tensor? arguments
        )
        rule = package.rules.RULES[rule_name] if rule_name is not None else None
        propagator.register_op_strategy(overload, functools.partial(_op_strategy, overload, rule), info)


def _op_strategy(overload, rule: dict | None, op_schema):
    from torch.distributed.tensor import Partial, Replicate, Shard
    from torch.distributed.tensor._op_schema import OpStrategy, TupleStrategy
    from torch.distributed.tensor._ops.utils import expand_to_full_mesh_op_strategy

    def meta(v):
        if isinstance(v, OpStrategy):
            tm = v.strategies[0].output_spec.tensor_meta
            return torch.empty_strided(tm.shape, tm.stride, dtype=tm.dtype, device="meta")
        if isinstance(v, TupleStrategy):
            return [meta(c) for c in _children(v)]
        if isinstance(v, list | tuple) and any(isinstance(e, OpStrategy) for e in v):
            return [meta(e) for e in v]
        return v

    schema = overload._schema
    positional = [a.name for a in schema.arguments if not a.kwarg_only]
    named = dict(zip(positional, op_schema.args_schema))
    named.update(op_schema.kwargs_schema)
    outs = [a.name for a in schema.arguments if a.is_out]
    leaves = _leaves(named, op_schema)
    if rule is not None:
        desc = rules.describe(
            packages.qualified(rule), **{n: meta(v) for n, v in named.items() if n not in outs}
        )
        options = strategies(desc, tuple(op_schema.get_mesh_from_args().shape))
        list_output = bool(rule["list_outputs"])
    else:  # no index space (meta: custom): only replicated
        options = [Strategy(None, (REPLICATE,) * len(schema.returns), ())]
        list_output = False

    def dt(p: Placement):
        return (
            Shard(p.axis) if p.kind == "shard" else Partial(p.reduce) if p.kind == "partial" else Replicate()
        )

    rows = []
    for s in options:
        row = [dt(p) for p in s.outputs]
        for name, element in leaves:
            row.append(dt(s.outputs[outs.index(name)] if name in outs else s.input(name, element)))
        rows.append(row)
    n_outputs = len(options[0].outputs)
    expanded = expand_to_full_mesh_op_strategy(
        op_schema.get_mesh_from_args(),
        op_schema,
        rows,
        input_index=n_outputs,
        inplace_op=op_schema.is_inplace_op(),
    )
    # DTensor writes an out= tensor or an inplace self where it lies: keep the strategies that
    # leave them there (torch < 2.13 would otherwise write into a redistributed copy).
    writes = {a.name for a in schema.arguments if a.alias_info is not None and a.alias_info.is_write}
    written = [i for i, (name, _) in enumerate(leaves) if name in writes]
    current = [s for s in op_schema.args_strategy + op_schema.kwargs_strategy]
    kept = [
        o
        for o in expanded.strategies
        if all(
            o.input_specs[i].placements == current[i].strategies[0].output_spec.placements for i in written
        )
    ]
    if not kept:
        placed = {leaves[i][0]: tuple(current[i].strategies[0].output_spec.placements) for i in written}
        raise RuntimeError(
            f"{schema.name.replace('::', '.')}: no sharding of this call writes "
            f"{', '.join(f'{n} (placed {p})' for n, p in placed.items())} where it lies; "
            "redistribute it, or call the functional op"
        )
    if list_output:  # a Tensor[] result takes a tuple of specs, even of one element
        for o in kept:
            if not isinstance(o.output_specs, tuple):
                o.output_specs = (o.output_specs,)
    return OpStrategy(kept)


def _children(v) -> tuple:
    """A TupleStrategy's elements (older torch names them ``childs``)."""
    return tuple(v.children if hasattr(v, "children") else v.childs)


def _leaves(named: dict[str, Any], op_schema) -> list[tuple[str, int | None]]:
    """The (argument, Tensor[] element) of each tensor strategy DTensor expands, in its order."""
    from torch.distributed.tensor._op_schema import OpStrategy, TupleStrategy

    where: dict[int, tuple[str, int | None]] = {}
    for name, v in named.items():
        if isinstance(v, OpStrategy):
            where[id(v)] = (name, None)
        elif isinstance(v, TupleStrategy | list | tuple):
            children = _children(v) if isinstance(v, TupleStrategy) else v
            for i, c in enumerate(children):
                if isinstance(c, OpStrategy):
                    where[id(c)] = (name, i)
    return [where[id(s)] for s in op_schema.args_strategy + op_schema.kwargs_strategy]


# ---------------------------------------------------------------------------------------------
# Registration when torch.distributed.tensor is imported


def register_when_imported(package: packages.Package) -> None:
    if torch.distributed.is_available():
        when_imported("torch.distributed.tensor", functools.partial(register, package))
