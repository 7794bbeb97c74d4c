// What a scan op's CUDA host glue (structgen/cuda/scan_host.h) hands its torch-free device code
// (structgen/cuda/scan.cuh, instantiated by the generated runtime_kernels_cuda.cu): plain data, so nvcc
// compiles the kernels without torch. A project's hand-written kernels may run a generated scan
// too (a masked_select may scan its chunk counts with a cumsum's).
#pragma once

#include <cstdint>

#include <structgen/pointwise/launch.h>  // Dtype

namespace structgen {

// out = the running combine of in along the middle dim of [outer, n, inner], both contiguous.
//   inner == 1: rows of n contiguous elements (a block or a warp scans one row in tiles);
//   inner > 1:  one thread per (outer, inner) column walks n (adjacent threads read adjacent
//               columns, so loads coalesce).
// in == out is allowed: every element is read before it is written, by the thread that writes it.
struct ScanLaunch {
  Dtype dtype;  // in and out dtype: float32/64, float16, bfloat16 or int64 (the glue casts the rest)
  int64_t outer = 1, n = 1, inner = 1;
  const void* in = nullptr;
  void* out = nullptr;
  // Chunked path (few long rows): one partial result per row chunk, ScanPlan::workspace_bytes
  // bytes allocated by the host glue on the current device.
  void* workspace = nullptr;
  void* stream = nullptr;  // cudaStream_t
};

// How the device code will run a launch, asked before it runs.
struct ScanPlan {
  // inner > 1: whether the column kernel scans in place (enough columns to fill the GPU, or short
  // columns); otherwise the host glue moves the dim last.
  bool columns_in_place = true;
  int64_t workspace_bytes = 0;  // 0: none
};

// The two entry points the generated device file defines per scan op.
using ScanPlanFn = ScanPlan (*)(const ScanLaunch&);
using ScanFn = const char* (*)(const ScanLaunch&);  // nullptr or the CUDA error string

}  // namespace structgen
