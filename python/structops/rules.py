"""The Python mirror of the rule language, and what only it computes: index spaces and IPFs.

``evaluate(op, *args, **kwargs)`` runs an op's meta rule (the AST the generator embeds in
structops._rules) on concrete tensors, the way the generated C++ meta function does, and
returns the outputs' shapes, dtypes and strides. Every dim it computes remembers where it came
from (which tensor axis, at which offset and stride); that provenance gives the op's index space
and, per tensor, its index projection function (IPF): an affine map plus a tile shape from a box
of the index space to the region of the tensor it reads or writes.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import torch

from structops import _rules

# ---------------------------------------------------------------------------------------------
# Values


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


@dataclass(frozen=True)
class TensorInfo:
    name: str
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    dtype: torch.dtype
    element: int | None = None

    @staticmethod
    def of(name: str, t: torch.Tensor, element: int | None = None) -> TensorInfo:
        return TensorInfo(name, tuple(t.shape), tuple(t.stride()), t.dtype, element)

    def dims(self) -> list[Dim]:
        return [Dim(s, [Origin(self.name, self.element, a)]) for a, s in enumerate(self.shape)]

    @property
    def label(self) -> str:
        return self.name if self.element is None else f"{self.name}[{self.element}]"


def _fail(op: str, message: str, index: bool = False):
    raise (IndexError if index else RuntimeError)(f"{op}: {message}")


# ---------------------------------------------------------------------------------------------
# Dtypes (PyTorch's result_type state machine and promotion kinds)


def _combine(higher: torch.dtype | None, lower: torch.dtype | None) -> torch.dtype | None:
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_complex:
        return higher
    if lower.is_complex:
        return (
            {torch.float64: torch.complex128}.get(higher, torch.complex64)
            if higher.is_floating_point
            else lower
        )
    if higher.is_floating_point:
        return higher
    if higher == torch.bool or lower.is_floating_point:
        return torch.promote_types(higher, lower)
    return higher


def _promote(tensors: list[TensorInfo], scalars: list[Any]) -> torch.dtype:
    dim = zero = wrapped = None
    for t in tensors:
        if len(t.shape) > 0:
            dim = t.dtype if dim is None else torch.promote_types(dim, t.dtype)
        else:
            zero = t.dtype if zero is None else torch.promote_types(zero, t.dtype)
    for s in scalars:
        d = (
            torch.bool
            if isinstance(s, bool)
            else torch.int64
            if isinstance(s, int)
            else torch.complex64
            if isinstance(s, complex)
            else torch.get_default_dtype()
        )
        if isinstance(s, complex) and torch.get_default_dtype() == torch.float64:
            d = torch.complex128
        wrapped = d if wrapped is None else torch.promote_types(wrapped, d)
    return _combine(dim, _combine(zero, wrapped))


# c10's names, so the mirror's messages read like the C++ meta function's.
C10_NAMES = {
    torch.bool: "Bool",
    torch.uint8: "Byte",
    torch.int8: "Char",
    torch.int16: "Short",
    torch.int32: "Int",
    torch.int64: "Long",
    torch.float16: "Half",
    torch.bfloat16: "BFloat16",
    torch.float32: "Float",
    torch.float64: "Double",
    torch.complex64: "ComplexFloat",
    torch.complex128: "ComplexDouble",
}


def _opmath(dtype: torch.dtype) -> torch.dtype:
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


DTYPE_NAMES = {
    "bool": torch.bool,
    "uint8": torch.uint8,
    "int8": torch.int8,
    "int16": torch.int16,
    "int32": torch.int32,
    "int64": torch.int64,
    "long": torch.int64,
    "float16": torch.float16,
    "half": torch.float16,
    "bfloat16": torch.bfloat16,
    "float32": torch.float32,
    "float": torch.float32,
    "float64": torch.float64,
    "double": torch.float64,
    "complex64": torch.complex64,
    "complex128": torch.complex128,
}


# ---------------------------------------------------------------------------------------------
# The evaluator


@dataclass
class Result:
    op: str
    outputs: list[
        tuple[str, list[Dim], torch.dtype, torch.dtype, tuple[int, ...]]
    ]  # name, dims, dtype, compute, strides
    inputs: dict[str, TensorInfo | list[TensorInfo]]
    combine: str | None
    reduced: list[Dim]  # dims builtins consumed (matmul's k, reduce's reduced axes)
    env: dict[str, Any]  # every name the rule bound


class _Eval:
    def __init__(self, rule: dict, values: dict[str, Any]):
        self.rule = rule
        self.op = rule["op"]
        self.env: dict[str, Any] = {}
        self.kinds = dict(rule["args"])
        self.inputs: dict[str, TensorInfo | list[TensorInfo]] = {}
        self.reduced: list[Dim] = []
        self.sites: dict[str, str] = {}  # bound name -> where it was first bound, for messages
        self.promoted: torch.dtype | None = None  # the first output's promote(), before its kind
        for name, kind in rule["args"]:
            v = values[name]
            if kind == "tensor" or (kind == "tensor?" and v is not None):
                v = TensorInfo.of(name, v)
                self.inputs[name] = v
            elif kind == "tensors":
                v = [TensorInfo.of(name, t, i) for i, t in enumerate(v)]
                self.inputs[name] = v
            self.env[name] = v

    # -- patterns ------------------------------------------------------------------------------

    def pattern(self, arg: str, kind: str, pattern: tuple, text: str) -> None:
        items = pattern[1]
        if kind == "tensor?" and self.env[arg] is None:
            return  # an optional tensor's pattern is checked only when it is given
        tensors = self.env[arg] if kind == "tensors" else [self.env[arg]]
        if kind == "tensors" and not tensors:
            _fail(self.op, f"'{arg}' must be a non-empty list of tensors")
        for t in tensors:
            rank = len(t.shape)
            fixed = sum(1 for i in items if i[0] != "group")
            lengths = {}
            for i in items:
                if i[0] == "group" and i[2] is not None:
                    d = self.int_value(self.expr(i[2]))
                    if not -rank <= d < rank:
                        _fail(
                            self.op,
                            f"dim {d} is out of range for '{t.label}' with {rank} dims (pattern {text}; "
                            f"expected a dim in [{-rank}, {rank - 1}])",
                            index=True,
                        )
                    lengths[i[1]] = d + rank if d < 0 else d
            for i in items:  # `*normalized_shape`: an int[] argument as a group of that many dims
                if i[0] == "group" and i[2] is None and self.kinds.get(i[1]) == "ints":
                    lengths[i[1]] = len(self.env[i[1]])
            free = [i[1] for i in items if i[0] == "group" and i[2] is None and i[1] not in lengths]
            need = fixed + sum(lengths.values())
            if free:
                if rank < need:
                    _fail(self.op, f"'{t.label}' must have at least {need} dims to match {text}, got {rank}")
                lengths[free[0]] = rank - need
            elif rank != need:
                _fail(self.op, f"'{t.label}' must have {need} dims to match {text}, got {rank}")
            dims = t.dims()
            at, after = 0, False
            for i in items:
                index = at - rank if after else at
                if i[0] == "any":
                    at += 1
                elif i[0] == "literal":
                    if t.shape[at] != i[1]:
                        _fail(
                            self.op,
                            f"{t.label}.size({index})={t.shape[at]} must equal {i[1]} (pattern {text})",
                        )
                    at += 1
                elif i[0] == "dim":
                    name, per_element = i[1], i[2]
                    site = f"{t.label}.size({index})"
                    if per_element:
                        self.env.setdefault(name, []).append(dims[at])
                    else:
                        self.bind(name, dims[at], site)
                    at += 1
                else:
                    n = lengths[i[1]]
                    end = index + n
                    site = f"{t.label}.shape[{index}:{'' if after and end == 0 else end}]"
                    if self.kinds.get(i[1]) == "ints":
                        want, got = [int(v) for v in self.env[i[1]]], list(t.shape[at : at + n])
                        if want != got:
                            _fail(self.op, f"{i[1]}={want} must equal {site}={got} (group *{i[1]})")
                    else:
                        self.bind(i[1], dims[at : at + n], site)
                    at += n
                    after = after or (i[2] is None and i[1] not in self.kinds)

    def bind(self, name: str, value, site: str) -> None:
        if name not in self.env:
            self.env[name] = value
            self.sites[name] = site
            if isinstance(value, Dim):
                value.name = name
            return
        bound = self.env[name]
        if isinstance(value, Dim):
            if bound.size != value.size:
                _fail(self.op, f"{self.sites[name]}={bound.size} must equal {site}={value.size} (dim {name})")
            bound.origins.extend(value.origins)
        else:
            if [d.size for d in bound] != [d.size for d in value]:
                _fail(
                    self.op,
                    f"{self.sites[name]}={[d.size for d in bound]} must equal {site}="
                    f"{[d.size for d in value]} (group *{name})",
                )
            for b, v in zip(bound, value):
                b.origins.extend(v.origins)

    # -- expressions ---------------------------------------------------------------------------

    @staticmethod
    def int_value(v) -> int:
        return v.size if isinstance(v, Dim) else int(v)

    def expr(self, e: tuple):
        tag = e[0]
        if tag == "num":
            return e[1]
        if tag == "name":
            if e[1] in ("True", "False"):
                return e[1] == "True"
            return self.env[e[1]]
        if tag == "list":
            out: list[Dim] = []
            for item in e[1]:
                if item[0] == "star":
                    v = self.expr(item[1])
                    out.extend(v.dims() if isinstance(v, TensorInfo) else v)
                else:
                    v = self.expr(item)
                    out.append(v if isinstance(v, Dim) else Dim(int(v)))
            return out
        if tag == "if":
            return self.expr(e[2]) if self.expr(e[1]) else self.expr(e[3])
        if tag == "unary":
            v = self.expr(e[2])
            return (not v) if e[1] == "not" else Dim(-self.int_value(v))
        if tag == "binop":
            op = e[1]
            if op in ("and", "or"):
                a = self.expr(e[2])
                return (a and self.expr(e[3])) if op == "and" else (a or self.expr(e[3]))
            lv, rv = self.expr(e[2]), self.expr(e[3])
            if op in ("==", "!=") and isinstance(lv, list) and isinstance(rv, list):  # two shapes
                same = [self.int_value(x) for x in lv] == [self.int_value(x) for x in rv]
                return same if op == "==" else not same
            a, b = self.int_value(lv), self.int_value(rv)
            result = {
                "+": lambda: a + b,
                "-": lambda: a - b,
                "*": lambda: a * b,
                "//": lambda: _floordiv(self.op, a, b),
                "%": lambda: _mod(self.op, a, b),
                "==": lambda: a == b,
                "!=": lambda: a != b,
                "<": lambda: a < b,
                "<=": lambda: a <= b,
                ">": lambda: a > b,
                ">=": lambda: a >= b,
            }[op]()
            return result if isinstance(result, bool) else Dim(result)
        return self.call(e[1], [self.expr(a) for a in e[2]], e[2], dict(e[3]))

    def call(self, fn: str, args: list, src: tuple, kwargs: dict):
        op = self.op
        if fn == "given":
            return args[0] is not None
        if fn == "broadcast":
            # An absent Tensor? broadcasts as a 0-dim tensor (mirrors the C++ lowering).
            named = [
                (a.label, a.dims())
                if isinstance(a, TensorInfo)
                else (f"*{s[1]}" if s[0] == "name" else "[...]", a)
                for a, s in zip(args, src)
                if a is not None
            ]
            return _broadcast(op, named)
        if fn in ("reduce", "dims"):
            t, dim = args[0], args[1]
            if kwargs.get("empty", ("name", "ALL"))[1] == "NONE" and dim is not None and not _dim_list(dim):
                return t.dims() if fn == "reduce" else []  # torch.all(x, dim=[]) reduces nothing
            reduced = _reduced_dims(op, t.label, len(t.shape), _dim_list(dim))
            if fn == "dims":
                return reduced
            keepdim = args[2]
            dims = t.dims()
            self.reduced.extend(dims[i] for i in reduced)
            return (
                [d for i, d in enumerate(dims) if i not in reduced]
                if not keepdim
                else [Dim(1) if i in reduced else d for i, d in enumerate(dims)]
            )
        if fn == "matmul":
            out, k = _matmul(op, args[0], args[1])
            self.reduced.append(k)
            return out
        if fn == "cat":
            return _cat(op, args[0], self.int_value(args[1]))
        if fn == "stack":
            return _stack(op, args[0], self.int_value(args[1]))
        if fn == "split":
            return _split(
                op, args[0], src[1][1], [self.int_value(s) for s in args[1]], self.int_value(args[2])
            )
        if fn == "index":
            src_t, dim, idx = args
            rank = len(src_t.shape)
            d = _wrap(op, src_t.label, self.int_value(dim), rank)
            dims = src_t.dims()
            return dims[:d] + idx.dims() + dims[d + 1 :]
        if fn == "window":
            n, k, s, p, d = (self.int_value(a) for a in args[:5])
            return Dim(_window(op, n, k, s, p, d, args[5]))
        if fn == "len":
            return Dim(len(args[0]))
        if fn == "ndim":
            return Dim(len(args[0].shape))
        if fn == "numel":
            return Dim(math.prod(args[0].shape))
        if fn == "item":
            return Dim(
                _item(
                    op,
                    src[0][1] if src[0][0] == "name" else str(src[0]),
                    [self.int_value(x) for x in args[0]],
                    self.int_value(args[1]),
                )
            )
        if fn == "sum":
            return _concat_dim(args[0])
        if fn == "ones":
            return [Dim(1) for _ in range(max(self.int_value(args[0]), 0))]
        if fn in ("max", "min"):
            a, b = self.int_value(args[0]), self.int_value(args[1])
            return Dim(max(a, b) if fn == "max" else min(a, b))
        raise NotImplementedError(fn)

    def dtype(self, e: tuple) -> tuple[torch.dtype, torch.dtype]:
        if e[0] == "if":
            return self.dtype(e[2]) if self.expr(e[1]) else self.dtype(e[3])
        if e[0] == "binop" and e[1] == "or":
            v = self.env[e[2][1]]
            return (v, _opmath(v)) if v is not None else self.dtype(e[3])
        if e[0] == "name":
            v = self.env.get(e[1])
            if isinstance(v, TensorInfo):
                return v.dtype, _opmath(v.dtype)
            if isinstance(v, torch.dtype):
                return v, _opmath(v)
            d = DTYPE_NAMES[e[1]]
            return d, _opmath(d)
        fn, args, kwargs = e[1], e[2], dict(e[3])
        if fn == "promote":
            tensors, scalars = [], []
            for a in args:
                v = self.env[a[1]]
                if isinstance(v, TensorInfo):
                    tensors.append(v)
                elif isinstance(v, list):
                    tensors.extend(v)
                elif v is not None:  # a None Scalar? takes no part
                    scalars.append(v)
            kind = kwargs.get("kind", ("name", "DEFAULT"))[1]
            p = _promote(tensors, scalars)
            self.promoted = p if self.promoted is None else self.promoted
            if kind == "NO_OPMATH":
                return p, p
            if kind == "INT_TO_FLOAT" and not (p.is_floating_point or p.is_complex):
                f = torch.get_default_dtype()
                return f, _opmath(f)
            if kind == "ALWAYS_BOOL":
                return torch.bool, _opmath(p)
            if kind == "COMPLEX_TO_FLOAT" and p.is_complex:
                return p.to_real(), _opmath(p)
            if kind == "BOOL_TO_LONG" and p == torch.bool:
                return torch.int64, torch.int64
            return p, _opmath(p)
        # reduction(t, [dtype], kind=...)
        t = self.env[args[0][1]]
        override = self.env[args[1][1]] if len(args) > 1 else None
        kind = kwargs.get("kind", ("name", "SUM"))[1]
        if override is not None and kind not in ("BOOL", "LONG"):
            return override, _opmath(override)
        x = t.dtype
        if kind == "SUM":
            r = torch.int64 if not (x.is_floating_point or x.is_complex) else x
        elif kind == "FLOAT":
            if not (x.is_floating_point or x.is_complex):
                _fail(
                    self.op,
                    f"could not infer the output dtype: '{t.label}' must have a floating point or complex "
                    f"dtype, got {C10_NAMES[x]}; pass dtype= to choose one",
                )
            r = x
        elif kind == "BOOL":
            r = torch.uint8 if x == torch.uint8 else torch.bool
        elif kind == "LONG":
            return torch.int64, x
        else:
            r = x
        return r, _opmath(r)

    def run(self) -> Result:
        for arg, kind, pattern, text in self.rule["inputs"]:
            self.pattern(arg, kind, pattern, text)
        outputs = []
        lists = self.rule.get("list_outputs", ())
        for name, shape, dtype, layout in self.rule["outputs"]:
            v = self.expr(shape)
            if name in lists:  # one shape per element, each contiguous: outputs out[0], out[1], ...
                result, compute = self.dtype(dtype)
                for i, dims in enumerate(v):
                    outputs.append(
                        (f"{name}[{i}]", dims, result, compute, _contiguous([d.size for d in dims]))
                    )
                self.env[name] = result
                continue
            dims = v.dims() if isinstance(v, TensorInfo) else v
            result, compute = self.dtype(dtype)
            strides = _contiguous([d.size for d in dims])
            if layout is not None:
                strides = _elementwise_strides([d.size for d in dims], [self.env[a[1]] for a in layout[2]])
            outputs.append((name, dims, result, compute, strides))
            self.env[name] = result
        promoted = self.rule.get("promoted", ())
        for arg, allowed in self.rule["allowed"]:
            if arg is None and promoted:
                self.check_allowed_promoted(promoted, allowed)
            names = [
                n
                for n, k in self.rule["args"]
                if k in ("tensor", "tensors", "tensor?")
                and (arg is None or n == arg)
                and not (arg is None and n in promoted)
            ]
            for n in names:
                given = self.env[n] if isinstance(self.env[n], list) else [self.env[n]]
                for t in (t for t in given if t is not None):
                    if str(t.dtype).removeprefix("torch.") not in allowed:
                        _fail(
                            self.op,
                            f"'{n}' has dtype {C10_NAMES[t.dtype]}, which {self.op} does not support "
                            f"(supported: {', '.join(allowed)})",
                        )
        for check, text in self.rule["checks"]:
            self.check(check, text)
        return Result(self.op, outputs, self.inputs, self.rule["combine"], self.reduced, self.env)

    def check_allowed_promoted(self, names: tuple[str, ...], allowed: tuple[str, ...]) -> None:
        """`allowed` on the promoted dtype of a promote()'s tensors (mirrors rules::check_allowed_promoted)."""
        p = self.promoted
        if str(p).removeprefix("torch.") in allowed:
            return
        for n in names:
            if self.env[n].dtype == p:
                _fail(
                    self.op,
                    f"'{n}' has dtype {C10_NAMES[p]}, which {self.op} does not support "
                    f"(supported: {', '.join(allowed)})",
                )
        inputs = ", ".join(f"'{n}' ({C10_NAMES[self.env[n].dtype]})" for n in names)
        _fail(
            self.op,
            f"{inputs} promote to {C10_NAMES[p]}, which {self.op} does not support "
            f"(supported: {', '.join(allowed)})",
        )

    def check(self, e: tuple, text: str) -> None:
        if e[0] == "call" and e[1] == "alpha_check":
            _check_alpha(self.op, self.env[e[2][1][1]], self.env[e[2][0][1]])
        elif e[0] == "call" and e[1] == "integer_power_check":
            _check_integer_power(self.op, self.env[e[2][1][1]], self.env[e[2][0][1]])
        elif e[0] == "call" and e[1] == "nonempty":
            t = self.env[e[2][0][1]]
            for d in _reduced_dims(self.op, t.label, len(t.shape), _dim_list(self.expr(e[2][1]))):
                if t.shape[d] == 0:
                    _fail(
                        self.op,
                        f"cannot reduce over dim {d} of '{t.label}', which has size 0: "
                        f"{self.op} of no elements is undefined",
                        index=True,
                    )
        elif e[0] == "call" and e[1] == "norm_nonempty":
            p, t = self.env[e[2][0][1]], self.env[e[2][1][1]]
            order = 2.0 if p is None else float(p)
            if order < 0 or math.isinf(order):
                for d in _reduced_dims(self.op, t.label, len(t.shape), _dim_list(self.expr(e[2][2]))):
                    if t.shape[d] == 0:
                        _fail(
                            self.op,
                            f"cannot compute the {order:g} norm over dim {d} of '{t.label}', which has "
                            "size 0: that norm has no identity",
                        )
        elif e[0] == "call" and e[1] == "same_dtype":
            first = self.env[e[2][0][1]]
            promote_zero_dim = dict(e[3]).get("zero_dim", ("name", "EXACT"))[1] == "PROMOTE"
            for a in e[2]:
                t = self.env[a[1]]
                if t is not None and promote_zero_dim and t is not first and len(t.shape) == 0:
                    continue
                if t is not None and t.dtype != first.dtype:
                    _fail(
                        self.op,
                        f"'{t.name}' has dtype {C10_NAMES[t.dtype]} but '{first.name}' has "
                        f"{C10_NAMES[first.dtype]}; they must have the same dtype",
                    )
        elif not self.expr(e):
            names = dict.fromkeys(_names(e))
            values = "".join(f" {n}={self.env[n].size}" for n in names if isinstance(self.env.get(n), Dim))
            _fail(self.op, f"rule '{text}' does not hold{values}")


