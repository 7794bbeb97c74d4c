# @generated from native_functions.yaml by codegen/templates/ops.py.j2 (generator 0.6.0) — DO NOT EDIT.
# Regenerate with: python -m structgen.codegen (run by the CMake build)
"""The fixture_ops operators as Python functions (generated from the manifest).

Each name is a C function (structgen._dispatch.entry, csrc/python/entry.cpp) that binds the
common call itself and calls the operator, as torch.add does. The Python function written here
is what it falls back to for every other call (a tensor subclass, a torch function mode, a
number for a Tensor, a call that fits no overload) and what torch.compile traces: it calls
torch.ops.fixture_ops.<op>.<overload>, and a name of several overloads picks one as torch's Python
layer does (structgen._dispatch.pick). Calls that may reach an out= overload go through a bridge
that turns C++ warnings (the out= resize warning) into Python warnings.

Loading it serves the package (structgen.packages.serve): describe(), sharding, vmap and
DTensor find its ops' index-space functions (_rules) through torch.ops.fixture_ops.
"""

import math  # noqa: F401 - used by some defaults

import torch

from structgen._dispatch import call as _call
from structgen._dispatch import entry as _entry
from structgen._dispatch import pick as _pick
from structgen._dispatch import register_with_dynamo as _register_with_dynamo
from structgen._dispatch import spelled as _spelled
from structgen._dispatch import spelled_call as _spelled_call
from structgen.packages import serve as _serve
from fixture_pkg.ops import _lowerings  # noqa: F401 - Inductor compiles formula ops as formulas
from fixture_pkg.ops import _rules

_ops = torch.ops.fixture_ops
_serve('fixture_ops', _rules)

__all__ = [
    "add",
    "add_",
    "bmm",
    "amax",
    "aminmax",
    "my_fused",
    "scaled_act",
    "scaled_tanh",
    "cumprod",
    "tril",
]


_add_overloads = (
    (_ops.add.Tensor, False, (('self', 'Tensor', False, False, False), ('other', 'Tensor', False, False, False), ('alpha', 'number', False, True, True), )),
    (_ops.add.out, True, (('self', 'Tensor', False, False, False), ('other', 'Tensor', False, False, False), ('alpha', 'number', False, True, True), ('out', 'Tensor', False, False, True), )),
)


def add(self, other, *, alpha=1, out=None):
    """self + alpha * other.

    Overloads (torch.ops.fixture_ops.*):
        add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
        add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
    """
    if out is None:
        return _ops.add.Tensor(self, other, alpha=alpha)
    return _call(_ops.add.out, self, other, alpha=alpha, out=out)


add = _entry(add, _add_overloads, 'self, other, *, alpha=1, out=None')


_add__overloads = (
    (_ops.add_.Tensor, False, (('self', 'Tensor', False, False, False), ('other', 'Tensor', False, False, False), ('alpha', 'number', False, True, True), )),
)


def add_(self, other, *, alpha=1):
    """Overloads (torch.ops.fixture_ops.*):
        add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
    """
    return _ops.add_.Tensor(self, other, alpha=alpha)


add_ = _entry(add_, _add__overloads, 'self, other, *, alpha=1')


_bmm_overloads = (
    (_ops.bmm.out, True, (('self', 'Tensor', False, False, False), ('mat2', 'Tensor', False, False, False), ('out', 'Tensor', False, False, True), )),
)


def bmm(self, mat2, *, out):
    """Overloads (torch.ops.fixture_ops.*):
        bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)
    """
    return _call(_ops.bmm.out, self, mat2, out=out)


bmm = _entry(bmm, _bmm_overloads, 'self, mat2, *, out')


_amax_overloads = (
    (_ops.amax.default, False, (('self', 'Tensor', False, False, False), ('dim', 'ints1', False, True, False), ('keepdim', 'bool', False, True, False), )),
    (_ops.amax.out, True, (('self', 'Tensor', False, False, False), ('dim', 'ints1', False, True, False), ('keepdim', 'bool', False, True, False), ('out', 'Tensor', False, False, True), )),
)


def amax(self, dim=(), keepdim=False, *, out=None):
    """Overloads (torch.ops.fixture_ops.*):
        amax.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
        amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor
    """
    if out is None:
        return _ops.amax.default(self, dim, keepdim)
    return _call(_ops.amax.out, self, dim, keepdim, out=out)


amax = _entry(amax, _amax_overloads, 'self, dim=(), keepdim=False, *, out=None')


_aminmax_overloads = (
    (_ops.aminmax.default, False, (('self', 'Tensor', False, False, False), ('dim', 'int', True, True, True), ('keepdim', 'bool', False, True, True), )),
)


