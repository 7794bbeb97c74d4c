// What the generated autograd kernels (autograd_<N>.cpp, codegen/templates/autograd.cpp.j2) and
// their backward formulas call: saving arguments, and the helpers derivative formulas name
// (codegen/autograd/functions.py lists them; docs/autograd.md documents them).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>
#include <torch/csrc/autograd/function.h>
#include <c10/core/SymInt.h>
#include <c10/util/OptionalArrayRef.h>

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace structgen::autograd {

// What backward keeps of a tensor read only for its form (sum_to(grad, self)): not its data.
struct TensorMeta {
  std::vector<c10::SymInt> sizes;
  at::ScalarType dtype = at::kFloat;

  TensorMeta() = default;
  explicit TensorMeta(const at::Tensor& t)
      : sizes(t.sym_sizes().begin(), t.sym_sizes().end()), dtype(t.scalar_type()) {}
};
inline std::vector<TensorMeta> metas(at::TensorList ts) {
  std::vector<TensorMeta> out;
  out.reserve(ts.size());
  for (const auto& t : ts) out.emplace_back(t);
  return out;
}

// An argument as a Node keeps it: views (ArrayRef, string_view) become owned values.
template <class T>
T keep(T v) {
  return v;
}
inline std::vector<int64_t> keep(at::IntArrayRef v) { return v.vec(); }
inline std::vector<c10::SymInt> keep(c10::SymIntArrayRef v) { return v.vec(); }
inline std::optional<std::vector<int64_t>> keep(at::OptionalIntArrayRef v) {
  return v.has_value() ? std::optional<std::vector<int64_t>>(v->vec()) : std::nullopt;
}
inline std::string keep(c10::string_view v) { return std::string(v); }
inline std::optional<std::string> keep(std::optional<c10::string_view> v) {
  return v.has_value() ? std::optional<std::string>(std::string(*v)) : std::nullopt;
}
template <class T>
using kept_t = std::decay_t<decltype(keep(std::declval<T>()))>;
// A kept argument as formulas take it (an int[]? as at::OptionalIntArrayRef again).
template <class T>
const T& view(const T& v) {
  return v;
}
inline at::OptionalIntArrayRef view(const std::optional<std::vector<int64_t>>& v) {
  return v.has_value() ? at::OptionalIntArrayRef(*v) : at::OptionalIntArrayRef();
}

// A number where an ATen operator called from a formula takes an `int` (not a SymInt): the
// argument may be an op's SymInt where an older torch's schema of that operator says int.
inline int64_t as_int(int64_t v) { return v; }
inline int64_t as_int(const c10::SymInt& v) { return v.guard_int(__FILE__, __LINE__); }
inline int64_t as_int(const at::Scalar& v) { return v.toLong(); }
inline std::optional<c10::string_view> view(const std::optional<std::string>& v) {
  return v.has_value() ? std::optional<c10::string_view>(*v) : std::nullopt;
}

// -- formula helpers ---------------------------------------------------------------------------

// A gradient in the form of its input: summed over the dims broadcasting added or expanded, and
// in the input's dtype (float16 + float32 gives a float32 result; self's gradient is float16).
at::Tensor sum_to(const at::Tensor& grad, const TensorMeta& like);
// A fused backward kernel's result times the number it left out (alpha): no pass when it is 1.
inline at::Tensor scaled(const at::Tensor& t, const at::Scalar& s) { return s.equal(1) ? t : t.mul(s); }
// A number as a 0-dim tensor in like's dtype and device (a branch of a host-side condition).
at::Tensor as_tensor(const at::Scalar& value, const at::Tensor& like);
at::Tensor nonneg_real(const at::Tensor& x);
bool nonneg_real(const at::Scalar& x);
inline at::Tensor conj(const at::Tensor& x) { return x.is_complex() ? x.conj() : x; }
inline at::Scalar conj(const at::Scalar& x) { return x.conj(); }
at::Tensor maximum(const at::Tensor& a, const at::Tensor& b);
at::Tensor maximum(const at::Tensor& a, const at::Scalar& b);
at::Tensor maximum(const at::Scalar& a, const at::Tensor& b);
at::Tensor minimum(const at::Tensor& a, const at::Tensor& b);
at::Tensor minimum(const at::Tensor& a, const at::Scalar& b);
at::Tensor minimum(const at::Scalar& a, const at::Tensor& b);
at::Tensor trunc_div(const at::Tensor& a, const at::Tensor& b);
at::Tensor trunc_div(const at::Tensor& a, const at::Scalar& b);
// a * b + c (a formula's fma, in a condition or a tangent: one rounding is the kernels' business)
inline at::Tensor fma(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c) {
  return a.mul(b).add(c);
}
// select(mode, "trunc", ...): whether the str? argument holds `value`.
inline bool is(const std::optional<std::string>& mode, std::string_view value) {
  return mode.has_value() && *mode == value;
}
inline bool is(const std::string& mode, std::string_view value) { return mode == value; }
inline bool is(c10::string_view mode, std::string_view value) { return std::string_view(mode) == value; }
inline bool is(const std::optional<c10::string_view>& mode, std::string_view value) {
  return mode.has_value() && std::string_view(*mode) == value;
}

inline at::Tensor mT(const at::Tensor& x) { return x.mT(); }
// An input written `not_implemented`: its gradient was asked for (it requires grad).
at::Tensor not_implemented(std::string_view op, std::string_view input);

// Backward helpers of the non-pointwise ops (csrc/runtime/autograd_formulas.cpp); their rows in
// codegen/autograd/functions.py say what each computes.
at::Tensor unreduce(const at::Tensor& grad, const TensorMeta& self, at::OptionalIntArrayRef dim,
                    bool keepdim);
at::Tensor mean_backward(const at::Tensor& grad, const TensorMeta& self, at::OptionalIntArrayRef dim,
                         bool keepdim);
at::Tensor extremum_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& result,
                             at::OptionalIntArrayRef dim, bool keepdim);
