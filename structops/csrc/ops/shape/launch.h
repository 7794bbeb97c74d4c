// What the CUDA host glue of cat, stack and split_with_sizes_copy (cuda_host.cpp) hands to the
// torch-free device code (cuda.cu): plain data, so nvcc compiles the kernel without torch (ARCHITECTURE
// decision 6).
#pragma once

#include <cstdint>
#include <ops/runtime_names.h>

namespace structops {

// `rows` rows of `row_bytes` bytes from src to dst, consecutive rows `src_pitch` / `dst_pitch`
// bytes apart. cat of contiguous inputs along dim d is one piece per input (rows: the product of
// the dims before d; dst_pitch: out's row), stack the same with the new dim, split the reverse.
struct CopyPiece {
  const void* src = nullptr;
  void* dst = nullptr;
  int64_t rows = 0, row_bytes = 0, src_pitch = 0, dst_pitch = 0;
};

namespace cuda_kernels {
// Copies every piece (pieces: a host array) on `stream` (a cudaStream_t) in one launch per
// kMaxCopyPieces pieces; returns nullptr or the CUDA error string.
const char* copy_pieces(const CopyPiece* pieces, int64_t count, void* stream);
}  // namespace cuda_kernels

}  // namespace structops
