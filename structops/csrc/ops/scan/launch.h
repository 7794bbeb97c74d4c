// What the CUDA host glue of cumsum (cuda_host.cpp) hands to the torch-free device code (cuda.cu):
// plain data, so nvcc compiles the kernels without torch (ARCHITECTURE decision 6). index's
// masked_select runs the same scan (ops/index/cuda_host.cpp).
#pragma once

#include <cstdint>

#include <structgen/pointwise/launch.h>  // Dtype
#include <ops/runtime_names.h>

namespace structops {

// out = running sum of in along the middle dim of [outer, n, inner], both contiguous.
//   inner == 1: rows of n contiguous elements (a block or a warp scans one row in tiles);
//   inner > 1:  one thread per (outer, inner) column walks n (adjacent threads read adjacent
//               columns, so loads coalesce).
// in == out is allowed: every element is read before it is written, by the thread that writes it
// (masked_select scans its chunk counts in place).
struct ScanLaunch {
  Dtype dtype;  // in and out dtype: float32/64, float16, bfloat16 or int64 (the glue casts the rest)
  int64_t outer = 1, n = 1, inner = 1;
  const void* in = nullptr;
  void* out = nullptr;
  // Chunked path (few long rows): one partial sum per row chunk in `workspace`
  // (cumsum_workspace_bytes() bytes, allocated by the host glue on the current device).
  void* workspace = nullptr;
  void* stream = nullptr;  // cudaStream_t
};

namespace cuda_kernels {
// Whether [outer, n, inner] with inner > 1 is best scanned in place by the column kernel (enough
// columns to fill the GPU, or short columns); otherwise the host glue moves the dim last.
bool cumsum_columns_in_place(const ScanLaunch& p);
// The workspace bytes the launch needs on the current device (0: none).
int64_t cumsum_workspace_bytes(const ScanLaunch& p);
// Launches on p.stream; returns nullptr or the CUDA error string.
const char* cumsum(const ScanLaunch& p);
}  // namespace cuda_kernels

}  // namespace structops
