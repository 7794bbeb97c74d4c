// What the CUDA host glue of cdist (cuda_host.cpp) hands to the torch-free device code (cuda.cu):
// plain data, so nvcc compiles the kernels without torch (ARCHITECTURE decision 6).
#pragma once

#include <cstdint>

#include <structgen/pointwise/launch.h>  // Dtype
#include <ops/runtime_names.h>

namespace structops {

namespace linalg {
// The mm form |x|^2 + |y|^2 - 2 x.y^T cancels where the distance is small beside the norms: its
// error is a few ulps of |x|^2 + |y|^2 (identical rows masked with -1e9 came out 1e6 apart in
// float32, points around 1e4 lost 9 of float64's digits; torch's mm form keeps both errors). A
// pair whose d^2 is below this fraction of |x|^2 + |y|^2 is computed again directly, sum (x - y)^2
// (the CPU impl and the CUDA kernel alike): the mm form's relative error is then at most 64 ulps.
constexpr double kCdistRecompute = 1.0 / 64;
}  // namespace linalg

// Pairwise distances between the rows of contiguous x1 [batches, r1, m] and x2 [batches, r2, m]
// into a contiguous out [batches, r1, r2].
struct CdistLaunch {
  Dtype dtype;  // float32/64, float16 or bfloat16 (x1, x2 and out)
  int64_t batches = 1, r1 = 0, r2 = 0, m = 0;
  double p = 2;
  const void* x1 = nullptr;
  const void* x2 = nullptr;
  void* out = nullptr;
  void* workspace = nullptr;  // cdist_workspace_bytes() bytes: the row norms of the mm form
  void* stream = nullptr;     // cudaStream_t
};

namespace cuda_kernels {
// out = (sum_k |x1 - x2|^p)^(1/p) with p = 0 (count), inf (max) and the rest, by a tiled kernel.
const char* cdist_direct(const CdistLaunch& p);
int64_t cdist_workspace_bytes(const CdistLaunch& p);
// The mm form's last step: out holds -2 x1 x2^T (the host glue's bmm); this adds the squared row
// norms and takes sqrt(max(., 0)), or computes a cancelled pair directly (linalg::kCdistRecompute).
const char* cdist_mm_finish(const CdistLaunch& p);
}  // namespace cuda_kernels

}  // namespace structops