at::Tensor prod_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& result,
                         at::OptionalIntArrayRef dim, bool keepdim);
at::Tensor var_backward(const at::Tensor& grad, const at::Tensor& self, at::OptionalIntArrayRef dim,
                        const std::optional<at::Scalar>& correction, bool keepdim);
at::Tensor std_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& result,
                        at::OptionalIntArrayRef dim, const std::optional<at::Scalar>& correction,
                        bool keepdim);
at::Tensor logsumexp_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& result,
                              at::IntArrayRef dim, bool keepdim);
at::Tensor norm_backward(const at::Tensor& grad, const at::Tensor& self, const std::optional<at::Scalar>& p,
                         const at::Tensor& result, at::IntArrayRef dim, bool keepdim);
// dropout's gradient, and its tangent (the op is linear given its mask): t * mask * scale with
// torch's scale, 1 / (1 - p) (0 for p = 1) in training and 1 out of it. ATen ops: differentiable.
at::Tensor dropout_backward(const at::Tensor& t, const at::Tensor& mask, double p, std::optional<bool> train);
at::Tensor cumsum_backward(const at::Tensor& grad, const TensorMeta& self, int64_t dim);
at::Tensor softmax_backward(const at::Tensor& grad, const at::Tensor& result, int64_t dim,
                            const TensorMeta& self);
at::Tensor log_softmax_backward(const at::Tensor& grad, const at::Tensor& result, int64_t dim,
                                const TensorMeta& self);
// Forward-mode helpers (the 'result:' formulas): an output's tangent from the inputs'.
at::Tensor var_jvp(const at::Tensor& self_t, const at::Tensor& self, at::OptionalIntArrayRef dim,
                   const std::optional<at::Scalar>& correction, bool keepdim);
at::Tensor std_jvp(const at::Tensor& self_t, const at::Tensor& self, const at::Tensor& result,
                   at::OptionalIntArrayRef dim, const std::optional<at::Scalar>& correction, bool keepdim);
at::Tensor logsumexp_jvp(const at::Tensor& self_t, const at::Tensor& self, const at::Tensor& result,
                         at::IntArrayRef dim, bool keepdim);
at::Tensor extremum_jvp(const at::Tensor& self_t, const at::Tensor& self, const at::Tensor& result,
                        at::OptionalIntArrayRef dim, bool keepdim);
at::Tensor linear_jvp(const at::Tensor& input_t, const at::Tensor& weight_t,
                      const std::optional<at::Tensor>& bias_t, const at::Tensor& input,
                      const at::Tensor& weight);
at::Tensor softmax_jvp(const at::Tensor& self_t, const at::Tensor& result, int64_t dim);
at::Tensor log_softmax_jvp(const at::Tensor& self_t, const at::Tensor& result, int64_t dim);
at::Tensor mse_loss_jvp(const at::Tensor& self_t, const at::Tensor& target_t, const at::Tensor& self,
                        const at::Tensor& target, int64_t reduction);
