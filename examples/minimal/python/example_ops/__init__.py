"""example_ops: an outside project's operators, generated from its manifest (../native_functions.yaml).

Importing the package loads its library, which registers torch.ops.example_ops.*, and exposes them
as example_ops.<name>. Its functions call the generator's Python runtime, structgen.
"""

from pathlib import Path

import torch

torch.ops.load_library(str(Path(__file__).with_name("libexample_ops.so")))

from example_ops._ops import *
from example_ops._ops import __all__  # noqa: F401
