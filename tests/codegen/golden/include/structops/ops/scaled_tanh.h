// @generated from native_functions.yaml by codegen/templates/op_declarations.h.j2 — DO NOT EDIT.
// Regenerate with: python -m codegen (run by the CMake build)
// Declarations for scaled_tanh: the hooks hand-written code in csrc/ defines.
// A missing definition is a link error, by design.
#pragma once

#include <ATen/core/Tensor.h>
#include <structops/structured.h>

namespace structops {
namespace meta {

// What the meta function of scaled_tanh, scaled_tanh.out computes.
struct scaled_tanh_meta {
  TensorSpec out;
  at::ScalarType compute_dtype;  // what the kernel computes in (opmath)
  at::ScalarType common_dtype;   // what the inputs are brought to (pointwise kernels)
};

// Checks the arguments and computes the outputs; reads no data. Generated from the rule.
scaled_tanh_meta scaled_tanh(const at::Tensor& self, const at::Scalar& alpha);

}  // namespace meta
namespace impl {

// CPU kernel of scaled_tanh.out. Writes outputs whose sizes, strides and dtype equal the meta result.
void scaled_tanh_out_cpu(const at::Tensor& self, const at::Scalar& alpha, at::ScalarType common_dtype, const at::Tensor& out);
// CUDA kernel of scaled_tanh.out. Writes outputs whose sizes, strides and dtype equal the meta result.
void scaled_tanh_out_cuda(const at::Tensor& self, const at::Scalar& alpha, at::ScalarType common_dtype, const at::Tensor& out);

}  // namespace impl
}  // namespace structops
