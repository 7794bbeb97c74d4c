// @generated from native_functions.yaml by codegen/templates/meta.cpp.j2 (generator 0.6.0) — DO NOT EDIT.
// Regenerate with: python -m structgen.codegen (run by the CMake build)
// Meta functions generated from the `meta:` rules of the manifest (docs/rules.md): shape,
// dtype and layout of every output, all on SymInt. Both the Meta kernel and the real kernels
// call them, so shapes cannot drift between fake and real tensors.
#include <structgen/elementwise.h>
#include <structgen/rules.h>
#include <fixture/include/ops/add_Tensor.h>
#include <fixture/include/ops/scaled_act.h>
#include <fixture/include/ops/_scaled_tanh_backward_self.h>

namespace fixture::ops::meta {
using namespace ::structgen;  // the runtime's names, unqualified (codegen/project.py)

// add.Tensor, add_.Tensor, add.out
add_Tensor_meta add_Tensor(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  static constexpr std::string_view op = "add";
  rules::Dims out_shape = rules::broadcast(op, {{"self", self.sym_sizes()}, {"other", other.sym_sizes()}});
  const rules::Dtypes out_dtypes = rules::promote(op, {{"self", self}, {"other", other}}, {}, {}, rules::Promotion::DEFAULT);
  rules::check_alpha(op, out_dtypes.result, alpha);
  rules::Dims out_strides = elementwise_strides(out_shape, {{"self", self}, {"other", other}});
  return {TensorSpec{std::move(out_shape), std::move(out_strides), out_dtypes.result}, out_dtypes.compute, out_dtypes.common};
}

// scaled_act, scaled_act.out
scaled_act_meta scaled_act(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha, c10::string_view mode) {
  static constexpr std::string_view op = "scaled_act";
  rules::Dims out_shape = rules::broadcast(op, {{"self", self.sym_sizes()}, {"other", other.sym_sizes()}});
  const rules::Dtypes out_dtypes = rules::promote(op, {{"self", self}, {"other", other}}, {}, {}, rules::Promotion::INT_TO_FLOAT);
  rules::check_allowed_promoted(op, {{"self", self}, {"other", other}}, out_dtypes.promoted, rules::bit(at::kHalf) | rules::bit(at::kBFloat16) | rules::bit(at::kFloat) | rules::bit(at::kDouble) | rules::bit(at::kByte) | rules::bit(at::kChar) | rules::bit(at::kShort) | rules::bit(at::kInt) | rules::bit(at::kLong) | rules::bit(at::kBool), "float16, bfloat16, float32, float64, uint8, int8, int16, int32, int64, bool");
  rules::Dims out_strides = elementwise_strides(out_shape, {{"self", self}, {"other", other}});
  TORCH_CHECK(mode == "relu" || mode == "tanh", op, ": mode must be one of 'relu', 'tanh', got '", mode, "'");
  return {TensorSpec{std::move(out_shape), std::move(out_strides), out_dtypes.result}, out_dtypes.compute, out_dtypes.common};
}

// _scaled_tanh_backward_self, _scaled_tanh_backward_self.out
_scaled_tanh_backward_self_meta _scaled_tanh_backward_self(const at::Tensor& grad, const at::Tensor& self, const at::Scalar& alpha) {
  static constexpr std::string_view op = "_scaled_tanh_backward_self";
  rules::Dims out_shape = rules::broadcast(op, {{"grad", grad.sym_sizes()}, {"self", self.sym_sizes()}});
  const rules::Dtypes out_dtypes = rules::promote(op, {{"grad", grad}, {"self", self}}, {}, {}, rules::Promotion::DEFAULT);
  rules::check_allowed(op, "grad", grad.scalar_type(), rules::bit(at::kHalf) | rules::bit(at::kBFloat16) | rules::bit(at::kFloat) | rules::bit(at::kDouble), "float16, bfloat16, float32, float64");
  rules::check_allowed(op, "self", self.scalar_type(), rules::bit(at::kHalf) | rules::bit(at::kBFloat16) | rules::bit(at::kFloat) | rules::bit(at::kDouble), "float16, bfloat16, float32, float64");
  rules::Dims out_strides = elementwise_strides(out_shape, {{"grad", grad}, {"self", self}});
  return {TensorSpec{std::move(out_shape), std::move(out_strides), out_dtypes.result}, out_dtypes.compute, out_dtypes.common};
}

}  // namespace fixture::ops::meta
