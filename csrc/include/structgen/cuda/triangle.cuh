// Device side of a triangle op (manifest `triangle: lower|upper`; structgen/triangle_launch.h):
// CUDA and the runtime's headers only, no torch. One thread per element, grid-stride; elements
// move as unsigned words of their size, so the kernel knows no dtype.
#pragma once

#include <cstdint>

#include <structgen/cuda/block_reduce.cuh>  // kBlock, grid_for
#include <structgen/cuda/launch.cuh>
#include <structgen/triangle_launch.h>

namespace structgen::cuda_kernels {

namespace triangle_detail {

struct alignas(16) Bytes16 {
  uint64_t lo, hi;
};

template <typename E>
__global__ void __launch_bounds__(kBlock) triangle_kernel(const E* in, E* out, int64_t total, int64_t rows,
                                                          int64_t cols, int64_t diagonal, bool lower) {
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < total;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t j = k % cols, i = (k / cols) % rows;
    const bool keep = lower ? j - i <= diagonal : j - i >= diagonal;
    out[k] = keep ? in[k] : E{};
  }
}

template <typename E>
void launch(const TriangleLaunch& p) {
  const int64_t total = p.batches * p.rows * p.cols;
  SO_LAUNCH(grid_for((total + kBlock - 1) / kBlock, 8), kBlock, 0, static_cast<cudaStream_t>(p.stream),
            triangle_kernel<E>)(static_cast<const E*>(p.in), static_cast<E*>(p.out), total, p.rows, p.cols,
                                p.diagonal, p.lower);
}

}  // namespace triangle_detail

// Launches on p.stream; returns nullptr or the CUDA error string.
inline const char* triangle(const TriangleLaunch& p) {
  if (p.batches * p.rows * p.cols == 0) return nullptr;
  switch (p.element_size) {
    case 1:
      triangle_detail::launch<uint8_t>(p);
      break;
    case 2:
      triangle_detail::launch<uint16_t>(p);
      break;
    case 4:
      triangle_detail::launch<uint32_t>(p);
      break;
    case 8:
      triangle_detail::launch<uint64_t>(p);
      break;
    case 16:
      triangle_detail::launch<triangle_detail::Bytes16>(p);
      break;
    default:
      return "element size not supported by the CUDA triangle kernel";
  }
  const cudaError_t error = cudaGetLastError();
  return error == cudaSuccess ? nullptr : cudaGetErrorString(error);
}

}  // namespace structgen::cuda_kernels
