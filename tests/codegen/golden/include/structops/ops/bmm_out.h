// @generated from native_functions.yaml by codegen/templates/op_declarations.h.j2 — DO NOT EDIT.
// Regenerate with: python -m codegen (run by the CMake build)
// Declarations for bmm_out: the hooks hand-written code in csrc/ defines.
// A missing definition is a link error, by design.
#pragma once

#include <ATen/core/Tensor.h>
#include <structops/structured.h>

namespace structops {
namespace meta {

// What the meta function of bmm.out computes.
struct bmm_out_meta {
  TensorSpec out;
  at::ScalarType compute_dtype;  // what the kernel computes in (opmath)
  at::ScalarType common_dtype;   // what the inputs are brought to (pointwise kernels)
};

// Checks the arguments and computes the outputs; reads no data. Generated from the rule.
bmm_out_meta bmm_out(const at::Tensor& self, const at::Tensor& mat2);

}  // namespace meta
namespace impl {

// CPU kernel of bmm.out. Runs the variant that structops::autotune picks (generated). Writes outputs whose sizes, strides and dtype equal the meta result.
void bmm_out_cpu(const at::Tensor& self, const at::Tensor& mat2, at::ScalarType compute_dtype, const at::Tensor& out);
// CPU kernel variant 'loop' of bmm.out. Writes outputs whose sizes, strides and dtype equal the meta result.
void bmm_out_cpu_loop(const at::Tensor& self, const at::Tensor& mat2, at::ScalarType compute_dtype, const at::Tensor& out);
// CPU kernel variant 'blas' of bmm.out. Writes outputs whose sizes, strides and dtype equal the meta result.
void bmm_out_cpu_blas(const at::Tensor& self, const at::Tensor& mat2, at::ScalarType compute_dtype, const at::Tensor& out);

}  // namespace impl
}  // namespace structops
