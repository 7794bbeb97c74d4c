// @generated from native_functions.yaml by codegen/templates/op_declarations.h.j2 — DO NOT EDIT.
// Regenerate with: python -m codegen (run by the CMake build)
// Declarations for scaled_act: the hooks hand-written code in csrc/ defines.
// A missing definition is a link error, by design.
#pragma once

#include <ATen/core/Tensor.h>
#include <structops/structured.h>

namespace structops {
namespace meta {

// What the meta function of scaled_act, scaled_act.out computes.
struct scaled_act_meta {
  TensorSpec out;
  at::ScalarType compute_dtype;  // what the kernel computes in (opmath)
  at::ScalarType common_dtype;   // what the inputs are brought to (pointwise kernels)
};

// Checks the arguments and computes the outputs; reads no data. Generated from the rule.
scaled_act_meta scaled_act(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha, c10::string_view mode);

}  // namespace meta
namespace impl {

// CPU kernel of scaled_act.out. Writes outputs whose sizes, strides and dtype equal the meta result.
void scaled_act_out_cpu(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha, c10::string_view mode, at::ScalarType common_dtype, const at::Tensor& out);
// CUDA kernel of scaled_act.out. Runs the variant that structops::autotune picks (generated). Writes outputs whose sizes, strides and dtype equal the meta result.
void scaled_act_out_cuda(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha, c10::string_view mode, at::ScalarType common_dtype, const at::Tensor& out);
// CUDA kernel variant 'wide' of scaled_act.out. Writes outputs whose sizes, strides and dtype equal the meta result.
void scaled_act_out_cuda__wide(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha, c10::string_view mode, at::ScalarType common_dtype, const at::Tensor& out);
// CUDA kernel variant 'narrow' of scaled_act.out. Writes outputs whose sizes, strides and dtype equal the meta result.
void scaled_act_out_cuda__narrow(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha, c10::string_view mode, at::ScalarType common_dtype, const at::Tensor& out);

}  // namespace impl
}  // namespace structops
