"""Per op: its index space, how DTensor shards it, how vmap batches it (Markdown table).

    .venv/bin/python tools/index_space_report.py

For every functional overload with a meta rule, on the first conformance sample whose index
dims all have 2 or more elements (else the first sample): the index dims with their kinds
(structops.describe), the DTensor strategies on a 1-D mesh of 2 (structops.dtensor.strategies:
which dims shard and which outputs are Partial), why each other dim stays Replicate, and the
vmap plans with the first tensor, every tensor and all but the first batched
(structops.vmap.plan). Ops without a rule are listed with why. The sharding and vmap values
themselves are checked by the conformance suite (`sharding`, `vmap`) and tests/distributed;
this only reports.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests package: its samples

from structgen import dtensor, rules, vmap
from structgen.conformance.samples import samples
from structgen.conformance.spec import load_specs

import structops
from tests.under_test import use_structops

ALL_REDUCES = dtensor._PARTIAL  # combines DTensor can all-reduce


def _why_replicated(desc: rules.Description, j: int) -> str:
    d = desc.index_space[j]
    if d.kind == "whole":
        return "whole (an output element needs all of it)"
    if d.kind == "scanned":
        return "scanned (a tile needs the earlier tiles' total)"
    if d.kind == "windowed":
        return "windowed (a tile needs a halo; DTensor exchanges none)"
    if d.kind == "reduction":
        if desc.combine is None:
            return "reduced, no combine"
        if desc.combine not in ALL_REDUCES:
            return f"reduced, {desc.combine} has no all-reduce"
        return f"reduced ({desc.combine}): a rank's part would be empty or uneven on this mesh"
    reads = [(ipf, a) for ipf in desc.ipfs for a, row in enumerate(ipf.matrix) if row[j]]
    if any(ipf.select is not None and ipf.select[0] == j for ipf in desc.ipfs):
        return "selects a Tensor[] element"
    if any(ipf.matrix[a][j] != 1 or ipf.offset[a] or ipf.tile[a] != 1 for ipf, a in reads):
        return "read at an offset or stride (cat's pieces)"
    if any(ipf.shape[a] != d.size for ipf, a in reads):
        return "an input's axis is longer than the dim (gather's self)"
    return "no input carries it"


def _sample(spec):
    dtype = "float32" if "float32" in spec.dtypes else spec.dtypes[0]
    found = list(samples(spec, "cpu", dtype))
    for s in found:
        d = structops.describe(spec.functional, *s.args, **s.kwargs)
        if d.index_space and all(i.size >= 2 for i in d.index_space):
            return s, d
    s = found[0]
    return s, structops.describe(spec.functional, *s.args, **s.kwargs)


def _plans(spec, s) -> list[str]:
    """The vmap plan's kind with the first tensor, every tensor and all but the first batched
    (a Tensor[] counts as one; '-' where the pattern is the same as an earlier one or empty)."""
    tensors = []
    for name, v in zip(spec.positional, s.args, strict=False):
        if isinstance(v, list | tuple) and v and all(hasattr(t, "shape") for t in v):
            tensors.append({(name, i) for i in range(len(v))})  # every element of a Tensor[]
        elif hasattr(v, "shape"):
            tensors.append({(name, None)})
    patterns = [tensors[:1], tensors, tensors[1:]]
    kinds, seen = [], []
    for pattern in patterns:
        batched = set().union(*pattern) if pattern else set()
        if not batched or batched in seen:
            kinds.append("-")
            continue
        seen.append(batched)
        try:
            p = vmap.plan(spec.functional, batched, 3, *s.args, **s.kwargs)
            kinds.append(p.kind + (f" ({p.why})" if p.why else ""))
        except Exception as e:  # noqa: BLE001 - a report row, not a check
            kinds.append(f"error: {e}")
    return kinds


def main() -> None:
    use_structops()
    print(
        "| op | index space | DTensor (mesh of 2): sharded | stays Replicate | vmap: first / every / all "
        "but the first tensor batched |"
    )
    print("|---|---|---|---|---|")
    for spec in load_specs():
        if not spec.described:  # meta: custom: describe() gives one whole dim per input axis
            s, desc = _sample(spec)
            space = ", ".join(f"{d.name}={d.size} {d.kind}" for d in desc.index_space)
            why = "a hand-written meta function names no input axis an output axis stands for"
            print(f"| {spec.name} | {space} (`meta: custom`) | Replicate only | all: {why} | torch's loop |")
            continue
        s, desc = _sample(spec)
        space = ", ".join(f"{d.name}={d.size} {d.kind}" for d in desc.index_space)
        if not space:
            space = "(a 0-dim output, no combine)"
        options = dtensor.strategies(desc, (2,))
        sharded = ", ".join(f"{o.dim} -> {', '.join(str(p) for p in o.outputs)}" for o in options[1:]) or "-"
        names = {o.dim for o in options}
        kept = "; ".join(
            f"{d.name}: {_why_replicated(desc, j)}"
            for j, d in enumerate(desc.index_space)
            if d.name not in names
        )
        batching = " / ".join(_plans(spec, s))
        print(f"| {spec.name} | {space} | {sharded} | {kept or '-'} | {batching} |")


if __name__ == "__main__":
    main()