at::Tensor prod_jvp(const at::Tensor& self_t, const at::Tensor& self, const at::Tensor& result,
                    at::OptionalIntArrayRef dim, bool keepdim);
at::Tensor norm_jvp(const at::Tensor& self_t, const at::Tensor& self, const std::optional<at::Scalar>& p,
                    const at::Tensor& result, at::IntArrayRef dim, bool keepdim);
at::Tensor cdist_jvp(const at::Tensor& x1_t, const at::Tensor& x2_t, const at::Tensor& x1,
                     const at::Tensor& x2, double p, const at::Tensor& result);
at::Tensor layer_norm_jvp(const at::Tensor& input_t, const std::optional<at::Tensor>& weight_t,
                          const std::optional<at::Tensor>& bias_t, const at::Tensor& input,
                          c10::SymIntArrayRef normalized_shape, const std::optional<at::Tensor>& weight,
                          const at::Tensor& mean, const at::Tensor& rstd);
at::Tensor rms_norm_jvp(const at::Tensor& input_t, const std::optional<at::Tensor>& weight_t,
                        const at::Tensor& input, c10::SymIntArrayRef normalized_shape,
                        const std::optional<at::Tensor>& weight, std::optional<double> eps,
                        const at::Tensor& rstd);
at::Tensor batch_norm_jvp(const at::Tensor& input_t, const std::optional<at::Tensor>& weight_t,
                          const std::optional<at::Tensor>& bias_t, const at::Tensor& input,
                          const std::optional<at::Tensor>& weight,
                          const std::optional<at::Tensor>& running_mean,
                          const std::optional<at::Tensor>& running_var, const at::Tensor& save_mean,
                          const at::Tensor& save_invstd, bool training, double eps);
at::Tensor embedding_bag_jvp(const at::Tensor& weight_t,
                             const std::optional<at::Tensor>& per_sample_weights_t, const at::Tensor& weight,
                             const at::Tensor& indices, const at::Tensor& offsets, const at::Tensor& result,
                             int64_t mode, const std::optional<at::Tensor>& per_sample_weights,
                             bool include_last_offset);
// max_pool2d/3d: each output is the element its index names in its plane (spatial dims flattened).
at::Tensor max_pool_jvp(const at::Tensor& self_t, const at::Tensor& indices, int64_t spatial);
inline at::Tensor max_pool2d_jvp(const at::Tensor& self_t, const at::Tensor& indices) {
  return max_pool_jvp(self_t, indices, 2);
}
inline at::Tensor max_pool3d_jvp(const at::Tensor& self_t, const at::Tensor& indices) {
  return max_pool_jvp(self_t, indices, 3);
}
at::Tensor binary_cross_entropy_jvp(const at::Tensor& self_t, const at::Tensor& target_t,
                                    const at::Tensor& self, const at::Tensor& target,
                                    const std::optional<at::Tensor>& weight, int64_t reduction,
                                    const at::Tensor& result);
at::Tensor cross_entropy_jvp(const at::Tensor& self_t, const at::Tensor& target_t, const at::Tensor& self,
                             const at::Tensor& target, const std::optional<at::Tensor>& weight,
                             int64_t reduction, const c10::SymInt& ignore_index, double label_smoothing,
                             const at::Tensor& result);
std::vector<at::Tensor> layer_norm_backward(const at::Tensor& grad, const at::Tensor& input,
                                            c10::SymIntArrayRef normalized_shape, const at::Tensor& mean,
                                            const at::Tensor& rstd, const std::optional<at::Tensor>& weight,
                                            const std::optional<at::Tensor>& bias, std::array<bool, 3> mask);
std::vector<at::Tensor> rms_norm_backward(const at::Tensor& grad, const at::Tensor& input,
                                          c10::SymIntArrayRef normalized_shape, const at::Tensor& rstd,
                                          const std::optional<at::Tensor>& weight, std::optional<double> eps,
                                          std::array<bool, 2> mask);
// rms_norm's rstd for x (in the compute dtype) over dims: the saved one, or recomputed from x with
// ATen ops where a derivative of it will be taken (grad mode on: double backward; x has a forward
// tangent: hessian through jacfwd), since the saved statistic is a constant to autograd.
at::Tensor rms_norm_rstd(const at::Tensor& x, at::IntArrayRef dims, std::optional<double> eps,
                         const at::Tensor& rstd);
