// What the CUDA host glue of max_pool2d/3d_with_indices and avg_pool2d (cuda_host.cpp) hands to
// the torch-free device code (cuda.cu): plain data, so nvcc compiles the
// kernels without torch (ARCHITECTURE decision 6).
#pragma once

#include <cstdint>

#include <structgen/pointwise/launch.h>  // Dtype
#include <ops/runtime_names.h>

namespace structops {

// Pooling over contiguous [planes, d, h, w] (2-D pooling: d == 1 with a 1 x 1 window along it)
// into contiguous [planes, d_out, h_out, w_out]; per spatial dim (0: d, 1: h, 2: w) the input and
// output sizes and the window's kernel, stride, padding and dilation.
struct PoolLaunch {
  Dtype dtype;      // self and out: float32/64, float16, bfloat16 or int64 (the glue casts other integers)
  bool max = true;  // max (writes indices) or average
  int64_t planes = 0;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  int64_t kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, padding[3] = {0, 0, 0}, dilation[3] = {1, 1, 1};
  bool count_include_pad = true;  // average: the divisor counts the padding
  int64_t divisor = 0;            // average: the divisor when nonzero (divisor_override)
  const void* self = nullptr;
  void* result = nullptr;
  int64_t* indices = nullptr;  // max: flat index into the input's d * h * w volume
  void* stream = nullptr;      // cudaStream_t
};

namespace cuda_kernels {
// Launches on p.stream; returns nullptr or the CUDA error string.
const char* pool(const PoolLaunch& p);
}  // namespace cuda_kernels

}  // namespace structops