def _floordiv(op: str, a: int, b: int) -> int:
    if b == 0:
        _fail(op, f"division by zero in a shape rule ({a} // {b})")
    return a // b


def _item(op: str, name: str, values: list[int], i: int) -> int:
    """values[i] with Python's negative indices (mirrors rules::item)."""
    if not -len(values) <= i < len(values):
        _fail(op, f"index {i} is out of range for '{name}' with {len(values)} elements", index=True)
    return values[i]


def _mod(op: str, a: int, b: int) -> int:
    if b == 0:
        _fail(op, f"division by zero in a shape rule ({a} % {b})")
    return a % b


def _names(e: tuple) -> list[str]:
    if e[0] == "name":
        return [e[1]]
    if e[0] == "binop":
        return _names(e[2]) + _names(e[3])
    if e[0] == "unary":
        return _names(e[2])
    if e[0] == "if":
        return _names(e[1]) + _names(e[2]) + _names(e[3])
    if e[0] == "call":
        return [n for a in e[2] for n in _names(a)]
    if e[0] == "list":
        return [n for it in e[1] for n in _names(it[1] if it[0] == "star" else it)]
    return []


def _check_alpha(op: str, dtype: torch.dtype, alpha) -> None:
    """PyTorch's alpha rules for add/sub (mirrors rules::check_alpha)."""
    if isinstance(alpha, bool) and dtype != torch.bool:
        _fail(
            op,
            f"a boolean alpha is only supported for bool results, got alpha={int(alpha)} with result type "
            f"{C10_NAMES[dtype]}",
        )
    if not (dtype.is_floating_point or dtype.is_complex) and isinstance(alpha, float | complex):
        _fail(
            op,
            f"for integral inputs alpha must not be a floating point number, got alpha={alpha} with result "
            f"type {C10_NAMES[dtype]}",
        )
    if not dtype.is_complex and isinstance(alpha, complex):
        _fail(op, f"for non-complex inputs alpha must not be complex, got alpha={alpha}")


