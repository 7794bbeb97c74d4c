// What scaled_dot_product_attention's CPU kernels (cpu.cpp) and CUDA host glue (cuda_host.cpp)
// share: the mask seen per head, the scale, key/value head groups, and the math kernel on any
// device (every head's [l, s] scores at once through ATen's matmul and softmax: the memory the
// tiled kernels avoid; the autotuner may pick it for small problems, where it is faster).
#pragma once

#include <ops/attention/launch.h>  // MaskKind

#include <ATen/TensorOperators.h>
#include <ATen/core/Tensor.h>
#include <ATen/OpMathType.h>
#include <ATen/ops/_safe_softmax.h>
#include <ATen/ops/logsumexp.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/ones.h>

#include <cmath>
#include <limits>
#include <optional>
#include <ops/runtime_names.h>

namespace structops::attention {

// The default scale, 1 / sqrt(head size), as torch's.
inline double scale_of(const at::Tensor& query, std::optional<double> scale) {
  return scale.has_value() ? *scale : 1.0 / std::sqrt(static_cast<double>(query.size(-1)));
}

// [*batch, hk, s, e] -> [*batch, hk * group, s, e], each head repeated group times in a row.
inline at::Tensor group_heads(const at::Tensor& t, int64_t group) {
  if (group == 1) return t;
  const int64_t h = t.dim() - 3;
  std::vector<int64_t> repeated(t.sizes().begin(), t.sizes().end()), merged = repeated;
  repeated.insert(repeated.begin() + h + 1, group);
  merged[h] *= group;
  return t.unsqueeze(h + 1).expand(repeated).reshape(merged);
}

inline int64_t group_of(const at::Tensor& query, const at::Tensor& key) {
  return key.size(-3) == 0 ? 1 : query.size(-3) / key.size(-3);
}

// A mask as the kernels read it: where head h's [l, s] plane starts and its strides (0 where it
// broadcasts). Keep masks are bool, Add masks the compute type.
struct MaskView {
  MaskKind kind = MaskKind::None;
  const void* data = nullptr;
  const int64_t* offsets = nullptr;  // one per head, in elements
  int64_t stride_l = 0, stride_s = 0;

  // row[0:cols]: the scores of query qi against keys k0 ... k0 + cols - 1 of head h.
  template <typename A>
  void apply(A* row, int64_t h, int64_t qi, int64_t k0, int64_t cols) const {
    if (kind == MaskKind::None) return;
    const int64_t base = offsets[h] + qi * stride_l + k0 * stride_s;
    if (kind == MaskKind::Keep) {
      const bool* keep = static_cast<const bool*>(data) + base;
      for (int64_t j = 0; j < cols; ++j)
        row[j] = keep[j * stride_s] ? row[j] : -std::numeric_limits<A>::infinity();
    } else {
      const A* add = static_cast<const A*>(data) + base;
      for (int64_t j = 0; j < cols; ++j) row[j] += add[j * stride_s];
    }
  }
};

// The caller's mask (any shape that broadcasts to [*batch, hq, l, s], the meta function checked)
// in the dtype the kernels read, viewed per head without copying the broadcast.
class Mask {
 public:
  Mask(const std::optional<at::Tensor>& attn_mask, const at::Tensor& logsumexp, int64_t s,
       at::ScalarType ct) {
    if (!attn_mask.has_value()) return;
    kind_ = attn_mask->scalar_type() == at::kBool ? MaskKind::Keep : MaskKind::Add;
    std::vector<int64_t> shape(logsumexp.sizes().begin(), logsumexp.sizes().end());
    shape.push_back(s);
    data_ = attn_mask->to(kind_ == MaskKind::Keep ? at::kBool : ct).expand(shape);
    const int64_t rank = data_.dim(), heads = logsumexp.numel() / std::max<int64_t>(1, shape[rank - 2]);
    offsets_ = at::empty({heads}, at::TensorOptions().dtype(at::kLong));
    int64_t* o = offsets_.data_ptr<int64_t>();
    for (int64_t h = 0; h < heads; ++h) {  // h over the [*batch, hq] dims, row-major
      int64_t rest = h, offset = data_.storage_offset();
      for (int64_t d = rank - 3; d >= 0; --d) {
        offset += rest % shape[d] * data_.stride(d);
        rest /= shape[d];
      }
      o[h] = offset;
    }
  }
  // The view for kernels on the host; `offsets` replaces the host offsets (a device copy).
  MaskView view(const int64_t* offsets = nullptr) const {
    if (kind_ == MaskKind::None) return {};
    const int64_t rank = data_.dim();
    return {kind_, static_cast<const char*>(data_.storage().data()),
            offsets != nullptr ? offsets : offsets_.const_data_ptr<int64_t>(), data_.stride(rank - 2),
            data_.stride(rank - 1)};
  }
  const at::Tensor& offsets() const { return offsets_; }

 private:
  MaskKind kind_ = MaskKind::None;
  at::Tensor data_, offsets_;
};

inline void math(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                 const std::optional<at::Tensor>& attn_mask, bool is_causal, std::optional<double> scale,
                 const at::Tensor& out, const at::Tensor& logsumexp) {
  const at::ScalarType ct = at::toOpMathType(query.scalar_type());
  const int64_t group = group_of(query, key);
  constexpr double inf = std::numeric_limits<double>::infinity();
  at::Tensor scores = at::matmul(query.to(ct), group_heads(key.to(ct), group).mT()) * scale_of(query, scale);
  if (attn_mask.has_value()) {
    scores = attn_mask->scalar_type() == at::kBool ? scores.masked_fill(attn_mask->logical_not(), -inf)
                                                   : scores + attn_mask->to(ct);
  }
  if (is_causal) {
    const at::Tensor keep = at::ones({query.size(-2), key.size(-2)}, query.options().dtype(at::kBool)).tril();
    scores = scores.masked_fill(keep.logical_not(), -inf);
  }
  logsumexp.copy_(at::logsumexp(scores, {-1}));
  out.copy_(at::matmul(at::_safe_softmax(scores, -1, std::nullopt), group_heads(value.to(ct), group)));
}

}  // namespace structops::attention
