// What a triangle op's CUDA host glue (structgen/cuda/triangle_host.h) hands its torch-free device
// code (structgen/cuda/triangle.cuh, instantiated by the generated runtime_kernels_cuda.cu):
// plain data. The kernel moves elements by their size, so one kernel serves every dtype.
#pragma once

#include <cstdint>

namespace structgen {

// out[b, i, j] = in[b, i, j] where element (i, j) of each [rows, cols] matrix is kept, else zero
// bits (0, +0.0, false): kept on and below the diagonal `diagonal` (j - i <= diagonal) for a
// lower triangle (tril), on and above it (j - i >= diagonal) for an upper one (triu). in and
// out are contiguous [batches, rows, cols]; in == out is allowed (each element is read by the
// thread that writes it).
struct TriangleLaunch {
  int element_size = 4;  // 1, 2, 4, 8 or 16 bytes
  int64_t batches = 1, rows = 1, cols = 1;
  int64_t diagonal = 0;
  bool lower = true;
  const void* in = nullptr;
  void* out = nullptr;
  void* stream = nullptr;  // cudaStream_t
};

using TriangleFn = const char* (*)(const TriangleLaunch&);  // nullptr or the CUDA error string

}  // namespace structgen
