"""What describe() returns: an op's outputs, its index space, and each tensor's index
projection function (IPF), printable and as JSON (structgen/rules.py computes them)."""

from __future__ import annotations

import json
from dataclasses import dataclass


@dataclass(frozen=True)
class IndexDim:
    name: str
    size: int
    # parallel: tiles are independent; windowed: tiles are independent, each reading its windows
    # of the input, halo included (pooling); reduction: an input dim no output has (split only
    # with a combine); whole: an output element needs all of it (softmax's dim); scanned: it
    # needs the dim up to itself (cumsum's; split only with a combine, which carries earlier
    # tiles' totals); diagonal: rows or columns whose elements the op treats by their place
    # relative to a diagonal (tril's; a tile shifts the diagonal by its first row minus column)
    kind: str

    def to_json(self) -> dict:
        return {"name": self.name, "size": self.size, "kind": self.kind}


_KIND_LABELS = {
    "reduction": " (reduced)",
    "whole": " (whole)",
    "scanned": " (scanned)",
    "diagonal": " (diagonal)",
    "windowed": " (windowed)",
}


@dataclass(frozen=True)
class IPF:
    """Region of ``tensor`` for a box [lo, hi) of the index space: per tensor axis a,
    start = sum_j matrix[a][j] * lo[j] + offset[a],
    stop = sum_j matrix[a][j] * (hi[j] - 1) + offset[a] + tile[a],
    clipped to the axis. ``select`` (index dim, value): a Tensor[] element read only when that
    index dim's range holds the value (stack)."""

    tensor: str
    element: int | None
    shape: tuple[int, ...]
    matrix: tuple[tuple[int, ...], ...]
    offset: tuple[int, ...]
    tile: tuple[int, ...]
    select: tuple[int, int] | None = None

    def region(self, lo: list[int], hi: list[int]) -> tuple[slice, ...] | None:
        if self.select is not None:
            j, v = self.select
            if not lo[j] <= v < hi[j]:
                return None
        out = []
        for a, size in enumerate(self.shape):
            row = self.matrix[a]
            start = sum(m * x for m, x in zip(row, lo)) + self.offset[a]
            stop = sum(m * (x - 1) for m, x in zip(row, hi)) + self.offset[a] + self.tile[a]
            start, stop = max(start, 0), min(stop, size)
            if stop <= start and size > 0:
                return None
            out.append(slice(start, max(stop, start)))
        return tuple(out)

    def to_json(self) -> dict:
        return {
            "tensor": self.tensor,
            "element": self.element,
            "shape": list(self.shape),
            "matrix": [list(r) for r in self.matrix],
            "offset": list(self.offset),
            "tile": list(self.tile),
            "select": list(self.select) if self.select else None,
        }


@dataclass(frozen=True)
class Description:
    op: str
    # name, shape, dtype, strides (a data-dependent size as its symbol: masked_select's "u0")
    outputs: tuple[tuple[str, tuple[int | str, ...], str, tuple[int | str, ...]], ...]
    index_space: tuple[IndexDim, ...]
    ipfs: tuple[IPF, ...]
    combine: str | None
    # (argument, tensor argument, what [] means): the arguments that are dims of a tensor
    dim_args: tuple[tuple[str, str, str], ...] = ()
    # (holder, tensor argument, axes): the holder, an output (argmax's) or an input the op reads
    # the tensor at (index_select's index), holds flat positions over those axes (row-major)
    positions: tuple[tuple[str, str, tuple[int, ...]], ...] = ()
    # meta.index.diagonal: the int argument naming the diagonal of the two index dims of kind
    # diagonal (rows, then columns); a tile shifts it by its first row minus its first column
    offset: str | None = None

    def to_json(self) -> dict:
        return {
            "op": self.op,
            "outputs": [
                {"name": n, "shape": list(s), "dtype": d, "strides": list(st)} for n, s, d, st in self.outputs
            ],
            "index_space": [d.to_json() for d in self.index_space],
            "ipfs": [i.to_json() for i in self.ipfs],
            "combine": self.combine,
            "positions": [{"output": o, "tensor": t, "axes": list(a)} for o, t, a in self.positions],
            "offset": self.offset,
        }

    def __str__(self) -> str:
        lines = [f"{self.op}:"]
        for n, s, d, st in self.outputs:
            shape, strides = ", ".join(map(str, s)), ", ".join(map(str, st))
            lines.append(f"  output {n}: shape [{shape}], {d}, strides [{strides}]")
        space = ", ".join(f"{d.name}={d.size}{_KIND_LABELS.get(d.kind, '')}" for d in self.index_space)
        lines.append(f"  index space: [{space}]")
        names = [d.name for d in self.index_space]
        for ipf in self.ipfs:
            label = ipf.tensor if ipf.element is None else f"{ipf.tensor}[{ipf.element}]"
            axes = []
            for a in range(len(ipf.shape)):
                terms = [f"{m}*{names[j]}" if m != 1 else names[j] for j, m in enumerate(ipf.matrix[a]) if m]
                expr = " + ".join(terms) or "0"
                if ipf.offset[a]:
                    expr += f" {'+' if ipf.offset[a] > 0 else '-'} {abs(ipf.offset[a])}"
                axes.append(f"{expr} (+{ipf.tile[a]})" if ipf.tile[a] != 1 else expr)
            sel = f" when {names[ipf.select[0]]} = {ipf.select[1]}" if ipf.select else ""
            lines.append(f"  {label} {list(ipf.shape)}: [{', '.join(axes)}]{sel}")
        for output, tensor, axes in self.positions:
            lines.append(f"  {output} holds positions over {tensor}'s axes {list(axes)}")
        if self.combine is not None and any(d.kind == "reduction" for d in self.index_space):
            lines.append(f"  combine: {self.combine}")
        return "\n".join(lines)

    def json(self) -> str:
        return json.dumps(self.to_json())
