"""structops: operators generated from native_functions.yaml as PyTorch structured kernels.

Importing the package loads the native library, which registers every operator under
torch.ops.structops (CPU and Meta kernels), and exposes them as structops.<name>.
"""

from pathlib import Path

__version__ = "0.1.0"  # the distribution's version too (pyproject.toml reads it from here)

import torch  # noqa: F401 - libtorch must be loaded before the extension
from structgen import _cpu, dtensor, sharding, vmap  # the runtime (python/structgen)
from structgen.rules import describe

from structops import _build

_cpu.check("structops", _build.CPU_FEATURES)  # before the library loads: see structgen/_cpu.py

from structops import (
    _C,  # loading it registers torch.ops.structops.*
    autotune,
    fake,  # noqa: F401 - fake impls of ops with data-dependent output sizes
    nn,
)
from structops._ops import *  # serves the package: its vmap rules and DTensor strategies (packages.py)
from structops._ops import __all__ as _op_names
from structops._patch import Routed, patch
from structops._torch_level import batch_norm, layer_norm  # torch's; the ATen forms are native_*
from structops.nn.functional import (
    rms_norm,  # F's; the op with rstd: rms_norm_with_rstd
    scaled_dot_product_attention,  # F's; the op: *_with_lse
)

# The shared library that registers every operator, with no Python in it: what a process needs
# loaded to run code that calls structops ops through torch's dispatcher without this package
# (torch.ops.load_library(ops_library); dlopen in a C++ program running an AOTInductor package).
ops_library = str(Path(_C.__file__).with_name("libstructops_ops.so"))

__all__ = list(_op_names)
__all__ += [
    "Routed",
    "autotune",
    "batch_norm",
    "describe",
    "dtensor",
    "layer_norm",
    "nn",
    "ops_library",
    "patch",
    "rms_norm",
    "scaled_dot_product_attention",
]
__all__ += ["sharding", "vmap"]
