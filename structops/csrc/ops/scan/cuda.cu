// Device side of cumsum (ops/scan/launch.h): CUDA and our own headers only, no torch
// (ARCHITECTURE decision 6). The host glue (cuda_host.cpp) lays the input out as [outer, n, inner].
//   rows (inner == 1): a group of threads scans one row in tiles of kGroup * kItems elements: each
//     thread scans kItems consecutive elements in registers, warp shuffles scan the threads'
//     totals, a shared-memory step the warps' totals, and a carry runs from tile to tile. Short
//     rows (n <= kWarpRowMax) take one warp each, 8 rows per block; longer rows a whole block;
//   chunked rows (fewer rows than 2 per SM, each at least 2 * kChunk long): reduce, then scan:
//     pass 1 sums each chunk of a row (one block per chunk), pass 2 scans each chunk again
//     starting from the sum of the chunks before it (read from the workspace in a fixed order),
//     so every block works and no rounded partial result is ever re-read;
//   columns (inner > 1): one thread per (outer, inner) column walks n; adjacent threads hold
//     adjacent columns, so every step's loads and stores coalesce. Only where the columns fill the
//     GPU or are short (cumsum_columns_in_place); otherwise the glue moves the dim last for rows.
// half and bfloat16 accumulate in float, float in float (as torch's CUDA cumsum), double in
// double, int64 in int64. The summation order depends only on the shape and the SM count.
#include <algorithm>
#include <cstdint>

#include <structgen/cuda/launch.cuh>
#include <structgen/cuda/block_reduce.cuh>
#include <ops/scan/launch.h>
#include <ops/runtime_names.h>

namespace structops::cuda_kernels {
namespace {

constexpr int kItems = 4;              // consecutive elements per thread per tile
constexpr int64_t kWarpRowMax = 2048;  // rows up to this long take one warp each
constexpr int64_t kChunk = 32768;      // chunked path: at least this many elements per chunk
constexpr int kMaxChunks = 1024;

template <typename A>
__device__ A warp_inclusive_scan(A v, int lane) {
#pragma unroll
  for (int offset = 1; offset < kWarp; offset *= 2) {
    const A u = __shfl_up_sync(0xffffffffu, v, offset);
    if (lane >= offset) v += u;
  }
  return v;
}

// o[lo, hi) = carry + running sum of x[lo, hi), by a group of kGroup threads (a warp, or the whole
// block: then every thread of the block must call it with the same range). Returns the carry
// after hi, in every thread of the group. `warp_totals` holds kGroup / kWarp values.
template <typename T, int kGroup>
__device__ acc_t<T> scan_range(const T* x, T* o, int64_t lo, int64_t hi, acc_t<T> carry,
                               acc_t<T>* warp_totals) {
  using A = acc_t<T>;
  constexpr int kWarps = kGroup / kWarp;
  constexpr int64_t kTile = static_cast<int64_t>(kGroup) * kItems;
  const int rank = threadIdx.x % kGroup, lane = threadIdx.x % kWarp, warp = rank / kWarp;
  for (int64_t base = lo; base < hi; base += kTile) {
    const int64_t first = base + static_cast<int64_t>(rank) * kItems;
    A v[kItems];
#pragma unroll
    for (int i = 0; i < kItems; ++i) v[i] = first + i < hi ? static_cast<A>(x[first + i]) : A(0);
#pragma unroll
    for (int i = 1; i < kItems; ++i) v[i] += v[i - 1];
    const A inclusive = warp_inclusive_scan(v[kItems - 1], lane);
    A exclusive = __shfl_up_sync(0xffffffffu, inclusive, 1);
    if (lane == 0) exclusive = A(0);
    A tile_total;
    if constexpr (kWarps == 1) {
      tile_total = __shfl_sync(0xffffffffu, inclusive, kWarp - 1);
    } else {
      if (lane == kWarp - 1) warp_totals[warp] = inclusive;
      __syncthreads();
      A before = A(0);
      tile_total = A(0);
#pragma unroll
      for (int w = 0; w < kWarps; ++w) {
        if (w == warp) before = tile_total;
        tile_total += warp_totals[w];
      }
      exclusive += before;
      __syncthreads();  // warp_totals is rewritten by the next tile
    }
    const A offset = carry + exclusive;
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (first + i < hi) o[first + i] = static_cast<T>(offset + v[i]);
    }
    carry += tile_total;
  }
  return carry;
}

// One row per group of kGroup threads (kBlock / kGroup rows per block).
template <typename T, int kGroup>
__global__ void __launch_bounds__(kBlock) rows_kernel(const T* in, T* out, int64_t rows, int64_t n) {
  using A = acc_t<T>;
  constexpr int kGroups = kBlock / kGroup;
  SO_SHARED(A, warp_totals, [kBlock / kWarp]);
  const int group = threadIdx.x / kGroup;
  A* totals = warp_totals + group * (kGroup / kWarp);
  // Uniform across the block when kGroup == kBlock (scan_range synchronises the block).
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kGroups + group; row < rows;
       row += static_cast<int64_t>(gridDim.x) * kGroups) {
    scan_range<T, kGroup>(in + row * n, out + row * n, 0, n, A(0), totals);
  }
}

__host__ __device__ inline int64_t chunk_length(int64_t n, int chunks) { return (n + chunks - 1) / chunks; }