def _check_integer_power(op: str, dtype: torch.dtype, exponent) -> None:
    """pow with a Scalar exponent (mirrors rules::check_integer_power)."""
    integral = not (dtype.is_floating_point or dtype.is_complex)
    if integral and isinstance(exponent, int) and not isinstance(exponent, bool) and exponent < 0:
        _fail(
            op,
            f"integers to negative integer powers are not allowed, got exponent={exponent} with result type "
            f"{C10_NAMES[dtype]}",
        )


# ---------------------------------------------------------------------------------------------
# Builtins (mirrors of csrc/rules.cpp)


def _wrap(op: str, name: str, dim: int, rank: int) -> int:
    r = max(rank, 1)
    if not -r <= dim < r:
        _fail(
            op,
            f"dim {dim} is out of range for '{name}' with {rank} dims (expected to be in range of "
            f"[{-r}, {r - 1}])",
            index=True,
        )
    return dim + r if dim < 0 else dim


def _dim_list(dim) -> list[int] | None:
    if dim is None:
        return None
    if isinstance(dim, Dim | int):
        return [int(dim.size if isinstance(dim, Dim) else dim)]
    return [d.size if isinstance(d, Dim) else int(d) for d in dim]


def _reduced_dims(op: str, name: str, rank: int, dim: list[int] | None) -> list[int]:
    if not dim:
        return list(range(rank))
    seen: set[int] = set()
    for d in dim:
        w = _wrap(op, name, d, rank)
        if w in seen:
            _fail(op, f"dim {w} appears multiple times in the list of dims")
        seen.add(w)
    return sorted(seen) if rank > 0 else []


