// @generated from native_functions.yaml by codegen/templates/op_declarations.h.j2 — DO NOT EDIT.
// Regenerate with: python -m codegen (run by the CMake build)
// Declarations for add_Tensor: the hooks hand-written code in csrc/ defines.
// A missing definition is a link error, by design.
#pragma once

#include <ATen/core/Tensor.h>
#include <structops/structured.h>

namespace structops {
namespace meta {

// What the meta function of add.Tensor, add_.Tensor, add.out computes.
struct add_Tensor_meta {
  TensorSpec out;
  at::ScalarType compute_dtype;  // what the kernel computes in (opmath)
  at::ScalarType common_dtype;   // what the inputs are brought to (pointwise kernels)
};

// Checks the arguments and computes the outputs; reads no data. Generated from the rule.
add_Tensor_meta add_Tensor(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha);

}  // namespace meta
namespace impl {

// CPU kernel of add.out. Writes outputs whose sizes, strides and dtype equal the meta result.
void add_out_cpu(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha, at::ScalarType compute_dtype, const at::Tensor& out);

}  // namespace impl
}  // namespace structops