std::vector<at::Tensor> batch_norm_backward(const at::Tensor& grad, const at::Tensor& input,
                                            const std::optional<at::Tensor>& weight,
                                            const std::optional<at::Tensor>& running_mean,
                                            const std::optional<at::Tensor>& running_var,
                                            const at::Tensor& save_mean, const at::Tensor& save_invstd,
                                            bool training, double eps, std::array<bool, 3> mask);
std::vector<at::Tensor> matmul_backward(const at::Tensor& grad, const at::Tensor& self,
                                        const at::Tensor& other, std::array<bool, 2> mask);
at::Tensor linear_weight_backward(const at::Tensor& grad, const at::Tensor& input, const TensorMeta& weight);
std::vector<at::Tensor> cdist_backward(const at::Tensor& grad, const at::Tensor& x1, const at::Tensor& x2,
                                       double p, const at::Tensor& result, std::array<bool, 2> mask);
std::vector<at::Tensor> cat_backward(const at::Tensor& grad, const std::vector<TensorMeta>& tensors,
                                     int64_t dim);
std::vector<at::Tensor> stack_backward(const at::Tensor& grad, const std::vector<TensorMeta>& tensors,
                                       int64_t dim);
at::Tensor split_backward(const std::vector<at::Tensor>& grads, const TensorMeta& self,
                          c10::SymIntArrayRef split_sizes, int64_t dim);
std::vector<at::Tensor> embedding_bag_backward(const at::Tensor& grad, const at::Tensor& weight,
                                               const at::Tensor& indices, const at::Tensor& offsets,
                                               const at::Tensor& result, bool scale_grad_by_freq,
                                               int64_t mode,
                                               const std::optional<at::Tensor>& per_sample_weights,
                                               bool include_last_offset, std::array<bool, 2> mask);
at::Tensor index_select_backward(const at::Tensor& grad, const TensorMeta& self, int64_t dim,
                                 const at::Tensor& index);
at::Tensor gather_backward(const at::Tensor& grad, const TensorMeta& self, int64_t dim,
                           const at::Tensor& index);
at::Tensor take_backward(const at::Tensor& grad, const TensorMeta& self, const at::Tensor& index);
at::Tensor embedding_backward(const at::Tensor& grad, const at::Tensor& indices, const TensorMeta& weight);
at::Tensor masked_select_backward(const at::Tensor& grad, const TensorMeta& self, const at::Tensor& mask);
at::Tensor max_pool2d_backward(const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef kernel_size,
                               at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
                               bool ceil_mode, const at::Tensor& indices);
at::Tensor max_pool3d_backward(const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef kernel_size,
                               at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
                               bool ceil_mode, const at::Tensor& indices);
at::Tensor avg_pool2d_backward(const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef kernel_size,
                               at::IntArrayRef stride, at::IntArrayRef padding, bool ceil_mode,
                               bool count_include_pad, std::optional<int64_t> divisor_override);
std::vector<at::Tensor> mse_loss_backward(const at::Tensor& grad, const at::Tensor& self,
                                          const at::Tensor& target, int64_t reduction,
                                          std::array<bool, 2> mask);
std::vector<at::Tensor> binary_cross_entropy_backward(const at::Tensor& grad, const at::Tensor& self,
                                                      const at::Tensor& target,
                                                      const std::optional<at::Tensor>& weight,
                                                      int64_t reduction, std::array<bool, 2> mask);
std::vector<at::Tensor> cross_entropy_backward(const at::Tensor& grad, const at::Tensor& self,
                                               const at::Tensor& target,
                                               const std::optional<at::Tensor>& weight, int64_t reduction,
                                               const c10::SymInt& ignore_index, double label_smoothing,
                                               std::array<bool, 2> mask);
// Attention (scaled_dot_product_attention): query, key, value and a float attn_mask's gradients,
// from the probabilities recomputed (out and logsumexp are the forward's, unused: the recomputed
// softmax is exact in every dtype); forward mode: the output's tangent.
std::vector<at::Tensor> scaled_dot_product_attention_backward(
    const at::Tensor& grad, const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
    const std::optional<at::Tensor>& attn_mask, bool is_causal, std::optional<double> scale,
    const at::Tensor& out, const at::Tensor& logsumexp, std::array<bool, 4> mask);
at::Tensor scaled_dot_product_attention_jvp(
    const at::Tensor& query_t, const at::Tensor& key_t, const at::Tensor& value_t,
    const std::optional<at::Tensor>& attn_mask_t, const at::Tensor& query, const at::Tensor& key,
    const at::Tensor& value, const std::optional<at::Tensor>& attn_mask, bool is_causal,
    std::optional<double> scale, const at::Tensor& out, const at::Tensor& logsumexp);

