// @generated from native_functions.yaml by codegen/templates/kernels_cuda_host.cpp.j2 — DO NOT EDIT.
// Regenerate with: python -m codegen (run by the CMake build)
// CUDA host glue of the pointwise ops in this shard: device guard, current stream, inputs
// brought to the common dtype and device, then the torch-free launcher in kernels_cuda_*.cu.
// Compiled only when the installed torch has CUDA.
#include <structops/cpu/pointwise.h>
#include <structops/pointwise/launch.h>

#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/util/Exception.h>


namespace structops {
namespace cuda_kernels {
}  // namespace cuda_kernels

namespace impl {

}  // namespace impl
}  // namespace structops
