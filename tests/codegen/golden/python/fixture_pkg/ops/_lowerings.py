# @generated from native_functions.yaml by codegen/templates/lowerings.py.j2 (generator 0.6.0) — DO NOT EDIT.
# Regenerate with: python -m structgen.codegen (run by the CMake build)
"""The fixture_ops formula ops as their formulas over torch ops, for Inductor (structgen.lowering).

torch.compile traces each function below in place of its operator, so Inductor generates one
kernel for a chain of formula ops and their neighbours; eager calls never run them. Each brings
the promoted tensors to torch's elementwise compute dtype, evaluates the formula, and casts the
result to the op's dtype once, as the op's kernel does.
"""

# ruff: noqa

import torch

from structgen.lowering import dtypes as _dtypes
from structgen.lowering import functions as _functions
from structgen.lowering import integral as _integral
from structgen.lowering import register as _register

_ops = torch.ops.fixture_ops


def scaled_act(self, other, *, alpha=1, mode='relu'):
    _kind = 'INT_TO_FLOAT'
    _compute, _result = _dtypes(_kind, self, other)
    pw = _functions(_compute, self.device)
    self = self.to(_compute)
    other = other.to(_compute)
    return (pw.select(mode, 'relu', pw.max((self + (alpha * other)), 0), 'tanh', pw.tanh((self + (alpha * other))))).to(_result)


def scaled_tanh(self, *, alpha=1):
    _kind = 'DEFAULT'
    _compute, _result = _dtypes(_kind, self)
    pw = _functions(_compute, self.device)
    self = self.to(_compute)
    return ((alpha * pw.tanh(self))).to(_result)


def _scaled_tanh_backward_self(grad, self, alpha=1):
    _kind = 'DEFAULT'
    _compute, _result = _dtypes(_kind, grad, self)
    pw = _functions(_compute, grad.device)
    grad = grad.to(_compute)
    self = self.to(_compute)
    return ((grad * pw.conj((alpha * (1 - (pw.tanh(self) * pw.tanh(self))))))).to(_result)


_register(lambda: {
    _ops.scaled_act.default: scaled_act,
    _ops.scaled_tanh.default: scaled_tanh,
    _ops._scaled_tanh_backward_self.default: _scaled_tanh_backward_self,
})
