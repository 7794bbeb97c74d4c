// Device side of a scan op (manifest `scan: true`; structgen/scan_launch.h): CUDA and the
// runtime's headers only, no torch. The generated runtime_kernels_cuda.cu instantiates scan_plan and scan
// for each op's combine; the host glue (structgen/cuda/scan_host.h) lays the input out as
// [outer, n, inner].
//   rows (inner == 1): a group of threads scans one row in tiles of kGroup * kItems elements: each
//     thread scans kItems consecutive elements in registers, warp shuffles scan the threads'
//     totals, a shared-memory step the warps' totals, and a carry runs from tile to tile. Short
//     rows (n <= kWarpRowMax) take one warp each, 8 rows per block; longer rows a whole block;
//   chunked rows (fewer rows than 2 per SM, each at least 2 * kChunk long): reduce, then scan:
//     pass 1 combines each chunk of a row (one block per chunk), pass 2 scans each chunk again
//     starting from the chunks before it (read from the workspace in a fixed order), so every
//     block works and no rounded partial result is ever re-read;
//   columns (inner > 1): one thread per (outer, inner) column walks n; adjacent threads hold
//     adjacent columns, so every step's loads and stores coalesce. Only where the columns fill the
//     GPU or are short (scan_plan); otherwise the glue moves the dim last for rows.
// half and bfloat16 run in float, float in float (as torch's CUDA scans), double in double,
// int64 in int64 (products wrapping). The order of the steps depends only on the shape and the
// SM count, so a result is the same from call to call.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include <structgen/cuda/launch.cuh>
#include <structgen/cuda/block_reduce.cuh>
#include <structgen/scan_combine.h>
#include <structgen/scan_launch.h>

namespace structgen::cuda_kernels {

// The CUDA form of a ScanCombine (structgen/scan_combine.h): the scan kernels take an op with
// identity() and combine(), as block_reduce.cuh's SumOp (the Add combine) has.
template <ScanCombine C>
struct ScanOp {
  template <typename A>
  struct For {
    __device__ A identity() const { return scan_identity<C, A>(); }
    __device__ A combine(A a, A b) const { return scan_step<C>(a, b); }
  };
};
template <typename A>
using WrappingProdOp = ScanOp<ScanCombine::Mul>::For<A>;
template <typename A>
using LogAddExpOp = ScanOp<ScanCombine::LogAddExp>::For<A>;

namespace scan_detail {

constexpr int kItems = 4;              // consecutive elements per thread per tile
constexpr int64_t kWarpRowMax = 2048;  // rows up to this long take one warp each
constexpr int64_t kChunk = 32768;      // chunked path: at least this many elements per chunk
constexpr int kMaxChunks = 1024;

template <typename A, typename Op>
__device__ A warp_inclusive_scan(A v, int lane, const Op& op) {
#pragma unroll
  for (int offset = 1; offset < kWarp; offset *= 2) {
    const A u = __shfl_up_sync(0xffffffffu, v, offset);
    if (lane >= offset) v = op.combine(u, v);
  }
  return v;
}

// o[lo, hi) = the running combine of x[lo, hi) after `carry`, by a group of kGroup threads (a
// warp, or the whole block: then every thread of the block must call it with the same range).
// Returns the carry after hi, in every thread of the group. `warp_totals` holds kGroup / kWarp
// values.
template <typename T, int kGroup, typename Op>
__device__ acc_t<T> scan_range(const T* x, T* o, int64_t lo, int64_t hi, acc_t<T> carry,
                               acc_t<T>* warp_totals, const Op& op) {
  using A = acc_t<T>;
  constexpr int kWarps = kGroup / kWarp;
  constexpr int64_t kTile = static_cast<int64_t>(kGroup) * kItems;
  const int rank = threadIdx.x % kGroup, lane = threadIdx.x % kWarp, warp = rank / kWarp;
  for (int64_t base = lo; base < hi; base += kTile) {
    const int64_t first = base + static_cast<int64_t>(rank) * kItems;
    A v[kItems];
#pragma unroll
    for (int i = 0; i < kItems; ++i) v[i] = first + i < hi ? static_cast<A>(x[first + i]) : op.identity();
#pragma unroll
    for (int i = 1; i < kItems; ++i) v[i] = op.combine(v[i - 1], v[i]);
    const A inclusive = warp_inclusive_scan(v[kItems - 1], lane, op);
    A exclusive = __shfl_up_sync(0xffffffffu, inclusive, 1);
    if (lane == 0) exclusive = op.identity();
    A tile_total;
    if constexpr (kWarps == 1) {
      tile_total = __shfl_sync(0xffffffffu, inclusive, kWarp - 1);
    } else {
      if (lane == kWarp - 1) warp_totals[warp] = inclusive;
      __syncthreads();
      A before = op.identity();
      tile_total = op.identity();
#pragma unroll
      for (int w = 0; w < kWarps; ++w) {
        if (w == warp) before = tile_total;
        tile_total = op.combine(tile_total, warp_totals[w]);
      }
      exclusive = op.combine(before, exclusive);
      __syncthreads();  // warp_totals is rewritten by the next tile
    }
    const A offset = op.combine(carry, exclusive);
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      if (first + i < hi) o[first + i] = static_cast<T>(op.combine(offset, v[i]));
    }
    carry = op.combine(carry, tile_total);
  }
  return carry;
}

// One row per group of kGroup threads (kBlock / kGroup rows per block).
template <typename T, int kGroup, typename Op>
__global__ void __launch_bounds__(kBlock) rows_kernel(const T* in, T* out, int64_t rows, int64_t n, Op op) {
  using A = acc_t<T>;
  constexpr int kGroups = kBlock / kGroup;
  SO_SHARED(A, warp_totals, [kBlock / kWarp]);
  const int group = threadIdx.x / kGroup;
  A* totals = warp_totals + group * (kGroup / kWarp);
  // Uniform across the block when kGroup == kBlock (scan_range synchronises the block).
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kGroups + group; row < rows;
       row += static_cast<int64_t>(gridDim.x) * kGroups) {
    scan_range<T, kGroup>(in + row * n, out + row * n, 0, n, op.identity(), totals, op);
  }
}

