// @generated from native_functions.yaml by codegen/templates/op_declarations.h.j2 — DO NOT EDIT.
// Regenerate with: python -m codegen (run by the CMake build)
// Declarations for my_fused: the hooks hand-written code in csrc/ defines.
// A missing definition is a link error, by design.
#pragma once

#include <ATen/core/Tensor.h>
#include <structops/structured.h>

namespace structops {
namespace impl {

// CPU kernel of my_fused.
at::Tensor my_fused_cpu(const at::Tensor& x, const std::optional<at::Tensor>& bias, double scale, c10::string_view mode);
// Meta kernel of my_fused.
at::Tensor my_fused_meta(const at::Tensor& x, const std::optional<at::Tensor>& bias, double scale, c10::string_view mode);

}  // namespace impl
}  // namespace structops
