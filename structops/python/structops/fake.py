"""Fake (FakeTensor) impls of ops whose output size depends on input data.

The generator registers no Meta kernel for ops tagged ``dynamic_output_shape`` (a meta tensor
has no data to size them by); each gets its fake impl here instead, written as torch's own fake
impls of the same ops (torch/_subclasses/fake_impls.py): with a ShapeEnv that allows dynamic
output shapes the size is a new unbacked SymInt, otherwise ``ctx.new_dynamic_size()`` raises
DynamicOutputShapeException, which torch.compile turns into a graph break. On plain meta tensors
the Meta kernel torch.library derives from a fake impl raises, as torch's masked_select does.

The argument checks are the hand-written C++ meta functions' own, reached through structops._C.
"""

from __future__ import annotations

import torch

from structops import _C


@torch.library.register_fake("structops::masked_select")
def _masked_select(self: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    shape = _C.masked_select_shape(self, mask)  # the meta function's own checks (csrc/ops/index/meta.cpp)
    count = torch.library.get_ctx().new_dynamic_size(max=max(_numel_bound(shape), 2))
    return self.new_empty((count,))


def _numel_bound(shape: list) -> int:
    """An upper bound of the number of elements, for the unbacked size's range."""
    import math
    import sys

    from torch.fx.experimental.symbolic_shapes import has_free_symbols

    n = math.prod(shape)
    return sys.maxsize - 1 if has_free_symbols(n) else int(n)