__host__ __device__ inline int64_t chunk_length(int64_t n, int chunks) { return (n + chunks - 1) / chunks; }

// Chunked path, pass 1: block (c, r) combines chunk c of row r into workspace[r * chunks + c].
template <typename T, typename Op>
__global__ void __launch_bounds__(kBlock) chunk_totals_kernel(const T* __restrict__ in, int64_t n, int chunks,
                                                              acc_t<T>* __restrict__ totals, Op op) {
  using A = acc_t<T>;
  SO_SHARED(A, shared, [kWarp]);
  const int64_t row = blockIdx.y, len = chunk_length(n, chunks);
  const int64_t lo = blockIdx.x * len, hi = min(n, lo + len);
  const T* x = in + row * n;
  A s = op.identity();
  for (int64_t i = lo + threadIdx.x; i < hi; i += blockDim.x) s = op.combine(s, static_cast<A>(x[i]));
  s = block_reduce(s, op, shared);
  if (threadIdx.x == 0) totals[row * chunks + blockIdx.x] = s;
}

// Pass 2: block (c, r) scans chunk c of row r after the totals of chunks 0..c-1 (in order).
template <typename T, typename Op>
__global__ void __launch_bounds__(kBlock) chunk_scan_kernel(const T* in, T* out, int64_t n, int chunks,
                                                            const acc_t<T>* __restrict__ totals, Op op) {
  using A = acc_t<T>;
  SO_SHARED(A, warp_totals, [kBlock / kWarp]);
  const int64_t row = blockIdx.y, len = chunk_length(n, chunks);
  const int64_t lo = blockIdx.x * len, hi = min(n, lo + len);
  A carry = op.identity();
  for (int c = 0; c < static_cast<int>(blockIdx.x); ++c) carry = op.combine(carry, totals[row * chunks + c]);
  scan_range<T, kBlock>(in + row * n, out + row * n, lo, hi, carry, warp_totals, op);
}

