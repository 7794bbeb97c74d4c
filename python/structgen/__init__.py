"""structgen's runtime: what every package generated from a manifest calls in Python.

A generated package's ``_ops`` module binds its functions through ``_dispatch`` (C entries from
``_C``, built for every package alike) and hands its index-space rules to ``packages.serve``;
from then on ``describe``, ``sharding``, ``vmap`` and ``dtensor`` serve its ops by their
torch.ops namespace. Importing the runtime registers no operator and loads no package's library.
"""

from structgen.rules import describe

__all__ = ["describe"]
