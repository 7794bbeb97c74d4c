// Device side of dropout (ops/random/launch.h): CUDA and our own headers only, no torch
// (ARCHITECTURE decision 6). A thread takes groups of 4 elements; group g's four 32-bit words are
// philox's for counter (g, offset), whatever the grid, so the mask depends only on the seed, the
// offset and the element's position. Each element is kept where its word's top 24 bits fall
// under the threshold, then written as torch's CPU kernel computes it: (x * mask) * scale in the
// compute dtype (float for half and bfloat16), the scale rounded to T first, so a dropped inf or
// NaN gives NaN, a dropped -x -0.
#include <cstdint>

#include <structgen/cuda/launch.cuh>
#include <structgen/cuda/block_reduce.cuh>
#include <structgen/cuda/philox.cuh>
#include <ops/random/launch.h>
#include <ops/runtime_names.h>

namespace structops::cuda_kernels {
namespace {

using structgen::cuda_kernels::philox4x32_10;
using structgen::cuda_kernels::philox_unpack;

template <typename T>
__global__ void dropout_kernel(const T* __restrict__ in, T* __restrict__ out, bool* __restrict__ mask,
                               int64_t n, uint32_t keep_threshold, acc_t<T> scale, PhiloxSeed s) {
  uint64_t seed = 0, offset = 0;
  philox_unpack(s, seed, offset);
  const int64_t groups = (n + 3) / 4;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t g = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; g < groups; g += stride) {
    const PhiloxWords r = philox4x32_10(static_cast<uint64_t>(g), offset, seed);
    for (int j = 0; j < 4; ++j) {
      const int64_t i = 4 * g + j;
      if (i >= n) break;
      const bool keep = (r.w[j] >> 8) < keep_threshold;
      mask[i] = keep;
      out[i] = static_cast<T>(static_cast<acc_t<T>>(in[i]) * static_cast<acc_t<T>>(keep ? 1 : 0) * scale);
    }
  }
}

template <typename T>
void launch(const DropoutLaunch& p) {
  const auto stream = static_cast<cudaStream_t>(p.stream);
  const int64_t groups = (p.n + 3) / 4;
  SO_LAUNCH(grid_for((groups + kBlock - 1) / kBlock, 8), kBlock, 0, stream, dropout_kernel<T>)(
      static_cast<const T*>(p.in), static_cast<T*>(p.out), p.mask, p.n, p.keep_threshold,
      static_cast<acc_t<T>>(static_cast<T>(p.scale)), p.seed);
}

}  // namespace

const char* dropout(const DropoutLaunch& p) {
  if (p.n == 0) return nullptr;
  return launch_for_dtype<false>(p.dtype, "dtype not supported by the CUDA dropout kernel",
                                 [&](auto tag) { launch<decltype(tag)>(p); });
}

}  // namespace structops::cuda_kernels