template <typename T, typename Op>
__global__ void __launch_bounds__(kBlock)
    columns_kernel(const T* in, T* out, int64_t outer, int64_t n, int64_t inner, Op op) {
  using A = acc_t<T>;
  const int64_t columns = outer * inner;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < columns;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t offset = (c / inner) * n * inner + c % inner;
    const T* x = in + offset;
    T* o = out + offset;
    A acc = op.identity();
#pragma unroll 4
    for (int64_t j = 0; j < n; ++j) {
      acc = op.combine(acc, static_cast<A>(x[j * inner]));
      o[j * inner] = static_cast<T>(acc);
    }
  }
}

inline int chunks_for(const ScanLaunch& p) {
  if (p.inner != 1 || p.outer >= 2 * static_cast<int64_t>(sm_count()) || p.n < 2 * kChunk) return 1;
  return static_cast<int>(std::min<int64_t>(p.n / kChunk, kMaxChunks));
}

template <typename T, template <typename> class Op>
void launch(const ScanLaunch& p) {
  using A = acc_t<T>;
  const Op<A> op{};
  auto stream = static_cast<cudaStream_t>(p.stream);
  const T* in = static_cast<const T*>(p.in);
  T* out = static_cast<T*>(p.out);
  if (p.inner > 1) {
    const int64_t columns = p.outer * p.inner;
    SO_LAUNCH(grid_for((columns + kBlock - 1) / kBlock, 8), kBlock, 0, stream, columns_kernel<T, Op<A>>)(
        in, out, p.outer, p.n, p.inner, op);
    return;
  }
  if (const int chunks = chunks_for(p); chunks > 1) {
    const dim3 grid(chunks, static_cast<unsigned>(p.outer));
    auto* totals = static_cast<A*>(p.workspace);
    SO_LAUNCH(grid, kBlock, 0, stream, chunk_totals_kernel<T, Op<A>>)(in, p.n, chunks, totals, op);
    SO_LAUNCH(grid, kBlock, 0, stream, chunk_scan_kernel<T, Op<A>>)(in, out, p.n, chunks, totals, op);
    return;
  }
  if (p.n <= kWarpRowMax) {
    constexpr int kRowsPerBlock = kBlock / kWarp;
    SO_LAUNCH(grid_for((p.outer + kRowsPerBlock - 1) / kRowsPerBlock, 8), kBlock, 0, stream,
              rows_kernel<T, kWarp, Op<A>>)(in, out, p.outer, p.n, op);
  } else {
    SO_LAUNCH(grid_for(p.outer, 8), kBlock, 0, stream, rows_kernel<T, kBlock, Op<A>>)(in, out, p.outer, p.n,
                                                                                      op);
  }
}

}  // namespace scan_detail

// A column thread walks n steps in sequence: fine when there are enough columns to keep every SM
// busy (about kBlock threads per SM, twice) or the walk is short; otherwise moving the dim last
// (two copies) and scanning rows in parallel tiles is faster. The workspace holds the chunked
// path's chunk totals (in double: the widest acc_t).
inline ScanPlan scan_plan(const ScanLaunch& p) {
  constexpr int64_t kShortColumn = 256;
  ScanPlan plan;
  plan.columns_in_place =
      p.n <= kShortColumn || p.outer * p.inner >= 2 * static_cast<int64_t>(sm_count()) * kBlock;
  const int chunks = scan_detail::chunks_for(p);
  plan.workspace_bytes = chunks > 1 ? p.outer * chunks * static_cast<int64_t>(sizeof(double)) : 0;
  return plan;
}

// Launches on p.stream; returns nullptr or the CUDA error string. kInt64: whether the combine has
// an int64 kernel (a logaddexp has none).
template <template <typename> class Op, bool kInt64>
const char* scan(const ScanLaunch& p) {
  if (p.outer * p.n * p.inner == 0) return nullptr;
  return launch_for_dtype<kInt64>(p.dtype, "dtype not supported by the CUDA scan kernels",
                                  [&](auto tag) { scan_detail::launch<decltype(tag), Op>(p); });
}

}  // namespace structgen::cuda_kernels
