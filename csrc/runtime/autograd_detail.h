// The helpers autograd_formulas.cpp (backward) and autograd_jvp.cpp (forward mode) share; not part
// of the runtime's public headers.
#pragma once

#include <structgen/autograd.h>

#include <vector>

namespace structgen::autograd::detail {

// The dims a reduction over `dim` (None or empty: all) reduces, wrapped and sorted.
std::vector<int64_t> dims_of(int64_t rank, at::OptionalIntArrayRef dim);
at::Tensor as_dtype(const at::Tensor& t, at::ScalarType dtype);
// The reduced dims kept as size 1 (a reduction's output seen with keepdim=True).
at::Tensor keep_dims(const at::Tensor& t, int64_t rank, at::OptionalIntArrayRef dim, bool keepdim);
// 2 / max(N - correction, 0), N the count var reduces over (symbolic when compiled).
at::Tensor var_scale(const at::Tensor& self, const std::vector<int64_t>& dims,
                     const std::optional<at::Scalar>& correction);
// self minus its mean over dims.
at::Tensor centered(const at::Tensor& self, const std::vector<int64_t>& dims);

// Each index's bag and the factor its weight row enters its bag's output with (sum: 1, mean:
// 1 / the bag's size, max: 1 where the row was its bag's maximum, the first one on ties; undefined
// for 1), shared by embedding_bag's backward and forward mode. Written with differentiable ops.
struct Bags {
  at::Tensor ix;     // [n] the indices, flat, as int64
  at::Tensor bag;    // [n] the bag of each
  at::Tensor scale;  // [n, 1] or [n, d], or undefined
};
Bags bags_of(const at::Tensor& weight, const at::Tensor& indices, const at::Tensor& offsets,
             const at::Tensor& result, int64_t mode, bool include_last_offset,
             const at::TensorOptions& options);

// Attention's probabilities recomputed for its backward and forward mode, in the compute dtype
// (float for float16/bfloat16): key and value with one head per query head (a group of query
// heads shares one key/value head), softmax(query key^T * scale + mask) with a row masked whole 0.
struct Attention {
  at::Tensor query, key, value;  // key and value repeated to the query's heads
  at::Tensor probs;
  double scale = 1;
  c10::SymInt group = 1;  // query heads per key/value head
};
Attention attention_of(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                       const std::optional<at::Tensor>& attn_mask, bool is_causal,
                       std::optional<double> scale);
// [*batch, hk, s, e] -> [*batch, hk * group, s, e], each head repeated `group` times in a row.
at::Tensor group_heads(const at::Tensor& t, const c10::SymInt& group);

}  // namespace structgen::autograd::detail
