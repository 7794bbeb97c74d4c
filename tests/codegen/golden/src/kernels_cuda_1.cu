// @generated from native_functions.yaml by codegen/templates/kernels_cuda.cu.j2 — DO NOT EDIT.
// Regenerate with: python -m codegen (run by the CMake build)
// CUDA kernels of the pointwise ops in this shard, generated from their formulas. Device code
// only: no torch header (ARCHITECTURE decision 6); the host glue (kernels_cuda_host_*.cpp)
// fills a PointwiseLaunch and calls the launcher here.
#include <structops/cuda/pointwise.cuh>

namespace structops::cuda_kernels {

}  // namespace structops::cuda_kernels
