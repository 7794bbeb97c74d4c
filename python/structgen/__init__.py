"""structgen: the generator (``structgen.codegen``) and the runtime every package generated from a
manifest calls in Python.

A generated package's ``_ops`` module binds its functions through ``_dispatch`` (C entries from
``_C``, built for every package alike) and hands its index-space rules to ``packages.serve``;
from then on ``describe``, ``sharding``, ``vmap`` and ``dtensor`` serve its ops by their
torch.ops namespace. Importing the runtime registers no operator and loads no package's library.
``describe`` is imported on first use, so that the generator (which needs no torch) does not
import torch through this package.
"""

from structgen.codegen.version import GENERATOR_VERSION as __version__

__all__ = ["__version__", "describe"]


def __getattr__(name: str):
    if name == "describe":
        from structgen.rules import describe

        return describe
    raise AttributeError(f"module 'structgen' has no attribute '{name}'")