def _broadcast(op: str, named: list[tuple[str, list[Dim]]]) -> list[Dim]:
    ndim = max((len(d) for _, d in named), default=0)
    out = [Dim(1) for _ in range(ndim)]
    owner = [""] * ndim
    for name, dims in named:
        offset = ndim - len(dims)
        for i, d in enumerate(dims):
            o = out[offset + i]
            if d.size == 1:
                continue
            if o.size == 1:
                out[offset + i] = Dim(d.size, list(d.origins), d.name)
                owner[offset + i] = name
            elif d.size != o.size:
                shapes = ", ".join(f"{n}={[x.size for x in ds]}" for n, ds in named)
                _fail(
                    op,
                    f"the size of '{name}' ({d.size}) must match the size of '{owner[offset + i]}' ({o.size}) "
                    f"at non-singleton dimension {offset + i - ndim}; shapes: {shapes}",
                )
            else:
                o.origins.extend(d.origins)
    return out


def _matmul(op: str, a: TensorInfo, b: TensorInfo) -> tuple[list[Dim], Dim]:
    """The output dims, and k (read by both operands, in no output)."""
    if not a.shape or not b.shape:
        _fail(
            op,
            f"both arguments need at least 1 dim, but '{a.label}' has {len(a.shape)} and '{b.label}' has "
            f"{len(b.shape)}",
        )
    da, db = a.dims(), b.dims()
    kb = 0 if len(db) == 1 else len(db) - 2
    if da[-1].size != db[kb].size:
        _fail(
            op,
            f"{a.label}.size(-1)={da[-1].size} must equal {b.label}.size({-1 if len(db) == 1 else -2})="
            f"{db[kb].size} (dim k)",
        )
    k = Dim(da[-1].size, da[-1].origins + db[kb].origins, "k")
    batch = _broadcast(op, [(a.label, da[:-2]), (b.label, db[:-2])])
    out = batch + ([da[-2]] if len(da) >= 2 else []) + ([db[-1]] if len(db) >= 2 else [])
    if len(da) >= 2:
        da[-2].name = "n"
    if len(db) >= 2:
        db[-1].name = "m"
    return out, k


