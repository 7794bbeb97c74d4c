// @generated from native_functions.yaml by codegen/templates/op_declarations.h.j2 — DO NOT EDIT.
// Regenerate with: python -m codegen (run by the CMake build)
// Declarations for amax: the hooks hand-written code in csrc/ defines.
// A missing definition is a link error, by design.
#pragma once

#include <ATen/core/Tensor.h>
#include <structops/structured.h>

namespace structops {
namespace meta {

// What the meta function of amax, amax.out computes.
struct amax_meta {
  TensorSpec out;
  std::vector<int64_t> reduced_dims;  // precomputed
  bool all_dims;  // precomputed
  at::ScalarType compute_dtype;  // what the kernel computes in (opmath)
  at::ScalarType common_dtype;   // what the inputs are brought to (pointwise kernels)
};

// Checks the arguments and computes the outputs; reads no data. Generated from the rule.
amax_meta amax(const at::Tensor& self, at::IntArrayRef dim, bool keepdim);

}  // namespace meta
namespace impl {

// CPU kernel of amax.out. Writes outputs whose sizes, strides and dtype equal the meta result.
void amax_out(const at::Tensor& self, at::IntArrayRef reduced_dims, bool keepdim, bool all_dims, at::ScalarType compute_dtype, const at::Tensor& out);
// CUDA kernel of amax.out. Writes outputs whose sizes, strides and dtype equal the meta result.
void amax_out(const at::Tensor& self, at::IntArrayRef reduced_dims, bool keepdim, bool all_dims, at::ScalarType compute_dtype, const at::Tensor& out);

}  // namespace impl
}  // namespace structops
