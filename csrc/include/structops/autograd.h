// What the generated autograd kernels (autograd_<N>.cpp, codegen/templates/autograd.cpp.j2) and
// their backward formulas call: saving arguments, and the helpers derivative formulas name
// (codegen/autograd/functions.py lists them; docs/autograd.md documents them).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>
#include <torch/csrc/autograd/function.h>
#include <c10/core/SymInt.h>
#include <c10/util/OptionalArrayRef.h>

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace structops::autograd {

// What backward keeps of a tensor read only for its form (sum_to(grad, self)): not its data.
struct TensorMeta {
  std::vector<c10::SymInt> sizes;
  at::ScalarType dtype = at::kFloat;

  TensorMeta() = default;
  explicit TensorMeta(const at::Tensor& t)
      : sizes(t.sym_sizes().begin(), t.sym_sizes().end()), dtype(t.scalar_type()) {}
};

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

// -- formula helpers ---------------------------------------------------------------------------

// A gradient in the form of its input: summed over the dims broadcasting added or expanded, and
// in the input's dtype (float16 + float32 gives a float32 result; self's gradient is float16).
at::Tensor sum_to(const at::Tensor& grad, const TensorMeta& like);
// A number as a 0-dim tensor in like's dtype and device (a branch of a host-side condition).
at::Tensor as_tensor(const at::Scalar& value, const at::Tensor& like);
// clamp's gradient mask: lo <= x <= hi, both inclusive, a None bound being no bound.
at::Tensor in_bounds(const at::Tensor& x, const std::optional<at::Scalar>& lo, const std::optional<at::Scalar>& hi);
at::Tensor in_bounds(const at::Tensor& x, const std::optional<at::Tensor>& lo, const std::optional<at::Tensor>& hi);
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
// select(mode, "trunc", ...): whether the str? argument holds `value`.
inline bool is(const std::optional<std::string>& mode, std::string_view value) {
  return mode.has_value() && *mode == value;
}
inline bool is(const std::string& mode, std::string_view value) { return mode == value; }

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

}  // namespace structops::autograd
