"""torch's top-level normalisations, which return the normalised tensor alone; the generated
layer names the ATen forms with statistics as torch does (structops.native_layer_norm,
native_batch_norm: the manifest's python_name)."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from structops._ops import native_batch_norm, native_layer_norm


def layer_norm(
    input: torch.Tensor,
    normalized_shape: Sequence[int],
    weight: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    eps: float = 1e-05,
    cudnn_enable: bool = True,
) -> torch.Tensor:
    """torch.layer_norm: native_layer_norm's output (cudnn_enable, torch's backend switch, has
    nothing to choose here)."""
    return native_layer_norm(input, list(normalized_shape), weight, bias, eps)[0]


def batch_norm(
    input: torch.Tensor,
    weight: torch.Tensor | None,
    bias: torch.Tensor | None,
    running_mean: torch.Tensor | None,
    running_var: torch.Tensor | None,
    training: bool,
    momentum: float,
    eps: float,
    cudnn_enabled: bool,
) -> torch.Tensor:
    """torch.batch_norm: native_batch_norm's output (running statistics updated in training)."""
    return native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)[0]
