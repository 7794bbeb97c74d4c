"""torch.nn's functional layer over structops' kernels (structops.nn.functional)."""

from structops.nn import functional

__all__ = ["functional"]
