"""The pointwise formula language in torch: what a generated backward op's reference
(codegen/pointwise/python.py prints it) calls as ``pw.<name>``, and ``precise``, which runs such a
reference in double precision.

Each name means what the kernels' pw:: function means (csrc/include/structgen/pointwise/math.h):
ATen's function of the same name, a number on either side of a tensor.
"""

from __future__ import annotations

import functools
import types

import torch


def _tensor(x):
    """A tensor as it is; a Python number as a 0-dim float64 (complex128, bool) tensor: as torch's
    wrapped numbers, it keeps double precision (log(2) in float32, torch's default dtype, is off
    by 2.6e-9) and does not change a tensor's dtype when it meets one."""
    if isinstance(x, torch.Tensor):
        return x
    if isinstance(x, bool):
        return torch.as_tensor(x)
    return torch.as_tensor(x, dtype=torch.complex128 if isinstance(x, complex) else torch.float64)


def _where(cond, then, otherwise):
    if isinstance(cond, bool):  # decided by a non-tensor argument (approximate == "tanh")
        return then if cond else otherwise
    # numbers as float64 0-dim tensors: two Python numbers would give torch's default dtype, float32
    return torch.where(cond, _tensor(then), _tensor(otherwise))


def _select(arg, *cases):
    for value, branch in zip(cases[::2], cases[1::2], strict=True):
        if arg == value:
            return branch
    raise ValueError(f"select(): {arg!r} is none of {cases[::2]}")


def _extremum(tensor_op, bound_op):
    def apply(a, b):
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
            return tensor_op(a, b)
        return bound_op(a, b) if isinstance(a, torch.Tensor) else bound_op(b, a)

    return apply


def _nonneg_real(x):
    x = _tensor(x)
    return (x.real >= 0) & (x.imag == 0) if x.is_complex() else x >= 0


def _logical(op):
    def apply(a, b):
        if isinstance(a, bool) and isinstance(b, bool):
            return (a and b) if op is torch.logical_and else (a or b)
        # A number goes where the tensor is: torch's logical ops take no CPU scalar with CUDA.
        device = (a if isinstance(a, torch.Tensor) else b).device
        return op(torch.as_tensor(a, device=device), torch.as_tensor(b, device=device))

    return apply


_UNARY = (
    *("exp", "exp2", "expm1", "log", "log2", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh"),
    *("sigmoid", "erf", "erfc", "abs", "sign", "floor", "ceil", "round", "trunc", "isnan", "isinf"),
)


def _unary(f):
    return lambda x: f(_tensor(x))


pw = types.SimpleNamespace(
    **{name: _unary(getattr(torch, name)) for name in _UNARY},
    normcdf=_unary(torch.special.ndtr),
    conj=lambda x: torch.conj(x).resolve_conj() if isinstance(x, torch.Tensor) else x.conjugate(),
    pow=lambda a, b: torch.pow(a, b),
    pow_scalar=lambda a, b: torch.pow(a, b),
    max=_extremum(torch.maximum, torch.clamp_min),
    min=_extremum(torch.minimum, torch.clamp_max),
    fma=lambda a, b, c: a * b + c,
    trunc_div=lambda a, b: torch.div(a, b, rounding_mode="trunc"),
    nonneg_real=_nonneg_real,
    where=_where,
    clamp=lambda x, lo, hi: torch.clamp(x, lo, hi),
    bool=lambda x: x != 0,
    select=_select,
    logical_and=_logical(torch.logical_and),
    logical_or=_logical(torch.logical_or),
    logical_not=lambda x: (not x) if isinstance(x, bool) else torch.logical_not(x),
    invert=lambda x: ~x,
    floor_div=lambda a, b: torch.floor_divide(a, b),
    remainder=lambda a, b: torch.remainder(a, b),
)


def _layout(tensors: list[torch.Tensor]) -> torch.Tensor:
    """A meta tensor of the shape and strides a pointwise kernel over ``tensors`` (in argument
    order) gives its output: torch's ops of as many inputs decide them the same way."""
    metas = [torch.empty_strided(t.shape, t.stride(), dtype=torch.float32, device="meta") for t in tensors]
    return {1: torch.neg, 2: torch.add, 3: torch.addcmul}[len(metas)](*metas)


_OPMATH = {torch.float16: torch.float32, torch.bfloat16: torch.float32}


def precise(fn, floating: tuple[str, ...], *, in_opmath: bool = False):
    """``fn`` (a formula over named arguments) as the reference of a kernel that computes it in
    one pass, as a TensorIterator kernel does: the inputs in ``floating`` cast to their promoted
    dtype (the op's dtype rule), then the formula in float64 (complex128), rounded once into an
    output of the shape and strides of all its tensors broadcast. Like the generated op, it
    refuses a tensor in ``floating`` that is not floating or complex. Its ``in_opmath`` twin
    computes in the promoted dtype's opmath type instead (float for float16 and bfloat16), as
    torch would: what the formula itself gives in that precision, which the hostile check
    allows a kernel to be as far off as (``1 - r * r`` near r = 1 loses digits in any float)."""
    names = fn.__code__.co_varnames[: fn.__code__.co_argcount]

    def reference(*args, **kwargs):
        named = dict(zip(names, args, strict=False)) | kwargs
        for name in floating:
            x = named[name]
            if not (x.is_floating_point() or x.is_complex()):
                raise RuntimeError(f"'{name}' has dtype {x.dtype}: the kernel takes floating or complex")
        dtype = functools.reduce(torch.add, [named[n].to("meta") for n in floating]).dtype
        if in_opmath:
            wide = _OPMATH.get(dtype, dtype)
        else:
            wide = torch.complex128 if dtype.is_complex else torch.float64
        values = fn(**{k: v.to(dtype).to(wide) if k in floating else v for k, v in named.items()})
        layout = _layout([named[n] for n in names if isinstance(named[n], torch.Tensor)])
        out = torch.empty_strided(
            layout.shape, layout.stride(), dtype=dtype, device=named[floating[0]].device
        )
        return out.copy_(values)

    if not in_opmath:
        reference.in_opmath = precise(fn, floating, in_opmath=True)
    return reference
