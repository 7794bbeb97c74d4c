// @generated from native_functions.yaml by codegen/templates/runtime_kernels_cpu.cpp.j2 (generator 0.6.0) — DO NOT EDIT.
// Regenerate with: python -m structgen.codegen (run by the CMake build)
// CPU impls of the ops whose kernels are the runtime's (manifest `scan:`, `triangle:`): each one
// call of its family (structgen/cpu/scan.h, triangle.h). The meta function has given
// out its shape and dtype (dtype= applied).
#include <structgen/cpu/scan.h>
#include <structgen/cpu/triangle.h>
#include <fixture/include/ops/cumprod.h>
#include <fixture/include/ops/tril.h>

namespace fixture::ops::impl {

void cumprod_out_cpu(const at::Tensor& self, at::IntArrayRef scan_dim, at::ScalarType compute_dtype, const at::Tensor& out) {
  ::structgen::cpu::scan_out<::structgen::ScanCombine::Mul>(self, scan_dim, out);
}

void tril_out_cpu(const at::Tensor& self, c10::SymInt diagonal, at::ScalarType compute_dtype, const at::Tensor& out) {
  ::structgen::cpu::triangle_out(self, c10::SymInt(diagonal).guard_int(__FILE__, __LINE__), out, /*lower=*/true);
}

}  // namespace fixture::ops::impl