// Chunked path, pass 1: block (c, r) sums chunk c of row r into workspace[r * chunks + c].
template <typename T>
__global__ void __launch_bounds__(kBlock)
    chunk_sums_kernel(const T* __restrict__ in, int64_t n, int chunks, acc_t<T>* __restrict__ sums) {
  using A = acc_t<T>;
  SO_SHARED(A, shared, [kWarp]);
  const int64_t row = blockIdx.y, len = chunk_length(n, chunks);
  const int64_t lo = blockIdx.x * len, hi = min(n, lo + len);
  const T* x = in + row * n;
  A s = A(0);
  for (int64_t i = lo + threadIdx.x; i < hi; i += blockDim.x) s += static_cast<A>(x[i]);
  s = block_reduce(s, SumOp<A>{}, shared);
  if (threadIdx.x == 0) sums[row * chunks + blockIdx.x] = s;
}

// Pass 2: block (c, r) scans chunk c of row r from the sum of chunks 0..c-1 (added in order).
template <typename T>
__global__ void __launch_bounds__(kBlock)
    chunk_scan_kernel(const T* in, T* out, int64_t n, int chunks, const acc_t<T>* __restrict__ sums) {
  using A = acc_t<T>;
  SO_SHARED(A, warp_totals, [kBlock / kWarp]);
  const int64_t row = blockIdx.y, len = chunk_length(n, chunks);
  const int64_t lo = blockIdx.x * len, hi = min(n, lo + len);
  A carry = A(0);
  for (int c = 0; c < static_cast<int>(blockIdx.x); ++c) carry += sums[row * chunks + c];  // broadcast loads
  scan_range<T, kBlock>(in + row * n, out + row * n, lo, hi, carry, warp_totals);
}

template <typename T>
__global__ void __launch_bounds__(kBlock)
    columns_kernel(const T* in, T* out, int64_t outer, int64_t n, int64_t inner) {
  using A = acc_t<T>;
  const int64_t columns = outer * inner;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < columns;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t offset = (c / inner) * n * inner + c % inner;
    const T* x = in + offset;
    T* o = out + offset;
    A acc = A(0);
#pragma unroll 4
    for (int64_t j = 0; j < n; ++j) {
      acc += static_cast<A>(x[j * inner]);
      o[j * inner] = static_cast<T>(acc);
    }
  }
}

int chunks_for(const ScanLaunch& p) {
  if (p.inner != 1 || p.outer >= 2 * static_cast<int64_t>(sm_count()) || p.n < 2 * kChunk) return 1;
  return static_cast<int>(std::min<int64_t>(p.n / kChunk, kMaxChunks));
}

template <typename T>
void launch(const ScanLaunch& p) {
  using A = acc_t<T>;
  auto stream = static_cast<cudaStream_t>(p.stream);
  const T* in = static_cast<const T*>(p.in);
  T* out = static_cast<T*>(p.out);
  if (p.inner > 1) {
    const int64_t columns = p.outer * p.inner;
    SO_LAUNCH(grid_for((columns + kBlock - 1) / kBlock, 8), kBlock, 0, stream, columns_kernel<T>)(
        in, out, p.outer, p.n, p.inner);
    return;
  }
  if (const int chunks = chunks_for(p); chunks > 1) {
    const dim3 grid(chunks, static_cast<unsigned>(p.outer));
    auto* sums = static_cast<A*>(p.workspace);
    SO_LAUNCH(grid, kBlock, 0, stream, chunk_sums_kernel<T>)(in, p.n, chunks, sums);
    SO_LAUNCH(grid, kBlock, 0, stream, chunk_scan_kernel<T>)(in, out, p.n, chunks, sums);
    return;
  }
  if (p.n <= kWarpRowMax) {
    constexpr int kRowsPerBlock = kBlock / kWarp;
    SO_LAUNCH(grid_for((p.outer + kRowsPerBlock - 1) / kRowsPerBlock, 8), kBlock, 0, stream,
              rows_kernel<T, kWarp>)(in, out, p.outer, p.n);
  } else {
    SO_LAUNCH(grid_for(p.outer, 8), kBlock, 0, stream, rows_kernel<T, kBlock>)(in, out, p.outer, p.n);
  }
}

}  // namespace

// A column thread walks n steps in sequence: fine when there are enough columns to keep every SM
// busy (about kBlock threads per SM, twice) or the walk is short; otherwise moving the dim last
// (two copies) and scanning rows in parallel tiles is faster.
bool cumsum_columns_in_place(const ScanLaunch& p) {
  constexpr int64_t kShortColumn = 256;
  return p.n <= kShortColumn || p.outer * p.inner >= 2 * static_cast<int64_t>(sm_count()) * kBlock;
}

int64_t cumsum_workspace_bytes(const ScanLaunch& p) {
  const int chunks = chunks_for(p);
  return chunks > 1 ? p.outer * chunks * static_cast<int64_t>(sizeof(double))
                    : 0;  // double: the widest acc_t
}

const char* cumsum(const ScanLaunch& p) {
  if (p.outer * p.n * p.inner == 0) return nullptr;
  return launch_for_dtype<true>(p.dtype, "dtype not supported by the CUDA cumsum kernels",
                                [&](auto tag) { launch<decltype(tag)>(p); });
}

}  // namespace structops::cuda_kernels
