"""Index spaces and index projection functions (IPFs) of generated ops, for one call.

``describe(op, *args, **kwargs)`` runs the op's compiled meta function on meta copies of the
arguments (so the output shapes, dtypes and strides, and every error, are the C++ meta
function's own), then the op's generated index-space function (<package>._rules, printed from
the rule by codegen/rules/python.py). That function computes each output's dims again, each
remembering which input axes it stands for, at which offset and stride; describe() checks the
sizes against the meta function's and turns the provenance into the op's index space and, per
tensor, its IPF: an affine map plus a tile shape from a box of the index space to the region of
the tensor it reads or writes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch

from structgen import packages
from structgen.description import IPF, Description, IndexDim


@dataclass(frozen=True)
class Origin:
    """Axis ``axis`` of tensor ``tensor`` (element ``element`` of a Tensor[]) reads index dim
    values ``stride * i + offset`` .. ``+ extent``; ``axis`` None selects the element itself."""

    tensor: str
    element: int | None
    axis: int | None
    stride: int = 1
    offset: int = 0
    extent: int = 1


@dataclass(eq=False)
class Dim:
    """A size, with the tensor axes it stands for. Identity matters: a dim bound once and used
    in two places (k of matmul) is one object, and becomes one index-space dim."""

    size: int
    origins: list[Origin] = field(default_factory=list)
    name: str | None = None
    windowed: bool = False  # a sliding window's output (pooling): each value reads a window


@dataclass(frozen=True)
class TensorInfo:
    name: str
    shape: tuple[int, ...]
    element: int | None = None

    def dims(self) -> list[Dim]:
        return [Dim(s, [Origin(self.name, self.element, a)]) for a, s in enumerate(self.shape)]

    @property
    def label(self) -> str:
        return self.name if self.element is None else f"{self.name}[{self.element}]"


# ---------------------------------------------------------------------------------------------
# The runtime of the generated index-space functions: the rule language's shape builtins on
# Dims. The meta function has accepted the call, so nothing here checks anything.


def _int(v) -> int:
    return v.size if isinstance(v, Dim) else int(v)


def _wrap(dim: int, rank: int) -> int:
    return dim + max(rank, 1) if dim < 0 else dim


def _dim_list(dim) -> list[int] | None:
    if dim is None:
        return None
    if isinstance(dim, Dim | int):
        return [_int(dim)]
    return [_int(d) for d in dim]


def _reduced_dims(rank: int, dim: list[int] | None) -> list[int]:
    if not dim:
        return list(range(rank))
    return sorted({_wrap(d, rank) for d in dim}) if rank > 0 else []


def _concat_dim(dims: list[Dim]) -> Dim:
    """Dims laid end to end (cat's dim, sum(c)): each element's axes at a growing offset."""
    total, origins = 0, []
    for d in dims:
        origins.extend(
            Origin(o.tensor, o.element, o.axis, o.stride, o.offset - total, o.extent) for o in d.origins
        )
        total += d.size
    return Dim(total, origins)


def _broadcast(named: list[list[Dim]]) -> list[Dim]:
    ndim = max((len(d) for d in named), default=0)
    out = [Dim(1) for _ in range(ndim)]
    for dims in named:
        offset = ndim - len(dims)
        for i, d in enumerate(dims):
            o = out[offset + i]
            if d.size == 1:
                continue
            if o.size == 1:
                out[offset + i] = Dim(d.size, list(d.origins), d.name)
            else:
                o.origins.extend(d.origins)
    return out


class Runtime:
    """What a generated index-space function calls (``so``). It records the dims patterns bind
    (``bound``), the dims builtins reduce away (``reduced``) and the input axes the rule's
    ``meta.index`` declares whole or scanned (``marks``), which describe() reads; and which
    arguments are dims of which tensor (``dim_args``: argument, tensor, what [] means), which
    structgen.vmap rewrites when a batch axis comes first."""

    def __init__(self) -> None:
        self.bound: list[Dim] = []
        self.reduced: list[Dim] = []
        self.marks: list[tuple[str, TensorInfo, list[int]]] = []
        self.positions: list[tuple[str, str, tuple[int, ...]]] = []
        self.dim_args: list[tuple[str, str, str]] = []
        self.offset: str | None = None  # meta.index.diagonal's argument

    def _dim_arg(self, labels, dim: int, tensor: int, empty: str = "ALL") -> None:
        self.dim_args.append((labels[dim], labels[tensor], empty))

    def mark(
        self, kind: str, t: TensorInfo, axes: list[int], output: str | None = None, offset: str | None = None
    ) -> None:
        if kind == "positions":
            assert output is not None
            self.positions.append((output, t.name, tuple(axes)))
        else:
            self.marks.append((kind, t, list(axes)))
        if offset is not None:
            self.offset = offset

    @staticmethod
    def link(a: list, b: list) -> None:
        """A checked shape equality: each dim of ``b`` also stands for the axes of the dim of
        ``a`` it equals (aligned from the right, as broadcasting; size-1 dims stand for none)."""
        for x, y in zip(reversed(a), reversed(b)):
            if isinstance(x, Dim) and isinstance(y, Dim) and x.size == y.size != 1:
                y.origins.extend(o for o in x.origins if o not in y.origins)

    # -- values and patterns ----------------------------------------------------------------------
    int = staticmethod(_int)

    @staticmethod
    def dim(v) -> Dim:
        return v if isinstance(v, Dim) else Dim(int(v))

    @staticmethod
    def dim_list(v) -> list[Dim]:
        return [Runtime.dim(d) for d in v]

    @staticmethod
    def sizes(v) -> list[int]:
        return [_int(d) for d in v]

    @staticmethod
    def length(v) -> int:
        return len(v)

    @staticmethod
    def elements(tensors: list[TensorInfo]):
        return enumerate(tensors)

    def bind(self, name: str, value):
        """A pattern's first occurrence of ``name``: the dim (or group of dims) it stands for."""
        for d in value if isinstance(value, list) else [value]:
            self.bound.append(d)
        if isinstance(value, Dim):
            value.name = name
        return value

    def collect(self, value: Dim) -> Dim:
        """One element's dim of a per-element name (``c[i]``)."""
        self.bound.append(value)
        return value

    @staticmethod
    def same(bound, value):
        """A later occurrence of a bound name: its axes are more origins of the same dims."""
        if isinstance(bound, Dim):
            bound.origins.extend(value.origins)
        else:
            for b, v in zip(bound, value):
                b.origins.extend(v.origins)
        return bound

    @staticmethod
    def group_length(dim: int, rank: int) -> int:
        return dim + rank if dim < 0 else dim

    @staticmethod
    def floordiv(a: int, b: int) -> int:
        return a // b

    @staticmethod
    def mod(a: int, b: int) -> int:
        return a % b

    # -- builtins (docs/rules.md §4) ----------------------------------------------------------------

    @staticmethod
    def broadcast(named: list[tuple[str, Any]]) -> list[Dim]:
        """An absent Tensor? takes no part; a group or computed shape is a list of dims."""
        return _broadcast([v.dims() if isinstance(v, TensorInfo) else v for _, v in named if v is not None])

    def reduce_all(self, labels, dims: list[Dim]) -> list[Dim]:
        """No dims: each of ``dims`` is reduced away (a loss's mean or sum)."""
        self.reduced.extend(dims)
        return []

    def reduce(self, labels, t: TensorInfo, dim, keepdim: bool, empty: str = "ALL") -> list[Dim]:
        self._dim_arg(labels, 1, 0, empty)
        dims = t.dims()
        if empty == "NONE" and dim is not None and not _dim_list(dim):
            return dims  # torch.all(x, dim=[]) reduces nothing
        reduced = _reduced_dims(len(dims), _dim_list(dim))
        self.reduced.extend(dims[i] for i in reduced)
        if keepdim:
            return [Dim(1) if i in reduced else d for i, d in enumerate(dims)]
        return [d for i, d in enumerate(dims) if i not in reduced]

    def dims(self, labels, t: TensorInfo, dim, empty: str = "ALL") -> list[int]:
        self._dim_arg(labels, 1, 0, empty)
        if empty == "NONE" and dim is not None and not _dim_list(dim):
            return []
        return _reduced_dims(len(t.shape), _dim_list(dim))

    @staticmethod
    def trailing(labels, t: TensorInfo, n) -> list[int]:
        rank = len(t.shape)
        return list(range(rank - _int(n), rank))

    def matmul(self, labels, a: TensorInfo, b: TensorInfo) -> list[Dim]:
        """torch.matmul's dims: n and m from the operands, k (read by both) reduced away."""
        da, db = a.dims(), b.dims()
        kb = 0 if len(db) == 1 else len(db) - 2
        self.reduced.append(Dim(da[-1].size, da[-1].origins + db[kb].origins, "k"))
        if len(da) >= 2:
            da[-2].name = "n"
        if len(db) >= 2:
            db[-1].name = "m"
        batch = _broadcast([da[:-2], db[:-2]])
        return batch + ([da[-2]] if len(da) >= 2 else []) + ([db[-1]] if len(db) >= 2 else [])

    def cat(self, labels, tensors: list[TensorInfo], dim) -> list[Dim]:
        self._dim_arg(labels, 1, 0)
        used = [t for t in tensors if not (len(t.shape) == 1 and t.shape[0] == 0)]  # torch skips [0]
        if not used:
            return tensors[0].dims()
        d = _wrap(_int(dim), len(used[0].shape))
        out = used[0].dims()
        for t in used[1:]:
            for j, (x, o) in enumerate(zip(t.dims(), out)):
                if j != d:
                    o.origins.extend(x.origins)
        out[d] = _concat_dim([t.dims()[d] for t in used])
        return out

    def stack(self, labels, tensors: list[TensorInfo], dim) -> list[Dim]:
        """The new dim selects the element: each tensor is read when the index equals its place."""
        self._dim_arg(labels, 1, 0)
        d = _wrap(_int(dim), len(tensors[0].shape) + 1)
        out = tensors[0].dims()
        for t in tensors[1:]:
            for x, o in zip(t.dims(), out):
                o.origins.extend(x.origins)
        selector = Dim(len(tensors), [Origin(t.name, t.element, None, 1, -i) for i, t in enumerate(tensors)])
        return out[:d] + [selector] + out[d:]

    def split(self, labels, t: TensorInfo, sizes: list[int], dim) -> list[list[Dim]]:
        """Piece i is t with dim ``dim`` of size sizes[i], read at a growing offset; that dim is
        whole (a tile of it would need other sizes, which are arguments)."""
        self._dim_arg(labels, 2, 0)
        d = _wrap(_int(dim), len(t.shape))
        self.mark("whole", t, [d])
        pieces, offset = [], 0
        for s in sizes:
            dims = t.dims()
            dims[d] = Dim(_int(s), [Origin(t.name, t.element, d, 1, offset, 1)])
            pieces.append(dims)
            offset += _int(s)
        return pieces

    def index(self, labels, src: TensorInfo, dim, idx: TensorInfo) -> list[Dim]:
        """The indexed dim of ``src`` is read whole (gathered), so it links to no index dim."""
        self._dim_arg(labels, 1, 0)
        dims = src.dims()
        d = _wrap(_int(dim), len(dims))
        return dims[:d] + idx.dims() + dims[d + 1 :]

    def gather(self, labels, src: TensorInfo, dim, idx: TensorInfo) -> list[Dim]:
        """out[..., i, ...] = src[..., idx[..., i, ...], ...]: every dim of idx but ``dim`` also
        reads src's axis straight (src may be longer there); src's ``dim`` is read through the
        data, so whole."""
        self._dim_arg(labels, 1, 0)
        dims = idx.dims()
        if src.shape and idx.shape:
            d = _wrap(_int(dim), len(src.shape))
            for k, x in enumerate(dims):
                if k != d:
                    x.origins.append(Origin(src.name, src.element, k))
        return dims

    @staticmethod
    def window(labels, n, k, s, p, d, ceil_mode: bool) -> Dim:
        """Output o's window reads the input axes ``n`` stands for at s*o - p .. s*o - p + extent."""
        axes = n.origins if isinstance(n, Dim) else []
        n, k, s, p, d = (_int(v) for v in (n, k, s, p, d))
        room = n + 2 * p - (d * (k - 1) + 1)
        out = (room + (s - 1 if ceil_mode else 0)) // s + 1
        if ceil_mode and (out - 1) * s >= n + p:
            out -= 1
        extent = d * (k - 1) + 1
        origins = [Origin(o.tensor, o.element, o.axis, s, -p, extent) for o in axes if o.stride == 1]
        return Dim(out, origins, windowed=bool(origins))

    @staticmethod
    def len(labels, x) -> Dim:
        return Dim(len(x))

    @staticmethod
    def ndim(labels, t: TensorInfo) -> Dim:
        return Dim(len(t.shape))

    @staticmethod
    def numel(labels, t: TensorInfo) -> Dim:
        return Dim(math.prod(t.shape))

    @staticmethod
    def sum(labels, dims: list[Dim]) -> Dim:
        return _concat_dim(Runtime.dim_list(dims))

    @staticmethod
    def max(labels, a, b) -> Dim:
        return Dim(max(_int(a), _int(b)))

    @staticmethod
    def min(labels, a, b) -> Dim:
        return Dim(min(_int(a), _int(b)))

    @staticmethod
    def item(labels, values: list[int], i) -> Dim:
        return Dim(_int(values[_int(i)]))

    @staticmethod
    def ones(labels, n) -> list[Dim]:
        return [Dim(1) for _ in range(max(_int(n), 0))]


# ---------------------------------------------------------------------------------------------
# describe()


def _bind(op_name: str, args: tuple, kwargs: dict) -> tuple[dict, dict[str, Any]]:
    """The op's rule and its argument values by name (defaults from the registered schema). A
    name of several overloads (mul: mul.Tensor, mul.Scalar) picks the first the arguments fit.
    ``op_name`` may carry its package's namespace ("example_ops::softclip"): packages.split."""
    package, op_name = packages.split(op_name)
    table = package.rules
    name = table.OVERLOADS.get(op_name) or table.OVERLOADS.get(f"{op_name}.default")
    candidates = (
        [name] if name else [n for n, r in table.RULES.items() if r["op"] == op_name and r["functional"]]
    )
    if not candidates:
        if package.has_packet(op_name.split(".")[0]):
            return _custom_rule(package, op_name, args, kwargs)
        known = sorted({r["op"] for r in table.RULES.values() if not r["op"].startswith("_")})
        raise ValueError(
            f"{package.namespace} has no op called '{op_name}'; ops with a meta rule: {', '.join(known)}"
        )
    error = None
    for name in candidates:
        rule = table.RULES[name]
        try:
            return rule, _values(op_name, rule, args, kwargs)
        except TypeError as e:
            error = error or e
    raise error


def _custom_rule(
    package: packages.Package, op_name: str, args: tuple, kwargs: dict
) -> tuple[dict, dict[str, Any]]:
    """A rule-shaped record of an op whose meta function is hand-written (meta: custom): its
    functional and out= overloads and tensor arguments, no index-space function."""
    packet = getattr(getattr(torch.ops, package.namespace), op_name.split(".")[0])
    out = getattr(packet, "out", None)
    outs = [a.name for a in out._schema.arguments if a.is_out] if out is not None else ["out"]
    args_kinds = [
        (a.name, "tensor?" if isinstance(a.type, torch.OptionalType) else "tensor")
        for a in packet.default._schema.arguments
        if isinstance(a.type, torch.TensorType)
        or (isinstance(a.type, torch.OptionalType) and isinstance(a.type.getElementType(), torch.TensorType))
    ]
    rule = {
        "namespace": package.namespace,
        "op": op_name.split(".")[0],
        "functional": f"{op_name.split('.')[0]}.default",
        "outputs": outs,
        "list_outputs": False,
        "args": args_kinds,
        "combine": None,
        "vmap_as": None,
        "custom": True,
    }
    return rule, _values(op_name, rule, args, kwargs)


def _values(op_name: str, rule: dict, args: tuple, kwargs: dict) -> dict[str, Any]:
    values: dict[str, Any] = {}
    positional = list(args)
    for a in _functional(rule)._schema.arguments:
        if positional and not a.kwarg_only:
            values[a.name] = positional.pop(0)
        elif a.name in kwargs:
            values[a.name] = kwargs[a.name]
        elif a.has_default_value():
            values[a.name] = a.default_value
        else:
            raise TypeError(f"{op_name}: missing argument '{a.name}'")
        if isinstance(a.type, torch.NumberType) and isinstance(values[a.name], torch.Tensor):
            raise TypeError(f"{op_name}: '{a.name}' is a number in {rule['functional']}, got a tensor")
        if isinstance(a.type, torch.TensorType) and not isinstance(values[a.name], torch.Tensor):
            raise TypeError(
                f"{op_name}: '{a.name}' is a tensor in {rule['functional']}, got {values[a.name]!r}"
            )
    if positional:
        raise TypeError(f"{op_name}: too many positional arguments")
    return values


def _functional(rule: dict):
    packet, overload = rule["functional"].split(".")
    return getattr(getattr(getattr(torch.ops, rule["namespace"]), packet), overload)


def _on_meta(v):
    if isinstance(v, torch.Tensor):
        return torch.empty_strided(v.shape, v.stride(), dtype=v.dtype, device="meta")
    if isinstance(v, list | tuple) and v and all(isinstance(t, torch.Tensor) for t in v):
        return [_on_meta(t) for t in v]
    return v


def _meta_outputs(rule: dict, values: dict[str, Any]) -> list[tuple[str, torch.Tensor]]:
    """The outputs of the call on meta tensors, by name (``out[i]`` for a Tensor[] output's
    elements): the compiled meta function's shapes, dtypes and strides, or its error. An op
    with a data-dependent output size has no meta function: its fake impl, under FakeTensorMode,
    gives that size as a symbol (masked_select's u0)."""
    op = _functional(rule)
    if torch.Tag.dynamic_output_shape not in op.tags:
        result = op(**{k: _on_meta(v) for k, v in values.items()})
    else:
        from torch._subclasses.fake_tensor import FakeTensorMode
        from torch.fx.experimental.symbolic_shapes import ShapeEnv

        with FakeTensorMode(shape_env=ShapeEnv()) as mode:
            fake = {k: mode.from_tensor(v) if isinstance(v, torch.Tensor) else v for k, v in values.items()}
            result = op(**fake)
    results = [result] if isinstance(result, torch.Tensor) else list(result)
    if rule["list_outputs"]:
        return [(f"{rule['outputs'][0]}[{i}]", t) for i, t in enumerate(results)]
    return list(zip(rule["outputs"], results, strict=True))


def _infos(rule: dict, values: dict[str, Any]) -> dict[str, Any]:
    """The arguments as the index-space function takes them: tensors as TensorInfo."""
    out = dict(values)
    for name, kind in rule["args"]:
        v = values[name]
        if kind == "tensor" or (kind == "tensor?" and v is not None):
            out[name] = TensorInfo(name, tuple(v.shape))
        elif kind == "tensors":
            out[name] = [TensorInfo(name, tuple(t.shape), i) for i, t in enumerate(v)]
    return out


def describe(op: str, *args, **kwargs) -> Description:
    """Output shapes/dtypes/strides, the index space and each tensor's IPF for one call; the
    op's own error for a call it refuses."""
    rule, values = _bind(op, args, kwargs)
    metas = _meta_outputs(rule, values)
    outputs = tuple(
        (
            n,
            tuple(_size(s) for s in t.shape),
            str(t.dtype).removeprefix("torch."),
            tuple(map(_size, t.stride())),
        )
        for n, t in metas
    )
    if rule.get("custom"):
        return _whole_description(rule, values, outputs)
    combine = _combine(rule, values)
    so = Runtime()
    infos = _infos(rule, values)
    dims = rule["index"](so, **infos)
    computed = (
        [(f"{n}[{i}]", piece) for n in rule["outputs"] for i, piece in enumerate(dims[n])]
        if rule["list_outputs"]
        else [(n, dims[n]) for n in rule["outputs"]]
    )
    for (name, d), (_, shape, *_) in zip(computed, outputs, strict=True):
        if tuple(x.size for x in d) != shape:
            raise AssertionError(
                f"{rule['op']}: the index-space function gives '{name}' the shape {[x.size for x in d]}, "
                f"the meta function {list(shape)} (a bug in codegen/rules/python.py or the runtime in "
                "structgen/rules.py)"
            )
    tensors = [
        t for v in infos.values() for t in (v if isinstance(v, list) else [v]) if isinstance(t, TensorInfo)
    ]
    if rule["list_outputs"]:
        return _list_description(rule, outputs, computed, tensors, so)
    positions = tuple(so.positions)
    name, out_dims = computed[0]
    space: list[Dim] = list(out_dims)
    kinds = ["parallel"] * len(space)
    if combine is not None:
        # Input dims that no output has are reduced; split them and the combine merges partials.
        seen = {id(d) for d in space}
        candidates = list(so.reduced)
        for t in tensors:
            candidates.extend(_owner(so, t, a) for a in range(len(t.shape)))
        for d in candidates:
            if d is not None and id(d) not in seen and d.size != 1:
                seen.add(id(d))
                space.append(d)
                kinds.append("reduction")
    # An output dim copied from an input axis ([*input]) stands for every axis a pattern binds to
    # the same name (batch_norm's c: input's axis 1 and weight's axis 0).
    for d in space:
        for b in so.bound:
            if b is not d and any(o in b.origins for o in d.origins):
                d.origins.extend(o for o in b.origins if o not in d.origins)
    # A sliding window's output dim reads its windows (windowed); an output dim no input axis
    # stands for (a size computed from sizes): a tile of it reads an input region no IPF names,
    # so it is not split.
    for j, d in enumerate(space):
        if d.windowed:
            kinds[j] = "windowed"
        elif not d.origins and d.size > 1:
            kinds[j] = "whole"
    for kind, t, axes in so.marks:
        for axis in axes:
            for j, d in enumerate(space):
                if any(o.tensor == t.name and o.element == t.element and o.axis == axis for o in d.origins):
                    kinds[j] = kind
    index = []
    used: set[str] = set()
    for j, (d, kind) in enumerate(zip(space, kinds)):
        base = d.name or (f"r{j}" if kind == "reduction" else f"d{j}")
        n = base if base not in used else f"{base}{j}"
        used.add(n)
        index.append(IndexDim(n, d.size, kind))
    ipfs = [_ipf(t, space) for t in tensors]
    # The first output: axis a is index dim a (a size-1 keepdim axis is its own size-1 index dim).
    rank = len(out_dims)
    ipfs.append(
        IPF(
            name,
            None,
            tuple(d.size for d in out_dims),
            tuple(tuple(1 if j == a else 0 for j in range(len(space))) for a in range(rank)),
            (0,) * rank,
            (1,) * rank,
        )
    )
    # Other outputs (layer_norm's mean and rstd, max_pool's indices): an axis is the index dim
    # it stands for (the same input axes); one standing for none is written whole.
    ipfs.extend(_output_ipf(n, dims, space) for n, dims in computed[1:])
    return Description(
        rule["op"],
        outputs,
        tuple(index),
        tuple(ipfs),
        combine,
        tuple(dict.fromkeys(so.dim_args)),
        positions,
        so.offset,
    )


def _combine(rule: dict, values: dict[str, Any]) -> str | None:
    """The call's combine: the rule's, or the one its int argument's value picks (a loss's
    reduction: mean or add; 'none' reduces nothing)."""
    combine = rule["combine"]
    if isinstance(combine, dict):
        return combine["cases"].get(values[combine["by"]])
    return combine


def _size(s) -> int | str:
    """A size, or the symbol of a data-dependent one (masked_select's u0)."""
    return s if isinstance(s, int) else str(s)


def _list_description(rule: dict, outputs, computed, inputs: list[TensorInfo], so: Runtime) -> Description:
    """A Tensor[] output (split_with_sizes_copy): the index space is the input's axes, each element
    read along them (a piece at its offset). The split axis is whole (split() marks it): its
    tiles' pieces would need other split sizes, which are arguments. An element axis no input
    axis stands for is not modelled (outputs only)."""
    dim_args = tuple(dict.fromkeys(so.dim_args))
    axes = {(t.name, t.element, a): s for t in inputs for a, s in enumerate(t.shape)}
    where = {key: j for j, key in enumerate(axes)}
    kinds = ["parallel"] * len(axes)
    pieces = []
    for name, dims in computed:
        rows, offsets = [], []
        for d in dims:
            o = next((o for o in d.origins if (o.tensor, o.element, o.axis) in where and o.stride == 1), None)
            if o is None:
                return Description(rule["op"], outputs, (), (), None, dim_args)
            j = where[(o.tensor, o.element, o.axis)]
            rows.append(tuple(1 if k == j else 0 for k in range(len(axes))))
            offsets.append(-o.offset)
        shape = tuple(d.size for d in dims)
        pieces.append(IPF(name, None, shape, tuple(rows), tuple(offsets), (1,) * len(shape)))
    for kind, t, marked in so.marks:
        for axis in marked:
            kinds[where[(t.name, t.element, axis)]] = kind
    space = [Dim(size, [Origin(t, e, a)]) for (t, e, a), size in axes.items()]
    index = tuple(
        IndexDim(f"{t}{a}" if e is None else f"{t}{e}_{a}", size, kind)
        for ((t, e, a), size), kind in zip(axes.items(), kinds, strict=True)
    )
    ipfs = tuple(_ipf(t, space) for t in inputs) + tuple(pieces)
    return Description(rule["op"], outputs, index, ipfs, None, dim_args)


def _whole_description(rule: dict, values: dict[str, Any], outputs) -> Description:
    """A hand-written meta function says nothing of which input axes an output axis stands for,
    so each axis of each input is an index dim of its own, whole: no split is safe (run_sharded
    refuses each by name, and on DTensor the op replicates). The outputs are the meta
    function's."""
    tensors = [
        TensorInfo(name, tuple(values[name].shape)) for name, _ in rule["args"] if values[name] is not None
    ]
    space = [d for t in tensors for d in t.dims()]  # each axis its own dim, remembering its origin
    names = [f"{o.tensor}{o.axis}" for d in space for o in d.origins]
    index = tuple(IndexDim(n, d.size, "whole") for n, d in zip(names, space, strict=True))
    return Description(rule["op"], outputs, index, tuple(_ipf(t, space) for t in tensors), None)


def _output_ipf(name: str, dims: list[Dim], space: list[Dim]) -> IPF:
    def same(a: Dim, b: Dim) -> bool:
        return a is b or any(o in b.origins for o in a.origins)

    matrix, tile = [], []
    for d in dims:
        j = next((j for j, s in enumerate(space) if d.size != 1 and same(d, s)), None)
        matrix.append(tuple(int(k == j) for k in range(len(space))))
        tile.append(1 if j is not None else d.size)
    return IPF(name, None, tuple(d.size for d in dims), tuple(matrix), (0,) * len(dims), tuple(tile))


def _owner(so: Runtime, t: TensorInfo, axis: int) -> Dim | None:
    """The bound dim an input axis stands for, if a pattern bound it."""
    for d in so.bound:
        if any(o.tensor == t.name and o.element == t.element and o.axis == axis for o in d.origins):
            return d
    return None


def _ipf(t: TensorInfo, space: list[Dim]) -> IPF:
    rank = len(t.shape)
    matrix = [[0] * len(space) for _ in range(rank)]
    offset = [0] * rank
    tile = list(t.shape)  # unlinked axes (broadcast, gathered): read whole
    select = None
    for j, d in enumerate(space):
        for o in d.origins:
            if o.tensor != t.name or o.element != t.element:
                continue
            if o.axis is None:
                select = (j, -o.offset)
                continue
            matrix[o.axis][j] = o.stride
            offset[o.axis] = o.offset
            tile[o.axis] = o.extent
    return IPF(
        t.name, t.element, t.shape, tuple(tuple(r) for r in matrix), tuple(offset), tuple(tile), select
    )