def _concat_dim(dims: list[Dim]) -> Dim:
    """sum(c) over per-element dims: one dim whose elements sit at growing offsets."""
    total, origins = 0, []
    for d in dims:
        origins.extend(
            Origin(o.tensor, o.element, o.axis, o.stride, o.offset - total, o.extent) for o in d.origins
        )
        total += d.size
    return Dim(total, origins)


def _cat(op: str, tensors: list[TensorInfo], dim: int) -> list[Dim]:
    if not tensors:
        _fail(op, "'tensors' must be a non-empty list of tensors")
    used = [t for t in tensors if not (len(t.shape) == 1 and t.shape[0] == 0)]
    if not used:
        return tensors[0].dims()
    first = used[0]
    if not first.shape:
        _fail(op, f"zero-dimensional tensor ({first.label}) cannot be concatenated")
    d = _wrap(op, first.label, dim, len(first.shape))
    out = first.dims()
    for t in used[1:]:
        if len(t.shape) != len(first.shape):
            _fail(op, f"{t.label} must have {len(first.shape)} dims like {first.label}, got {len(t.shape)}")
        for j, (x, o) in enumerate(zip(t.dims(), out)):
            if j == d:
                continue
            if x.size != o.size:
                _fail(
                    op,
                    f"{first.label}.size({j})={o.size} must equal {t.label}.size({j})={x.size} "
                    "(dim that is not the cat dim)",
                )
            o.origins.extend(x.origins)
    out[d] = _concat_dim([t.dims()[d] for t in used])
    return out


