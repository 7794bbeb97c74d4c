// @generated from native_functions.yaml by codegen/templates/runtime_kernels_cuda.cu.j2 (generator 0.6.0) — DO NOT EDIT.
// Regenerate with: python -m structgen.codegen (run by the CMake build)
// CUDA entry points of the ops whose kernels are the runtime's (manifest `scan:`, `triangle:`):
// the runtime's kernels (structgen/cuda/scan.cuh, triangle.cuh) with each op's
// variant. Device code only: no torch header; the host glue (runtime_kernels_cuda_host.cpp)
// launches through these.
#include <structgen/cuda/scan.cuh>
#include <structgen/cuda/triangle.cuh>

namespace fixture::ops::cuda_kernels {

::structgen::ScanPlan cumprod_scan_plan(const ::structgen::ScanLaunch& p) {
  return ::structgen::cuda_kernels::scan_plan(p);
}

const char* cumprod_scan(const ::structgen::ScanLaunch& p) {
  return ::structgen::cuda_kernels::scan<::structgen::cuda_kernels::WrappingProdOp, true>(p);
}

const char* tril_triangle(const ::structgen::TriangleLaunch& p) {
  return ::structgen::cuda_kernels::triangle(p);
}

}  // namespace fixture::ops::cuda_kernels
