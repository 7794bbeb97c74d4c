// Attention's backward and forward mode (scaled_dot_product_attention): the probabilities are
// recomputed from query, key and value with differentiable ATen ops, so double backward and
// jacfwd over jacrev (torch.func.hessian) hold. The recomputed scores are [l, s] per head: these
// take the memory the math path does (the forward's tiled kernels do not).
#include <structgen/autograd.h>

#include "autograd_detail.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/_safe_softmax.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/sum.h>

#include <cmath>
#include <limits>

namespace structgen::autograd {
using namespace detail;  // NOLINT: the helpers backward and forward mode share

namespace detail {

at::Tensor group_heads(const at::Tensor& t, const c10::SymInt& group) {
  if (group == 1) return t;
  const int64_t h = t.dim() - 3;
  std::vector<c10::SymInt> repeated(t.sym_sizes().begin(), t.sym_sizes().end()), merged = repeated;
  repeated.insert(repeated.begin() + h + 1, group);
  merged[h] = merged[h] * group;
  return t.unsqueeze(h + 1).expand_symint(repeated).reshape_symint(merged);
}

Attention attention_of(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                       const std::optional<at::Tensor>& attn_mask, bool is_causal,
                       std::optional<double> scale) {
  const at::ScalarType ct = at::toOpMathType(query.scalar_type());
  Attention a;
  const c10::SymInt heads = key.sym_size(-3);
  a.group = heads == 0 ? c10::SymInt(1) : query.sym_size(-3) / heads;
  a.query = as_dtype(query, ct);
  a.key = group_heads(as_dtype(key, ct), a.group);
  a.value = group_heads(as_dtype(value, ct), a.group);
  // The head size is a model's constant: reading it specialises nothing a batch changes.
  a.scale = scale.has_value()
                ? *scale
                : 1.0 / std::sqrt(static_cast<double>(query.sym_size(-1).guard_int(__FILE__, __LINE__)));
  constexpr double inf = std::numeric_limits<double>::infinity();
  at::Tensor scores = at::matmul(a.query, a.key.mT()) * a.scale;
  if (attn_mask.has_value() && attn_mask->defined()) {
    scores = attn_mask->scalar_type() == at::kBool ? scores.masked_fill(attn_mask->logical_not(), -inf)
                                                   : scores + as_dtype(*attn_mask, ct);
  }
  if (is_causal) {  // key j <= query i, top-left aligned
    const at::Tensor keep =
        at::ones_symint({query.sym_size(-2), key.sym_size(-2)}, query.options().dtype(at::kBool));
    scores = scores.masked_fill(keep.tril().logical_not(), -inf);
  }
  a.probs = at::_safe_softmax(scores, -1, std::nullopt);  // a row masked whole: 0, not NaN
  return a;
}

}  // namespace detail

namespace {

// A gradient of the repeated key/value heads summed back onto each shared head, in like's dtype.
at::Tensor ungroup(const at::Tensor& grad, const at::Tensor& like, const c10::SymInt& group) {
  if (group == 1) return as_dtype(grad, like.scalar_type());
  const int64_t h = like.dim() - 3;
  std::vector<c10::SymInt> split(like.sym_sizes().begin(), like.sym_sizes().end());
  split.insert(split.begin() + h + 1, group);
  return as_dtype(at::sum(grad.reshape_symint(split), {h + 1}), like.scalar_type());
}

bool float_mask(const std::optional<at::Tensor>& mask) {
  return mask.has_value() && mask->defined() && mask->scalar_type() != at::kBool;
}

}  // namespace

std::vector<at::Tensor> scaled_dot_product_attention_backward(
    const at::Tensor& grad, const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
    const std::optional<at::Tensor>& attn_mask, bool is_causal, std::optional<double> scale,
    const at::Tensor& /*out*/, const at::Tensor& /*logsumexp*/, std::array<bool, 4> mask) {
  // P = softmax(S), O = P V: dV = P^T dO, dS = P * (dO V^T - rowsum(P * dO V^T)), dQ = dS K * scale,
  // dK = dS^T Q * scale, a float mask's = dS summed to its shape.
  const Attention a = attention_of(query, key, value, attn_mask, is_causal, scale);
  const at::Tensor g = as_dtype(grad, a.probs.scalar_type());
  const at::Tensor dp = at::matmul(g, a.value.mT());
  const at::Tensor ds = a.probs * (dp - at::sum(a.probs * dp, {-1}, /*keepdim=*/true));
  std::vector<at::Tensor> out(4);
  if (mask[0]) out[0] = as_dtype(at::matmul(ds, a.key) * a.scale, query.scalar_type());
  if (mask[1]) out[1] = ungroup(at::matmul(ds.mT(), a.query) * a.scale, key, a.group);
  if (mask[2]) out[2] = ungroup(at::matmul(a.probs.mT(), g), value, a.group);
  if (mask[3] && float_mask(attn_mask)) out[3] = sum_to(ds, TensorMeta(*attn_mask));
  return out;
}

at::Tensor scaled_dot_product_attention_jvp(
    const at::Tensor& query_t, const at::Tensor& key_t, const at::Tensor& value_t,
    const std::optional<at::Tensor>& attn_mask_t, const at::Tensor& query, const at::Tensor& key,
    const at::Tensor& value, const std::optional<at::Tensor>& attn_mask, bool is_causal,
    std::optional<double> scale, const at::Tensor& out, const at::Tensor& /*logsumexp*/) {
  // dS = (dQ K^T + Q dK^T) * scale + dmask, dP = P * (dS - rowsum(P * dS)), dO = dP V + P dV.
  const Attention a = attention_of(query, key, value, attn_mask, is_causal, scale);
  const at::ScalarType ct = a.probs.scalar_type();
  at::Tensor ds = (at::matmul(as_dtype(query_t, ct), a.key.mT()) +
                   at::matmul(a.query, group_heads(as_dtype(key_t, ct), a.group).mT())) *
                  a.scale;
  if (float_mask(attn_mask) && attn_mask_t.has_value() && attn_mask_t->defined())
    ds = ds + as_dtype(*attn_mask_t, ct);
  const at::Tensor dp = a.probs * (ds - at::sum(a.probs * ds, {-1}, /*keepdim=*/true));
  const at::Tensor dout =
      at::matmul(dp, a.value) + at::matmul(a.probs, group_heads(as_dtype(value_t, ct), a.group));
  return as_dtype(dout, out.scalar_type());
}

}  // namespace structgen::autograd
