// @generated from native_functions.yaml by codegen/templates/op_declarations.h.j2 — DO NOT EDIT.
// Regenerate with: python -m codegen (run by the CMake build)
// Declarations for aminmax: the hooks hand-written code in csrc/ defines.
// A missing definition is a link error, by design.
#pragma once

#include <ATen/core/Tensor.h>
#include <structops/structured.h>

namespace structops {
namespace meta {

// What the meta function of aminmax, aminmax.out computes.
struct aminmax_meta {
  TensorSpec min;
  TensorSpec max;
};

// Checks the arguments and computes the outputs; reads no data. Defined in csrc/ops/<family>/meta.cpp.
aminmax_meta aminmax(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim);

}  // namespace meta
namespace impl {

// CPU kernel of aminmax.out. Writes outputs whose sizes, strides and dtype equal the meta result.
void aminmax_out_cpu(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim, const at::Tensor& min, const at::Tensor& max);

}  // namespace impl
}  // namespace structops
