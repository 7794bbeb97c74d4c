"""torch.nn.functional's functions, with their signatures and results, computed by structops' ops.

The generated layer (structops.<op>) mirrors ATen: integer reductions, statistics beside a
normalisation's output, an embedding's weight first. Code written against torch.nn.functional
calls these instead (``import structops.nn.functional as F``), and structops.patch routes
torch's own calls here. Each function checks what torch's checks, with torch's exception types
and messages, and then calls structops' ops only.
"""

from __future__ import annotations

import math
import warnings

import torch
from torch.nn import _reduction

import structops

__all__ = [
    "avg_pool2d",
    "batch_norm",
    "binary_cross_entropy",
    "cross_entropy",
    "dropout",
    "embedding",
    "embedding_bag",
    "gelu",
    "hardtanh",
    "layer_norm",
    "linear",
    "log_softmax",
    "max_pool2d",
    "max_pool2d_with_indices",
    "max_pool3d",
    "mse_loss",
    "relu",
    "rms_norm",
    "scaled_dot_product_attention",
    "silu",
    "softmax",
]


def _reduction_code(size_average: bool | None, reduce: bool | None, reduction: str) -> int:
    """The ATen reduction of torch's strings ('none', 'mean', 'sum'), the legacy size_average and
    reduce flags read as torch reads them (torch's own helpers: the same warnings and errors)."""
    if size_average is not None or reduce is not None:
        reduction = _reduction.legacy_get_string(size_average, reduce)
    return _reduction.get_enum(reduction)


