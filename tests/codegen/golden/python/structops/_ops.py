# @generated from native_functions.yaml by codegen/templates/ops.py.j2 — DO NOT EDIT.
# Regenerate with: python -m codegen (run by the CMake build)
"""The structops operators as Python functions (generated from the manifest).

Each function calls torch.ops.structops.<op>.<overload>; a name of several overloads picks one
as torch's Python layer does (structops._dispatch.pick), except for its common call, plain
tensors given positionally (and out=), whose overloads the generator resolved (pick() costs
~0.8 us a call). Calls that may reach an out= overload go through a bridge that turns C++
warnings (the out= resize warning) into Python warnings; functional and inplace calls, which
raise no such warning, call the overload directly (the bridge costs ~1 us a call).
"""

import math  # noqa: F401 - used by some defaults

import torch

from structops import _C
from structops._dispatch import call as _call
from structops._dispatch import pick as _pick
from structops._dispatch import spelled as _spelled
from structops._dispatch import spelled_call as _spelled_call

_ops = torch.ops.structops
_Tensor = torch.Tensor
_compiling = torch.compiler.is_compiling  # traced calls take the general path (Dynamo folds this)

__all__ = [
    "add",
    "add_",
    "bmm",
    "amax",
    "aminmax",
    "my_fused",
    "scaled_act",
    "scaled_tanh",
]


_add_op = _ops.add.Tensor._op  # the C++ callable OpOverload.__call__ calls


def add(self, other, *, alpha=1, out=None):
    """self + alpha * other.

    Overloads (torch.ops.structops.*):
        add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
        add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
    """
    if out is None:
        if not _compiling():
            return _add_op(self, other, alpha=alpha)
        return _ops.add.Tensor(self, other, alpha=alpha)
    return _call(_ops.add.out, self, other, alpha=alpha, out=out)


_add__op = _ops.add_.Tensor._op  # the C++ callable OpOverload.__call__ calls


def add_(self, other, *, alpha=1):
    """Overloads (torch.ops.structops.*):
        add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
    """
    if not _compiling():  # traced calls keep the OpOverload, which Dynamo knows
        return _add__op(self, other, alpha=alpha)
    return _ops.add_.Tensor(self, other, alpha=alpha)


def bmm(self, mat2, *, out):
    """Overloads (torch.ops.structops.*):
        bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)
    """
    return _call(_ops.bmm.out, self, mat2, out=out)


_amax_op = _ops.amax.default._op  # the C++ callable OpOverload.__call__ calls


def amax(self, dim=(), keepdim=False, *, out=None):
    """Overloads (torch.ops.structops.*):
        amax.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!)
        amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor
    """
    if out is None:
        if not _compiling():
            return _amax_op(self, dim, keepdim)
        return _ops.amax.default(self, dim, keepdim)
    return _call(_ops.amax.out, self, dim, keepdim, out=out)


_aminmax_op = _ops.aminmax.default._op  # the C++ callable OpOverload.__call__ calls


def aminmax(self, *, dim=None, keepdim=False, out=None):
    """Minimum and maximum in one pass.

    Overloads (torch.ops.structops.*):
        aminmax.out(Tensor self, *, int? dim=None, bool keepdim=False, Tensor(a!) min, Tensor(b!) max) -> (Tensor(a!) min, Tensor(b!) max)
        aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)
    """
    if out is None:
        if not _compiling():
            return _aminmax_op(self, dim=dim, keepdim=keepdim)
        return _ops.aminmax.default(self, dim=dim, keepdim=keepdim)
    min, max = out
    return _call(_ops.aminmax.out, self, dim=dim, keepdim=keepdim, min=min, max=max)


_my_fused_op = _ops.my_fused.default._op  # the C++ callable OpOverload.__call__ calls


def my_fused(x, bias, scale=1.0, mode="fast"):
    """Overloads (torch.ops.structops.*):
        my_fused(Tensor x, Tensor? bias, float scale=1.0, str mode="fast") -> Tensor
    """
    if not _compiling():  # traced calls keep the OpOverload, which Dynamo knows
        return _my_fused_op(x, bias, scale, mode)
    return _ops.my_fused.default(x, bias, scale, mode)


_scaled_act_op = _ops.scaled_act.default._op  # the C++ callable OpOverload.__call__ calls


def scaled_act(self, other, *, alpha=1, mode='relu', out=None):
    """Overloads (torch.ops.structops.*):
        scaled_act.out(Tensor self, Tensor other, *, Scalar alpha=1, str mode='relu', Tensor(a!) out) -> Tensor(a!)
        scaled_act(Tensor self, Tensor other, *, Scalar alpha=1, str mode='relu') -> Tensor
    """
    if out is None:
        if not _compiling():
            return _scaled_act_op(self, other, alpha=alpha, mode=mode)
        return _ops.scaled_act.default(self, other, alpha=alpha, mode=mode)
    return _call(_ops.scaled_act.out, self, other, alpha=alpha, mode=mode, out=out)


_scaled_tanh_op = _ops.scaled_tanh.default._op  # the C++ callable OpOverload.__call__ calls


def scaled_tanh(self, *, alpha=1, out=None):
    """Overloads (torch.ops.structops.*):
        scaled_tanh.out(Tensor self, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
        scaled_tanh(Tensor self, *, Scalar alpha=1) -> Tensor
    """
    if out is None:
        if not _compiling():
            return _scaled_tanh_op(self, alpha=alpha)
        return _ops.scaled_tanh.default(self, alpha=alpha)
    return _call(_ops.scaled_tanh.out, self, alpha=alpha, out=out)