def _stack(op: str, tensors: list[TensorInfo], dim: int) -> list[Dim]:
    if not tensors:
        _fail(op, "'tensors' must be a non-empty list of tensors")
    first = tensors[0]
    d = _wrap(op, "the result", dim, len(first.shape) + 1)
    out = first.dims()
    for t in tensors[1:]:
        if len(t.shape) != len(first.shape):
            _fail(op, f"{t.label} must have {len(first.shape)} dims like {first.label}, got {len(t.shape)}")
        if t.shape != first.shape:
            _fail(
                op,
                f"{first.label}.shape[0:{len(first.shape)}]={list(first.shape)} must equal "
                f"{t.label}.shape[0:{len(t.shape)}]={list(t.shape)} (group *(every dim))",
            )
        for x, o in zip(t.dims(), out):
            o.origins.extend(x.origins)
    selector = Dim(len(tensors), [Origin(t.name, t.element, None, 1, -i) for i, t in enumerate(tensors)])
    return out[:d] + [selector] + out[d:]


def _split(op: str, t: TensorInfo, sizes_name: str, sizes: list[int], dim: int) -> list[list[Dim]]:
    """split(t, sizes, dim): piece i is t with dim `dim` of size sizes[i], read at a growing offset."""
    if not t.shape:
        _fail(op, f"'{t.label}' must have at least 1 dim to be split, got 0")
    d = _wrap(op, t.label, dim, len(t.shape))
    if any(s < 0 for s in sizes):
        _fail(op, f"'{sizes_name}' must have only non-negative entries, got {sizes_name}={sizes}")
    if sum(sizes) != t.shape[d]:
        _fail(
            op,
            f"'{sizes_name}' must sum to {t.label}.size({d})={t.shape[d]}, got {sizes_name}={sizes} "
            f"(sum {sum(sizes)})",
        )
    pieces, offset = [], 0
    for s in sizes:
        dims = t.dims()
        dims[d] = Dim(s, [Origin(t.name, t.element, d, 1, offset, 1)])
        pieces.append(dims)
        offset += s
    return pieces