def linear(input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    return structops.linear(input, weight, bias)


def relu(input: torch.Tensor, inplace: bool = False) -> torch.Tensor:
    return structops.relu_(input) if inplace else structops.relu(input)


def hardtanh(
    input: torch.Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> torch.Tensor:
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if inplace:
        return structops.hardtanh_(input, min_val, max_val)
    return structops.hardtanh(input, min_val, max_val)


def silu(input: torch.Tensor, inplace: bool = False) -> torch.Tensor:
    return structops.silu_(input) if inplace else structops.silu(input)


def gelu(input: torch.Tensor, approximate: str = "none") -> torch.Tensor:
    return structops.gelu(input, approximate=approximate)


def softmax(
    input: torch.Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: torch.dtype | None = None
) -> torch.Tensor:
    if dim is None:  # torch's implicit dim, with its deprecation warning
        dim = torch.nn.functional._get_softmax_dim("softmax", input.dim(), _stacklevel)
    return structops.softmax(input, dim, dtype)


def log_softmax(
    input: torch.Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: torch.dtype | None = None
) -> torch.Tensor:
    if dim is None:
        dim = torch.nn.functional._get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    return structops.log_softmax(input, dim, dtype)


def layer_norm(
    input: torch.Tensor,
    normalized_shape: list[int],
    weight: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    eps: float = 1e-5,
) -> torch.Tensor:
    return structops.native_layer_norm(input, list(normalized_shape), weight, bias, eps)[0]


def batch_norm(
    input: torch.Tensor,
    running_mean: torch.Tensor | None,
    running_var: torch.Tensor | None,
    weight: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> torch.Tensor:
    if training:  # torch's check: one value per channel has no variance
        torch.nn.functional._verify_batch_size(input.size())
    return structops.native_batch_norm(
        input, weight, bias, running_mean, running_var, training, momentum, eps
    )[0]


def embedding(
    input: torch.Tensor,
    weight: torch.Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> torch.Tensor:
    """The rows of ``weight`` at ``input``. padding_idx's rows get no gradient (their output is
    the weight's, detached); scale_grad_by_freq divides each row's gradient by its count in the
    batch (embedding_bag's, one index per bag); max_norm renormalises the rows in place first,
    as torch's does; sparse=True gives weight a sparse COO gradient, as torch's. (Forward mode
    differs on padding rows: the detached output carries no tangent, torch's carries weight's.)"""
    rows = weight.size(0)
    if padding_idx is not None:  # torch's checks, as asserts
        if padding_idx > 0:
            assert padding_idx < rows, "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -rows, "Padding_idx must be within num_embeddings"
            padding_idx = rows + padding_idx
    if max_norm is not None:
        input = input.contiguous()
        with torch.no_grad():
            torch.embedding_renorm_(weight, input, max_norm, norm_type)
    if sparse:
        return _SparseEmbedding.apply(weight, input, padding_idx, scale_grad_by_freq)
    if scale_grad_by_freq:
        flat = input.reshape(-1)
        bags = torch.arange(flat.numel(), device=flat.device)
        out = structops.embedding_bag(weight, flat, bags, True, 0).view(*input.shape, weight.size(1))
    else:
        out = structops.embedding(weight, input)
    if padding_idx is not None:
        out = structops.where(structops.eq(input, padding_idx).unsqueeze(-1), out.detach(), out)
    return out


def embedding_bag(
    input: torch.Tensor,
    weight: torch.Tensor,
    offsets: torch.Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: torch.Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> torch.Tensor:
    """Sums, means or maxima of bags of ``weight``'s rows: structops' embedding_bag op, after
    torch's checks and its reading of the arguments (a 2-D input is bags of its rows' length; the
    mode by name). padding_idx's entries are left out of their bags (a bag of padding only is
    zeros, and counts for the mean exclude them, as torch's); sparse=True gives weight a sparse
    COO gradient, as torch's."""
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(
            f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, "
            f"then it must have the same shape as the input ({input.shape})"
        )
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed "
                f"length sequences. However, found offsets of type {type(offsets)}"
            )
        offsets = torch.arange(0, input.numel(), input.size(1), dtype=input.dtype, device=input.device)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    modes = {"sum": 0, "mean": 1, "max": 2}
    if mode not in modes:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        with torch.no_grad():
            torch.embedding_renorm_(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for "
            f"mode='sum' (got mode='{mode}'). Please open a feature request on GitHub."
        )
    if include_last_offset:  # torch's last bag runs to the end of the indices whatever that offset says
        offsets = offsets[:-1]
    padding = padding_idx is not None
    if padding:
        rows = weight.size(0)
        if not -rows <= padding_idx < rows:
            raise RuntimeError(
                f"padding_idx must be within the number of embeddings, -{rows} through {rows - 1}, "
                f"but got {padding_idx}"
            )
        input, offsets, per_sample_weights = _without_padding(
            input, offsets, per_sample_weights, padding_idx % rows
        )
    if sparse:
        out = _SparseBags.apply(weight, input, offsets, modes[mode], per_sample_weights, scale_grad_by_freq)
    else:
        out = structops.embedding_bag(
            weight, input, offsets, scale_grad_by_freq, modes[mode], False, per_sample_weights
        )
    return out[:-1] if padding else out  # the padding entries' bag


def _without_padding(indices, offsets, per_sample_weights, padding_idx: int):
    """The bags (their starts) with padding_idx's entries moved into one more bag after them, the
    caller drops its row. A stable sort, so no shape depends on the data: meta tensors and
    compiled graphs take it. Each start moves back by the padding entries before it."""
    padding = indices == padding_idx
    order = torch.argsort(padding.to(torch.int8), stable=True)
    removed = torch.cat([padding.new_zeros(1, dtype=torch.long), padding.long().cumsum(0)])
    kept = (indices.numel() - removed[-1]).to(offsets.dtype).reshape(1)
    starts = torch.cat([offsets - removed[offsets.long()].to(offsets.dtype), kept])
    weights = None if per_sample_weights is None else per_sample_weights[order]
    return indices[order], starts, weights


class _SparseBags(torch.autograd.Function):
    """structops' embedding_bag whose weight gradient is a sparse COO tensor (torch's sparse=True,
    modes sum and mean): one row per index, its bag's gradient times the entry's weight (or 1 /
    the bag's size), uncoalesced as torch's."""

    @staticmethod
    def forward(ctx, weight, indices, offsets, mode, per_sample_weights, scale):
        ctx.save_for_backward(weight, indices, offsets, per_sample_weights)
        ctx.mode, ctx.scale = mode, scale
        return structops.embedding_bag(weight, indices, offsets, False, mode, False, per_sample_weights)

    @staticmethod
    def backward(ctx, grad):
        weight, indices, offsets, per_sample_weights = ctx.saved_tensors
        if ctx.scale:  # torch's refusal, word for word
            raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse gradients")
        starts = offsets.long()
        positions = torch.arange(indices.numel(), device=indices.device)
        bag = torch.searchsorted(starts, positions, right=True) - 1
        rows = grad[bag]
        if ctx.mode == 1:
            ends = torch.cat([starts[1:], starts.new_full((1,), indices.numel())])
            rows = rows / (ends - starts).clamp_min(1)[bag].unsqueeze(1).to(rows.dtype)
        weights_grad = None
        if per_sample_weights is not None:
            if ctx.needs_input_grad[4]:
                weights_grad = (weight[indices] * rows).sum(1)
            rows = rows * per_sample_weights.unsqueeze(1)
        sparse = torch.sparse_coo_tensor(indices.unsqueeze(0), rows, weight.shape, check_invariants=False)
        return sparse, None, None, None, weights_grad, None


class _SparseEmbedding(torch.autograd.Function):
    """structops' embedding whose weight gradient is a sparse COO tensor (torch's sparse=True):
    one row of grad per index, padding_idx's left out, uncoalesced as torch's."""

    @staticmethod
    def forward(ctx, weight, input, padding_idx, scale_grad_by_freq):
        ctx.save_for_backward(input)
        ctx.shape, ctx.padding_idx, ctx.scale = weight.shape, padding_idx, scale_grad_by_freq
        return structops.embedding(weight, input)

    @staticmethod
    def backward(ctx, grad):
        (input,) = ctx.saved_tensors
        if ctx.scale:  # torch's refusal, word for word
            raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse gradients")
        index, rows = input.reshape(-1), grad.reshape(-1, ctx.shape[1])
        if ctx.padding_idx is not None:
            keep = index != ctx.padding_idx
            index, rows = index[keep], rows[keep]
        sparse = torch.sparse_coo_tensor(index.unsqueeze(0), rows, ctx.shape, check_invariants=False)
        return sparse, None, None, None


def cross_entropy(
    input: torch.Tensor,
    target: torch.Tensor,
    weight: torch.Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> torch.Tensor:
    code = _reduction_code(size_average, reduce, reduction)
    return structops.cross_entropy_loss(input, target, weight, code, ignore_index, label_smoothing)


def binary_cross_entropy(
    input: torch.Tensor,
    target: torch.Tensor,
    weight: torch.Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> torch.Tensor:
    code = _reduction_code(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(
            f"Using a target size ({target.size()}) that is different to the input size ({input.size()}) is "
            "deprecated. Please ensure they have the same size."
        )
    if weight is not None:  # broadcast to the target, as torch's
        weight = weight.expand(torch._C._infer_size(target.size(), weight.size()))
    return structops.binary_cross_entropy(input, target, weight, code)


def mse_loss(
    input: torch.Tensor,
    target: torch.Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: torch.Tensor | None = None,
) -> torch.Tensor:
    if target.size() != input.size():
        warnings.warn(
            f"Using a target size ({target.size()}) that is different to the input size ({input.size()}). "
            "This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.",
            stacklevel=2,
        )
    code = _reduction_code(size_average, reduce, reduction)
    if weight is None:
        return structops.mse_loss(input, target, code)
    # torch 2.6+'s per-element weights: weight * (input - target)^2, then reduced
    difference = structops.sub(input, target)
    weighted = structops.mul(weight, structops.mul(difference, difference))
    if code == 0:
        return weighted
    return structops.mean(weighted) if code == 1 else structops.sum(weighted)


def _max_pool(op, input, kernel_size, stride, padding, dilation, ceil_mode):
    """The pool's (output, indices): F's stride=None is the kernel size, ATen's [] says it."""
    return op(input, kernel_size, stride if stride is not None else [], padding, dilation, ceil_mode)


def max_pool2d(
    input: torch.Tensor,
    kernel_size: int | tuple[int, int],
    stride: int | tuple[int, int] | None = None,
    padding: int | tuple[int, int] = 0,
    dilation: int | tuple[int, int] = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    out, indices = _max_pool(
        structops.max_pool2d_with_indices, input, kernel_size, stride, padding, dilation, ceil_mode
    )
    return (out, indices) if return_indices else out


def max_pool3d(
    input: torch.Tensor,
    kernel_size: int | tuple[int, int, int],
    stride: int | tuple[int, int, int] | None = None,
    padding: int | tuple[int, int, int] = 0,
    dilation: int | tuple[int, int, int] = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    out, indices = _max_pool(
        structops.max_pool3d_with_indices, input, kernel_size, stride, padding, dilation, ceil_mode
    )
    return (out, indices) if return_indices else out


def avg_pool2d(
    input: torch.Tensor,
    kernel_size: int | tuple[int, int],
    stride: int | tuple[int, int] | None = None,
    padding: int | tuple[int, int] = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> torch.Tensor:
    return structops.avg_pool2d(
        input,
        kernel_size,
        stride if stride is not None else [],
        padding,
        ceil_mode,
        count_include_pad,
        divisor_override,
    )


def max_pool2d_with_indices(
    input: torch.Tensor,
    kernel_size: int | tuple[int, int],
    stride: int | tuple[int, int] | None = None,
    padding: int | tuple[int, int] = 0,
    dilation: int | tuple[int, int] = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """torch.nn.functional.max_pool2d_with_indices: the indices whatever return_indices says."""
    return _max_pool(
        structops.max_pool2d_with_indices, input, kernel_size, stride, padding, dilation, ceil_mode
    )


def dropout(
    input: torch.Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> torch.Tensor:
    """torch's dropout: each element kept with probability 1 - p and scaled by 1 / (1 - p), by
    structops' dropout op (one pass; torch.native_dropout's semantics). On the CPU its mask is
    torch's own draw from the default generator, so a seeded run keeps what torch's keeps; on
    CUDA the op draws its own bits. p = 1 draws nothing, as torch's."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0.0 or not training or input.numel() == 0:
        return input  # torch's: the input itself
    if p == 1.0:
        zero = torch.zeros((), dtype=input.dtype, device=input.device)
        return structops.mul_(input, zero) if inplace else structops.mul(input, zero)
    if not input.is_floating_point():  # torch's message (its noise cannot be cast to an integer input)
        raise RuntimeError(f"result type Float can't be cast to the desired output type {input.dtype}")
    out = structops.native_dropout(input, p, True)[0]
    return input.copy_(out) if inplace else out


def rms_norm(
    input: torch.Tensor,
    normalized_shape: list[int],
    weight: torch.Tensor | None = None,
    eps: float | None = None,
) -> torch.Tensor:
    """x / sqrt(mean(x^2) + eps) over the trailing normalized_shape dims, times weight: structops'
    rms_norm op (one pass per row, float16 and bfloat16 in float, eps by default the compute
    dtype's epsilon), its output without the rstd. A weight of another dtype than the input's
    takes torch's composite path (over structops' ops), whose result has the input's dtype."""
    if list(input.shape[input.dim() - len(normalized_shape) :]) != list(normalized_shape):
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape "
            f"[*, {', '.join(map(str, normalized_shape))}], but got input of size{input.size()}"
        )
    if input.is_floating_point() and (weight is None or weight.dtype == input.dtype):
        return structops.rms_norm_with_rstd(input, list(normalized_shape), weight, eps)[0]
    dims = list(range(input.dim() - len(normalized_shape), input.dim()))
    x = input.float() if input.dtype in (torch.float16, torch.bfloat16) else input
    eps = torch.finfo(x.dtype).eps if eps is None else eps
    mean_square = structops.mean(structops.mul(x, x), dims, keepdim=True)
    out = structops.mul(x, structops.rsqrt(structops.add(mean_square, eps)))
    if weight is not None:
        out = structops.mul(out, weight)
    return out.to(input.dtype)  # torch's type_as(input) after the weight


def scaled_dot_product_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attn_mask: torch.Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> torch.Tensor:
    """softmax(q k^T * scale + mask) v: structops' attention op (its tiled kernels hold one block
    of scores at a time), the output without the logsumexp beside it. torch's broadcasting of the
    batch dims and 2-D inputs (no head dim) are taken here; with dropout the weights must exist
    whole, so dropout_p > 0 runs the math path over structops' ops."""
    if not 0.0 <= dropout_p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if dropout_p > 0.0:
        return _attention_math(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    if min(query.dim(), key.dim(), value.dim()) < 2:
        raise RuntimeError(
            "scaled_dot_product_attention: query, key and value need at least 2 dims, got "
            f"{query.dim()}, {key.dim()} and {value.dim()}"
        )
    flat = query.dim() == 2
    if flat:
        query = query.unsqueeze(0)
    key, value = (t.unsqueeze(0) if t.dim() == 2 else t for t in (key, value))
    batch = torch.broadcast_shapes(query.shape[:-3], key.shape[:-3], value.shape[:-3])
    query, key, value = (t.expand(*batch, *t.shape[-3:]) for t in (query, key, value))
    out = structops.scaled_dot_product_attention_with_lse(
        query, key, value, attn_mask, is_causal, scale=scale, enable_gqa=enable_gqa
    )[0]
    return out.squeeze(0) if flat else out


def _attention_math(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa):
    """Attention written out over structops' ops, with dropout on the weights (memory L x S per
    head). A row masked whole gives 0, as torch's."""
    length, source = query.size(-2), key.size(-2)
    if enable_gqa and key.size(-3) != query.size(-3):
        repeat = query.size(-3) // key.size(-3)
        key, value = key.repeat_interleave(repeat, -3), value.repeat_interleave(repeat, -3)
    factor = 1.0 / math.sqrt(query.size(-1)) if scale is None else scale
    scores = structops.mul(structops.matmul(query, key.transpose(-2, -1)), factor)
    keep = None
    if is_causal:
        keep = torch.ones(length, source, dtype=torch.bool, device=query.device).tril()
    if attn_mask is not None and attn_mask.dtype == torch.bool:
        keep = attn_mask if keep is None else structops.logical_and(keep, attn_mask)
    elif attn_mask is not None:
        scores = structops.add(scores, attn_mask)
    if keep is not None:
        scores = structops.where(keep, scores, float("-inf"))
    # a row masked whole: softmax of finite scores (no NaN to carry into backward), then 0
    masked_rows = structops.eq(structops.amax(scores, [-1], keepdim=True), float("-inf"))
    weights = structops.where(
        masked_rows, 0.0, structops.softmax(structops.where(masked_rows, 0.0, scores), -1)
    )
    return structops.matmul(dropout(weights, dropout_p), value)
