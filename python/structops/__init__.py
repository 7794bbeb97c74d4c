"""structops: operators generated from native_functions.yaml as PyTorch structured kernels.

Importing the package loads the native library, which registers every operator under
torch.ops.structops (CPU and Meta kernels), and exposes them as structops.<name>.
"""

import torch  # noqa: F401 - libtorch must be loaded before the extension

from structops import (
    _C,  # noqa: F401 - registers torch.ops.structops.*
    autotune,
    fake,  # noqa: F401 - fake impls of ops with data-dependent output sizes
    sharding,
)
from structops._ops import *
from structops._ops import __all__ as _op_names
from structops.rules import describe

__all__ = list(_op_names)
__all__ += ["autotune", "describe", "sharding"]
