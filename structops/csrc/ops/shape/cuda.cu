// Device side of cat, stack and split_with_sizes_copy (ops/shape/launch.h): one batched copy
// kernel for all pieces of a call, CUDA and our own headers only, no torch (ARCHITECTURE
// decision 6). Up to kMaxCopyPieces pieces travel in the kernel's parameters (no device buffer,
// no extra copy to the device); blockIdx.y picks the piece, blockIdx.x strides over its units.
// Each piece is copied in the widest unit (16, 8, 4, 2 or 1 bytes) that divides its addresses,
// row length and pitches; the unit is uniform per block, so the branch on it never diverges.
// Rows that are back to back in both source and destination are merged into one.
#include <algorithm>
#include <cstdint>

#include <structgen/cuda/block_reduce.cuh>  // kBlock, grid_for
#include <structgen/cuda/launch.cuh>
#include <ops/shape/launch.h>
#include <ops/runtime_names.h>

namespace structops::cuda_kernels {
namespace {

constexpr int kMaxCopyPieces = 32;  // 32 * 56 bytes of parameters, well inside the 4 KiB limit

struct DevicePiece {
  const char* src;
  char* dst;
  int64_t rows, row_units, src_pitch, dst_pitch;  // row and pitches in units
  int unit;                                       // bytes
};

struct CopyBatch {
  DevicePiece pieces[kMaxCopyPieces];
};

template <typename U>
__device__ void copy_units(const DevicePiece& p) {
  const U* src = reinterpret_cast<const U*>(p.src);
  U* dst = reinterpret_cast<U*>(p.dst);
  const int64_t total = p.rows * p.row_units;
  for (int64_t u = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; u < total;
       u += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = u / p.row_units, k = u - r * p.row_units;
    dst[r * p.dst_pitch + k] = src[r * p.src_pitch + k];
  }
}

__global__ void __launch_bounds__(kBlock) copy_kernel(CopyBatch batch) {
  const DevicePiece& p = batch.pieces[blockIdx.y];
  switch (p.unit) {
    case 16:
      copy_units<uint4>(p);
      break;
    case 8:
      copy_units<uint2>(p);
      break;
    case 4:
      copy_units<uint32_t>(p);
      break;
    case 2:
      copy_units<uint16_t>(p);
      break;
    default:
      copy_units<uint8_t>(p);
      break;
  }
}

DevicePiece prepare(const CopyPiece& c) {
  int64_t rows = c.rows, row_bytes = c.row_bytes, src_pitch = c.src_pitch, dst_pitch = c.dst_pitch;
  if (rows > 1 && src_pitch == row_bytes && dst_pitch == row_bytes) {  // back to back: one row
    row_bytes *= rows;
    rows = 1;
  }
  const auto bits =
      static_cast<uint64_t>(reinterpret_cast<uintptr_t>(c.src) | reinterpret_cast<uintptr_t>(c.dst)) |
      static_cast<uint64_t>(row_bytes) | (rows > 1 ? static_cast<uint64_t>(src_pitch | dst_pitch) : 0);
  int unit = 16;
  while (unit > 1 && (bits & static_cast<uint64_t>(unit - 1)) != 0) unit /= 2;
  return DevicePiece{static_cast<const char*>(c.src),
                     static_cast<char*>(c.dst),
                     rows,
                     row_bytes / unit,
                     src_pitch / unit,
                     dst_pitch / unit,
                     unit};
}

}  // namespace

const char* copy_pieces(const CopyPiece* pieces, int64_t count, void* stream) {
  CopyBatch batch;
  int n = 0;
  int64_t most = 0;  // units of the batch's largest piece
  const auto flush = [&] {
    if (n == 0) return;
    const dim3 grid(grid_for((most + kBlock - 1) / kBlock, 8), n);
    SO_LAUNCH(grid, kBlock, 0, static_cast<cudaStream_t>(stream), copy_kernel)(batch);
    n = 0;
    most = 0;
  };
  for (int64_t i = 0; i < count; ++i) {
    if (pieces[i].rows == 0 || pieces[i].row_bytes == 0) continue;
    batch.pieces[n] = prepare(pieces[i]);
    most = std::max(most, batch.pieces[n].rows * batch.pieces[n].row_units);
    if (++n == kMaxCopyPieces) flush();
  }
  flush();
  const cudaError_t error = cudaGetLastError();
  return error == cudaSuccess ? nullptr : cudaGetErrorString(error);
}

}  // namespace structops::cuda_kernels
