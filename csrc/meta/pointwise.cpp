// Meta functions of the foundation's pointwise ops: broadcast shape, promoted dtype and
// TensorIterator's output layout, all on SymInt.
#include <structops/elementwise.h>
#include <structops/ops/add_Tensor.h>
#include <structops/ops/mul_Tensor.h>
#include <structops/ops/neg.h>

#include <ATen/ops/result_type.h>

namespace structops::meta {

namespace {

// PyTorch's alpha rules for add/sub.
void check_alpha(const char* op, at::ScalarType dtype, const at::Scalar& alpha) {
  TORCH_CHECK(!alpha.isBoolean() || dtype == at::kBool, op,
              ": a boolean alpha is only supported for bool results, got alpha=", alpha.toBool(),
              " with result type ", dtype);
  TORCH_CHECK(at::isFloatingType(dtype) || at::isComplexType(dtype) || alpha.isIntegral(true), op,
              ": for integral inputs alpha must not be a floating point number, got alpha=",
              alpha, " with result type ", dtype);
  TORCH_CHECK(at::isComplexType(dtype) || !alpha.isComplex(), op,
              ": for non-complex inputs alpha must not be complex, got alpha=", alpha);
}

TensorSpec binary(const char* op, const at::Tensor& self, const at::Tensor& other) {
  auto shape = broadcast_shapes(op, {{"self", self}, {"other", other}});
  auto strides = elementwise_strides(shape, {{"self", self}, {"other", other}});
  return TensorSpec{std::move(shape), std::move(strides), at::result_type(self, other)};
}

}  // namespace

add_Tensor_meta add_Tensor(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  auto spec = binary("add", self, other);
  check_alpha("add", spec.dtype, alpha);
  return {std::move(spec)};
}

mul_Tensor_meta mul_Tensor(const at::Tensor& self, const at::Tensor& other) {
  return {binary("mul", self, other)};
}

neg_meta neg(const at::Tensor& self) {
  TORCH_CHECK(self.scalar_type() != at::kBool,
              "neg: negation, the `-` operator, on a bool tensor is not supported; to invert a "
              "mask use the `~` or `logical_not()` operator instead");
  auto shape = c10::SymDimVector(self.sym_sizes().begin(), self.sym_sizes().end());
  auto strides = elementwise_strides(shape, {{"self", self}});
  return {TensorSpec{std::move(shape), std::move(strides), self.scalar_type()}};
}

}  // namespace structops::meta