def aminmax(self, *, dim=None, keepdim=False, out=None):
    """Minimum and maximum in one pass.

    Overloads (torch.ops.fixture_ops.*):
        aminmax.out(Tensor self, *, int? dim=None, bool keepdim=False, Tensor(a!) min, Tensor(b!) max) -> (Tensor(a!) min, Tensor(b!) max)
        aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)
    """
    if out is None:
        return _ops.aminmax.default(self, dim=dim, keepdim=keepdim)
    min, max = out
    return _call(_ops.aminmax.out, self, dim=dim, keepdim=keepdim, min=min, max=max)


aminmax = _entry(aminmax, _aminmax_overloads, 'self, *, dim=None, keepdim=False, out=None')


_my_fused_overloads = (
    (_ops.my_fused.default, False, (('x', 'Tensor', False, False, False), ('bias', 'Tensor', True, False, False), ('scale', 'float', False, True, False), ('mode', 'str', False, True, False), )),
)


def my_fused(x, bias, scale=1.0, mode="fast"):
    """Overloads (torch.ops.fixture_ops.*):
        my_fused(Tensor x, Tensor? bias, float scale=1.0, str mode="fast") -> Tensor
    """
    return _ops.my_fused.default(x, bias, scale, mode)


my_fused = _entry(my_fused, _my_fused_overloads, 'x, bias, scale=1.0, mode="fast"')


_scaled_act_overloads = (
    (_ops.scaled_act.default, False, (('self', 'Tensor', False, False, False), ('other', 'Tensor', False, False, False), ('alpha', 'number', False, True, True), ('mode', 'str', False, True, True), )),
    (_ops.scaled_act.out, True, (('self', 'Tensor', False, False, False), ('other', 'Tensor', False, False, False), ('alpha', 'number', False, True, True), ('mode', 'str', False, True, True), ('out', 'Tensor', False, False, True), )),
)


def scaled_act(self, other, *, alpha=1, mode='relu', out=None):
    """Overloads (torch.ops.fixture_ops.*):
        scaled_act.out(Tensor self, Tensor other, *, Scalar alpha=1, str mode='relu', Tensor(a!) out) -> Tensor(a!)
        scaled_act(Tensor self, Tensor other, *, Scalar alpha=1, str mode='relu') -> Tensor
    """
    if out is None:
        return _ops.scaled_act.default(self, other, alpha=alpha, mode=mode)
    return _call(_ops.scaled_act.out, self, other, alpha=alpha, mode=mode, out=out)


scaled_act = _entry(scaled_act, _scaled_act_overloads, "self, other, *, alpha=1, mode='relu', out=None")


_scaled_tanh_overloads = (
    (_ops.scaled_tanh.default, False, (('self', 'Tensor', False, False, False), ('alpha', 'number', False, True, True), )),
    (_ops.scaled_tanh.out, True, (('self', 'Tensor', False, False, False), ('alpha', 'number', False, True, True), ('out', 'Tensor', False, False, True), )),
)


def scaled_tanh(self, *, alpha=1, out=None):
    """Overloads (torch.ops.fixture_ops.*):
        scaled_tanh.out(Tensor self, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
        scaled_tanh(Tensor self, *, Scalar alpha=1) -> Tensor
    """
    if out is None:
        return _ops.scaled_tanh.default(self, alpha=alpha)
    return _call(_ops.scaled_tanh.out, self, alpha=alpha, out=out)


scaled_tanh = _entry(scaled_tanh, _scaled_tanh_overloads, 'self, *, alpha=1, out=None')


_cumprod_overloads = (
    (_ops.cumprod.default, False, (('self', 'Tensor', False, False, False), ('dim', 'int', False, False, False), )),
    (_ops.cumprod.out, True, (('self', 'Tensor', False, False, False), ('dim', 'int', False, False, False), ('out', 'Tensor', False, False, True), )),
)


def cumprod(self, dim, *, out=None):
    """Overloads (torch.ops.fixture_ops.*):
        cumprod.out(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!)
        cumprod(Tensor self, int dim) -> Tensor
    """
    if out is None:
        return _ops.cumprod.default(self, dim)
    return _call(_ops.cumprod.out, self, dim, out=out)


cumprod = _entry(cumprod, _cumprod_overloads, 'self, dim, *, out=None')


_tril_overloads = (
    (_ops.tril.default, False, (('self', 'Tensor', False, False, False), ('diagonal', 'int', False, True, False), )),
    (_ops.tril.out, True, (('self', 'Tensor', False, False, False), ('diagonal', 'int', False, True, False), ('out', 'Tensor', False, False, True), )),
)


def tril(self, diagonal=0, *, out=None):
    """Overloads (torch.ops.fixture_ops.*):
        tril.out(Tensor self, SymInt diagonal=0, *, Tensor(a!) out) -> Tensor(a!)
        tril(Tensor self, SymInt diagonal=0) -> Tensor
    """
    if out is None:
        return _ops.tril.default(self, diagonal)
    return _call(_ops.tril.out, self, diagonal, out=out)


tril = _entry(tril, _tril_overloads, 'self, diagonal=0, *, out=None')

_register_with_dynamo()
