"""Fake (FakeTensor) impls of ops whose output size depends on input data.

The generator registers no Meta kernel for ops tagged ``dynamic_output_shape`` (a meta tensor
has no data to size them by); each gets its fake impl here instead, written as torch's own fake
impls of the same ops (torch/_subclasses/fake_impls.py): with a ShapeEnv that allows dynamic
output shapes the size is a new unbacked SymInt, otherwise ``ctx.new_dynamic_size()`` raises
DynamicOutputShapeException, which torch.compile turns into a graph break. On plain meta tensors
the Meta kernel torch.library derives from a fake impl raises, as torch's masked_select does.

The argument checks repeat the hand-written C++ meta functions' (csrc/ops/*/meta.cpp), with their messages.
"""

from __future__ import annotations

import torch


def _broadcast_shape(op: str, a_name: str, a: torch.Tensor, b_name: str, b: torch.Tensor) -> list:
    """rules::broadcast's shape and message for two tensors (csrc/runtime/rules.cpp)."""
    rank = max(a.dim(), b.dim())
    shape = []
    for i in range(-rank, 0):
        x = a.shape[i] if -i <= a.dim() else 1
        y = b.shape[i] if -i <= b.dim() else 1
        torch._check(
            x == y or x == 1 or y == 1,
            lambda x=x, y=y, i=i: (
                f"{op}: the size of '{b_name}' ({y}) must match the size of '{a_name}' ({x}) "
                f"at non-singleton dimension {i}; shapes: {a_name}={list(a.shape)}, {b_name}={list(b.shape)}"
            ),
        )
        shape.append(y if x == 1 else x)
    return shape


@torch.library.register_fake("structops::masked_select")
def _masked_select(self: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    torch._check(
        mask.dtype == torch.bool,
        lambda: (
            f"masked_select: 'mask' has dtype {_dtype_name(mask.dtype)}, which masked_select does not support"
            " (supported: bool)"
        ),
    )
    shape = _broadcast_shape("masked_select", "self", self, "mask", mask)
    count = torch.library.get_ctx().new_dynamic_size(max=max(_numel_bound(shape), 2))
    return self.new_empty((count,))


def _numel_bound(shape: list) -> int:
    """An upper bound of the number of elements, for the unbacked size's range."""
    import math
    import sys

    from torch.fx.experimental.symbolic_shapes import has_free_symbols

    n = math.prod(shape)
    return sys.maxsize - 1 if has_free_symbols(n) else int(n)


_C10_NAMES = {
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


def _dtype_name(dtype: torch.dtype) -> str:
    """c10's name of a dtype (Float, Long, ComplexFloat), as the C++ messages print it."""
    return _C10_NAMES.get(dtype, str(dtype).removeprefix("torch."))