def _window(op: str, n: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    if not (k > 0 and s > 0 and d > 0 and p >= 0):
        _fail(
            op,
            f"window needs kernel, stride and dilation > 0 and padding >= 0, got kernel={k}, stride={s}, "
            f"dilation={d}, padding={p}",
        )
    room = n + 2 * p - (d * (k - 1) + 1)
    if room < 0:
        _fail(
            op,
            f"the window (kernel={k}, dilation={d}, padding={p}) does not fit an input of size {n}: "
            "output size would be < 1",
        )
    out = (room + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _contiguous(shape: list[int]) -> tuple[int, ...]:
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def _elementwise_strides(shape: list[int], inputs: list[TensorInfo]) -> tuple[int, ...]:
    """TensorIterator's output layout (mirrors csrc/elementwise.cpp)."""
    ndim = len(shape)
    contiguous = _contiguous(shape)
    if ndim == 0:
        return ()

    def is_contiguous(t: TensorInfo) -> bool:
        if 0 in t.shape:
            return True  # as torch says of empty tensors
        return all(sz == 1 or st == c for sz, st, c in zip(t.shape, t.stride, _contiguous(list(t.shape))))

    if all(list(t.shape) == shape for t in inputs):
        if all(is_contiguous(t) for t in inputs):
            return contiguous
        if ndim == 4 and all(_channels_last(t) for t in inputs):
            _, c, h, w = shape
            return (h * w * c, 1, w * c, c)
        dense = all(_dense(t) for t in inputs)
        if dense and all(t.stride == inputs[0].stride for t in inputs):
            return inputs[0].stride
    strides = []
    for t in inputs:
        off = ndim - len(t.shape)
        s = [0] * ndim
        for i, (sz, st) in enumerate(zip(t.shape, t.stride)):
            if not (sz == 1 and shape[off + i] != 1):
                s[off + i] = st
        strides.append(s)
    perm = list(range(ndim - 1, -1, -1))

    def should_swap(d0: int, d1: int) -> int:
        for s in strides:
            if s[d0] == 0 or s[d1] == 0:
                continue
            if s[d0] < s[d1]:
                return -1
            if s[d0] > s[d1]:
                return 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    for i in range(1, ndim):
        dim1 = i  # insertion sort, as TensorIterator does
        for dim0 in range(i - 1, -1, -1):
            cmp = should_swap(perm[dim0], perm[dim1])
            if cmp > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif cmp < 0:
                break
    if perm == list(range(ndim - 1, -1, -1)):
        return contiguous
    out = [0] * ndim
    acc = 1
    for j in range(ndim):
        out[perm[j]] = acc
        acc *= shape[perm[j]]
    return tuple(out)


def _channels_last(t: TensorInfo) -> bool:
    if len(t.shape) != 4:
        return False
    _, c, h, w = t.shape
    expected = (h * w * c, 1, w * c, c)
    return all(sz == 1 or st == e for sz, st, e in zip(t.shape, t.stride, expected))


def _dense(t: TensorInfo) -> bool:
    pairs = sorted((st, sz) for sz, st in zip(t.shape, t.stride) if sz != 1)
    acc = 1
    for st, sz in pairs:
        if st != acc:
            return False
        acc *= sz
    return True


# ---------------------------------------------------------------------------------------------
# Public API


def _bind(op_name: str, args: tuple, kwargs: dict) -> tuple[dict, dict[str, Any]]:
    """The op's rule and its argument values by name (defaults from the registered schema)."""
    name = _rules.OVERLOADS.get(op_name) or _rules.OVERLOADS.get(f"{op_name}.default")
    if name is None:
        for rule_name, rule in _rules.RULES.items():
            if rule["op"] == op_name and rule["functional"]:
                name = rule_name
                break
    if name is None:
        raise ValueError(
            f"structops has no op with a meta rule called '{op_name}'; "
            f"known: {', '.join(sorted(r['op'] for r in _rules.RULES.values()))}"
        )
    rule = _rules.RULES[name]
    packet, overload = rule["functional"].split(".")
    schema = getattr(getattr(torch.ops.structops, packet), overload)._schema
    values: dict[str, Any] = {}
    positional = list(args)
    for a in schema.arguments:
        if positional and not a.kwarg_only:
            values[a.name] = positional.pop(0)
        elif a.name in kwargs:
            values[a.name] = kwargs[a.name]
        elif a.has_default_value():
            values[a.name] = a.default_value
        else:
            raise TypeError(f"{op_name}: missing argument '{a.name}'")
    if positional:
        raise TypeError(f"{op_name}: too many positional arguments")
    return rule, values


def evaluate(op: str, *args, **kwargs) -> Result:
    rule, values = _bind(op, args, kwargs)
    return _Eval(rule, values).run()


@dataclass(frozen=True)
class IndexDim:
    name: str
    size: int
    kind: str  # parallel | reduction

    def to_json(self) -> dict:
        return {"name": self.name, "size": self.size, "kind": self.kind}


@dataclass(frozen=True)
class IPF:
    """Region of ``tensor`` for a box [lo, hi) of the index space: per tensor axis a,
    start = sum_j matrix[a][j] * lo[j] + offset[a], stop = sum_j matrix[a][j] * (hi[j] - 1) + offset[a] + tile[a],
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
    outputs: tuple[tuple[str, tuple[int, ...], str, tuple[int, ...]], ...]  # name, shape, dtype, strides
    index_space: tuple[IndexDim, ...]
    ipfs: tuple[IPF, ...]
    combine: str | None

    def to_json(self) -> dict:
        return {
            "op": self.op,
            "outputs": [
                {"name": n, "shape": list(s), "dtype": d, "strides": list(st)} for n, s, d, st in self.outputs
            ],
            "index_space": [d.to_json() for d in self.index_space],
            "ipfs": [i.to_json() for i in self.ipfs],
            "combine": self.combine,
        }

    def __str__(self) -> str:
        lines = [f"{self.op}:"]
        for n, s, d, st in self.outputs:
            lines.append(f"  output {n}: shape {list(s)}, {d}, strides {list(st)}")
        space = ", ".join(
            f"{d.name}={d.size}{' (reduced)' if d.kind == 'reduction' else ''}" for d in self.index_space
        )
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
        return "\n".join(lines)

    def json(self) -> str:
        return json.dumps(self.to_json())


def describe(op: str, *args, **kwargs) -> Description:
    """Output shapes/dtypes/strides, the index space and each tensor's IPF for one call."""
    result = evaluate(op, *args, **kwargs)
    outputs = tuple(
        (n, tuple(d.size for d in dims), str(dt).removeprefix("torch."), st)
        for n, dims, dt, _, st in result.outputs
    )
    rule, _ = _bind(op, args, kwargs)
    if rule.get("list_outputs"):
        # One index space per element of a Tensor[] output is not modelled yet: outputs only.
        return Description(result.op, outputs, (), (), result.combine)
    name, out_dims, *_ = result.outputs[0]
    space: list[Dim] = list(out_dims)
    kinds = ["parallel"] * len(space)
    if result.combine is not None:
        # Input dims that no output has are reduced; split them and the combine merges partials.
        seen = {id(d) for d in space}
        candidates = list(result.reduced)
        for inp in result.inputs.values():
            for t in inp if isinstance(inp, list) else [inp]:
                for a, size in enumerate(t.shape):
                    candidates.append(_owner(result, t, a))
        for d in candidates:
            if d is not None and id(d) not in seen and d.size != 1:
                seen.add(id(d))
                space.append(d)
                kinds.append("reduction")
    index = []
    used: set[str] = set()
    for j, (d, kind) in enumerate(zip(space, kinds)):
        base = d.name or (f"r{j}" if kind == "reduction" else f"d{j}")
        n = base if base not in used else f"{base}{j}"
        used.add(n)
        index.append(IndexDim(n, d.size, kind))
    ipfs = []
    for inp in result.inputs.values():
        for t in inp if isinstance(inp, list) else [inp]:
            ipfs.append(_ipf(t, space))
    # The output: axis a is index dim a (a size-1 keepdim axis is its own size-1 index dim).
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
    return Description(result.op, outputs, tuple(index), tuple(ipfs), result.combine)


def _owner(result: Result, t: TensorInfo, axis: int) -> Dim | None:
    """The dim object an input axis was bound to, found through the environment."""
    for v in result.env.values():
        for d in v if isinstance(v, list) else [v]:
            if isinstance(d, Dim) and any(
                o.tensor == t.name and o.element == t.element and o.axis == axis for o in d.origins
            ):
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
