"""The pointwise formula language in torch: what ``pw.<name>`` means in a formula printed as Python
(codegen/pointwise/python.py). Two users: the conformance suite's references, which compute in
float64 (structgen/conformance/formula.py), and Inductor's lowering of a formula op
(structgen/lowering.py), which computes in the op's compute dtype.

Each name means what the kernels' pw:: function means (csrc/include/structgen/pointwise/math.h):
ATen's function of the same name, a number on either side of a tensor.
"""

from __future__ import annotations

import math
import types

import torch


def namespace(real: torch.dtype = torch.float64, device=None) -> types.SimpleNamespace:
    """The ``pw`` functions, turning a Python number into a 0-dim tensor of the formula's precision
    ``real`` (its complex counterpart for a complex number) on ``device``: as torch's wrapped
    numbers, it does not change a tensor's dtype when it meets one, and keeps the precision the
    formula computes in (log(2) in float32, torch's default dtype, is off by 2.6e-9 from float64's).
    Where ``real`` is an integer dtype, an integer stays int64 and a float float64, as torch's
    wrapped numbers promote."""
    floating = real.is_floating_point or real.is_complex
    complex_of = {torch.float64: torch.complex128, torch.float32: torch.complex64}

    def _tensor(x):
        """A number (a symbolic one under torch.compile's dynamic shapes too) as a 0-dim tensor."""
        if isinstance(x, torch.Tensor):
            return x
        if isinstance(x, bool | torch.SymBool):
            return torch.scalar_tensor(x, dtype=torch.bool, device=device)
        if isinstance(x, complex):
            dtype = complex_of.get(real, torch.complex128)
        elif floating:
            dtype = real
        else:
            dtype = torch.int64 if isinstance(x, int | torch.SymInt) else torch.float64
        return torch.scalar_tensor(x, dtype=dtype, device=device)

    def _symbolic(x) -> bool:
        return isinstance(x, torch.SymInt | torch.SymFloat | torch.SymBool)

    def _where(cond, then, otherwise):
        # decided by a non-tensor argument (approximate == "tanh"; a symbolic Scalar's comparison
        # under dynamic shapes, which the branch specializes)
        if isinstance(cond, bool | torch.SymBool):
            return then if cond else otherwise
        # numbers as 0-dim tensors: two Python numbers would give torch's default dtype, float32
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
            if isinstance(a, bool | torch.SymBool) and isinstance(b, bool | torch.SymBool):
                return (a and b) if op is torch.logical_and else (a or b)
            a, b = (_tensor(v) if _symbolic(v) else v for v in (a, b))
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
        pow=lambda a, b: torch.pow(_tensor(a) if _symbolic(a) else a, b),
        pow_scalar=lambda a, b: torch.pow(_tensor(a) if _symbolic(a) else a, b),
        real=lambda x: x.real if x.is_complex() else x,
        imag=lambda x: x.imag if x.is_complex() else torch.zeros_like(x),
        nan_of=lambda x: torch.full_like(x, complex(math.nan, math.nan) if x.is_complex() else math.nan),
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
        logical_not=lambda x: (not x) if isinstance(x, bool | torch.SymBool) else torch.logical_not(x),
        invert=lambda x: ~x,
        floor_div=lambda a, b: torch.floor_divide(a, b),
        remainder=lambda a, b: torch.remainder(a, b),
    )

    return pw


pw = namespace()