// Arithmetic and comparisons of Scalars, keeping an int an int and a complex complex.
at::Scalar scalar_add(const at::Scalar& a, const at::Scalar& b);
at::Scalar scalar_sub(const at::Scalar& a, const at::Scalar& b);
at::Scalar scalar_mul(const at::Scalar& a, const at::Scalar& b);
at::Scalar scalar_div(const at::Scalar& a, const at::Scalar& b);
at::Scalar scalar_neg(const at::Scalar& a);
bool scalar_eq(const at::Scalar& a, const at::Scalar& b);
bool scalar_ne(const at::Scalar& a, const at::Scalar& b);
bool scalar_lt(const at::Scalar& a, const at::Scalar& b);
bool scalar_le(const at::Scalar& a, const at::Scalar& b);
bool scalar_gt(const at::Scalar& a, const at::Scalar& b);
bool scalar_ge(const at::Scalar& a, const at::Scalar& b);

// -- autograd kernels ----------------------------------------------------------------------------

// How torch holds autograd Nodes: std::shared_ptr before torch 2.13, c10::intrusive_ptr since.
using NodePtr = decltype(std::declval<torch::autograd::Node&>().getptr());
template <class T>
auto make_node() {
  if constexpr (std::is_same_v<NodePtr, std::shared_ptr<torch::autograd::Node>>) {
    return std::make_shared<T>();
  } else {
    return c10::make_intrusive<T>();
  }
}

// A written tensor's version bumped (autograd then refuses a stale saved copy of it).
void bump_version(const at::Tensor& t);
inline void bump_version(const std::optional<at::Tensor>& t) {
  if (t.has_value()) bump_version(*t);
}
inline void bump_version(at::TensorList ts) {
  for (const auto& t : ts) bump_version(t);
}

// A tensor the op writes and its formulas read (batch_norm's running statistics), kept as its
// value at the call: a copy, not a saved variable (the op's own write would make that stale).
inline std::optional<at::Tensor> copy_of(const std::optional<at::Tensor>& t) {
  return t.has_value() && t->defined() ? std::optional<at::Tensor>(t->detach().clone()) : std::nullopt;
}

// -- forward mode ----------------------------------------------------------------------------------

// Whether an argument carries a tangent (a forward gradient at level 0, as ATen's kernels ask).
inline bool has_tangent(const at::Tensor& t) { return t.defined() && t._fw_grad(/*level=*/0).defined(); }
inline bool has_tangent(const std::optional<at::Tensor>& t) { return t.has_value() && has_tangent(*t); }
inline bool has_tangent(at::TensorList ts) {
  for (const auto& t : ts) {
    if (has_tangent(t)) return true;
  }
  return false;
}
template <class... T>
bool any_tangent(const T&... ts) {
  return (has_tangent(ts) || ...);
}
// An argument's primal and tangent (zeros where it has none).
at::Tensor primal(const at::Tensor& t);
std::optional<at::Tensor> primal(const std::optional<at::Tensor>& t);
at::Tensor tangent(const at::Tensor& t);
std::optional<at::Tensor> tangent(const std::optional<at::Tensor>& t);
std::vector<at::Tensor> tangent(at::TensorList ts);
// The output's tangent, in its shape and dtype (a broadcast input's term expanded).
void set_tangent(const at::Tensor& result, const at::Tensor& tangent);
// A Tensor[] output's: each element that has a tangent and a dtype that carries one.
void set_tangents(const std::vector<at::Tensor>& results, const std::vector<at::Tensor>& tangents);
[[noreturn]] void forward_not_implemented(std::string_view overload);

// A saved Tensor? as formulas see it.
inline std::optional<at::Tensor> optional(const at::Tensor& t) {
  return t.defined() ? std::optional<at::Tensor>(t) : std::nullopt;
}
// Meta copies (shape, strides, dtype) of an inplace call's tensors: running the inplace overload
// on them raises what it would raise (a result dtype self cannot hold) without touching data.
at::Tensor on_meta(const at::Tensor& t);
std::optional<at::Tensor> on_meta(const std::optional<at::Tensor>& t);
std::vector<at::Tensor> on_meta(at::TensorList ts);

// out= overloads take no part in autograd (as torch's): a call that would need it raises
// torch's own error, naming the overload.
void check_out_not_differentiable(std::string_view overload, bool any_input_requires_grad);

}  // namespace structgen::autograd
