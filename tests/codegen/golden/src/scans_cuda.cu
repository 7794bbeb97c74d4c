// @generated from native_functions.yaml by codegen/templates/scans_cuda.cu.j2 (generator 0.6.0) — DO NOT EDIT.
// Regenerate with: python -m structgen.codegen (run by the CMake build)
// CUDA entry points of the scan ops (manifest `scan: true`): the runtime's scan kernels
// (structgen/cuda/scan.cuh) with each op's combine. Device code only: no torch header;
// the host glue (scans_cuda_host.cpp) plans and launches through these.
#include <structgen/cuda/scan.cuh>

namespace fixture::ops::cuda_kernels {

::structgen::ScanPlan cumprod_scan_plan(const ::structgen::ScanLaunch& p) {
  return ::structgen::cuda_kernels::scan_plan(p);
}

const char* cumprod_scan(const ::structgen::ScanLaunch& p) {
  return ::structgen::cuda_kernels::scan<::structgen::cuda_kernels::WrappingProdOp, true>(p);
}

}  // namespace fixture::ops::cuda_kernels
