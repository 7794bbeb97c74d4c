// What the CUDA host glue of dropout (cuda_host.cpp) hands to the torch-free device code (cuda.cu):
// plain data, so nvcc compiles the kernels without torch (ARCHITECTURE decision 6).
#pragma once

#include <cstdint>

#include <structgen/cuda/philox_seed.h>  // PhiloxSeed
#include <structgen/pointwise/launch.h>  // Dtype
#include <ops/runtime_names.h>

namespace structops {

// out[i] = in[i] * mask[i] * scale over n contiguous elements, mask[i] true where the i-th
// philox draw, 24 bits, is below keep_threshold (keep_threshold / 2^24 = 1 - p).
struct DropoutLaunch {
  Dtype dtype;  // in and out: float32/64, float16, bfloat16
  int64_t n = 0;
  const void* in = nullptr;
  void* out = nullptr;
  bool* mask = nullptr;
  uint32_t keep_threshold = 0;  // in [0, 2^24]
  double scale = 1;             // 1 / (1 - p), 0 for p = 1
  cuda_kernels::PhiloxSeed seed;
  void* stream = nullptr;  // cudaStream_t
};

namespace cuda_kernels {
// The philox offset one launch consumes (the generator advances by it).
constexpr uint64_t kDropoutOffsetIncrement = 4;
// Launches on p.stream; returns nullptr or the CUDA error string.
const char* dropout(const DropoutLaunch& p);
}  // namespace cuda_kernels

}  // namespace structops
