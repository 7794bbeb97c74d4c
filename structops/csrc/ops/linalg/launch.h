// What the CUDA host glue of mm, addmm and linear (cuda_host.cpp) hands to the torch-free tiled
// kernel (cuda.cu): plain data, so nvcc compiles the kernel without torch (ARCHITECTURE decision 6).
#pragma once

#include <cstdint>

#include <structgen/pointwise/launch.h>  // Dtype
#include <ops/runtime_names.h>

namespace structops {

// c = alpha * a @ b + beta * c on contiguous row-major a [m, k], b [k, n], c [m, n]
// (cuda.cu, structops' own tiled kernel; cuBLAS is the other variant, through ATen).
struct MmLaunch {
  Dtype dtype;
  int64_t m = 0, n = 0, k = 0;
  const void* a = nullptr;
  const void* b = nullptr;
  void* c = nullptr;
  double alpha = 1, beta = 0;  // beta == 0: c is not read
  void* stream = nullptr;      // cudaStream_t
};

namespace cuda_kernels {
const char* mm(const MmLaunch& p);
}  // namespace cuda_kernels

}  // namespace structops
