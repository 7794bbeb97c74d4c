// @generated from native_functions.yaml by codegen/templates/scans_cuda_host.cpp.j2 (generator 0.6.0) — DO NOT EDIT.
// Regenerate with: python -m structgen.codegen (run by the CMake build)
// CUDA impls of the scan ops (manifest `scan: true`): the runtime's host glue
// (structgen/cuda/scan_host.h) with each op's device entry points (scans_cuda.cu).
// Compiled only when the installed torch has CUDA (and in the emulator's build).
#include <structgen/cuda/scan_host.h>
#include <fixture/include/ops/cumprod.h>

namespace fixture::ops {
namespace cuda_kernels {
::structgen::ScanPlan cumprod_scan_plan(const ::structgen::ScanLaunch& p);
const char* cumprod_scan(const ::structgen::ScanLaunch& p);
}  // namespace cuda_kernels

namespace impl {

void cumprod_out_cuda(const at::Tensor& self, at::IntArrayRef scan_dim, at::ScalarType compute_dtype, const at::Tensor& out) {
  ::structgen::cuda_host::scan_out("cumprod", self, scan_dim, out, cuda_kernels::cumprod_scan_plan,
                        cuda_kernels::cumprod_scan, /*complex_pairs=*/false);
}
}  // namespace impl

}  // namespace fixture::ops
