// @generated from native_functions.yaml by codegen/templates/scans_cpu.cpp.j2 (generator 0.6.0) — DO NOT EDIT.
// Regenerate with: python -m structgen.codegen (run by the CMake build)
// CPU impls of the scan ops (manifest `scan: true`): each the runtime's scan with its combine
// (structgen/cpu/scan.h). The meta function has applied dtype= to out.
#include <structgen/cpu/scan.h>
#include <fixture/include/ops/cumprod.h>

namespace fixture::ops::impl {

void cumprod_out_cpu(const at::Tensor& self, at::IntArrayRef scan_dim, at::ScalarType compute_dtype, const at::Tensor& out) {
  ::structgen::cpu::scan_out<::structgen::cpu::ScanCombine::Mul>(self, scan_dim, out);
}

}  // namespace fixture::ops::impl
