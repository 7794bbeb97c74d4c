// Device side of cdist (ops/cdist/launch.h): CUDA and our own headers only, no torch
// (ARCHITECTURE decision 6).
//   direct: a block computes a 16 x 16 tile of out; the 16 rows of x1 and of x2 it needs are
//     staged through shared memory kTileK coordinates at a time (x2's rows padded by one so the
//     threads of a warp read distinct banks), each thread folds |x1 - x2| of its (i, j) over m;
//   mm form (p = 2): the host glue computes -2 x1 x2^T with cuBLAS (ATen's bmm); here a warp per row
//     computes the squared norms of x1's and x2's rows, then one thread per output element adds
//     them and takes sqrt(max(., 0)), as torch does.
// half and bfloat16 compute in float. Batches and tile rows beyond the grid's limits are covered
// by grid-stride loops.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include <structgen/cuda/launch.cuh>
#include <structgen/cuda/block_reduce.cuh>
#include <ops/cdist/launch.h>
#include <ops/runtime_names.h>

namespace structops::cuda_kernels {
namespace {

constexpr int kTile = 16;   // out tile: kTile x kTile, one element per thread
constexpr int kTileK = 32;  // coordinates staged per step

enum class Norm { Zero, One, Two, Inf, General };

template <Norm K, typename A>
__device__ A fold(A acc, A d, A p) {
  if constexpr (K == Norm::Zero)
    return acc + (d != d ? d : (d != A(0) ? A(1) : A(0)));  // NaN propagates, as the CPU
  else if constexpr (K == Norm::One)
    return acc + d;
  else if constexpr (K == Norm::Two)
    return acc + d * d;
  else if constexpr (K == Norm::Inf)
    return d > acc || d != d ? d : acc;  // NaN propagates
  else
    return acc + pow(d, p);
}

template <Norm K, typename A>
__device__ A finish(A acc, A p) {
  if constexpr (K == Norm::Two)
    return sqrt(acc);
  else if constexpr (K == Norm::General)
    return pow(acc, A(1) / p);
  else
    return acc;
}

template <typename T, Norm K>
__global__ void __launch_bounds__(kTile* kTile) direct_kernel(CdistLaunch p) {
  using A = acc_t<T>;
  SO_SHARED(A, xs, [kTile][kTileK]);
  SO_SHARED(A, ys, [kTile][kTileK + 1]);
  const T* x1 = static_cast<const T*>(p.x1);
  const T* x2 = static_cast<const T*>(p.x2);
  T* out = static_cast<T*>(p.out);
  const int tx = threadIdx.x % kTile, ty = threadIdx.x / kTile;
  const A pv = static_cast<A>(p.p);
  const int64_t tiles_i = (p.r1 + kTile - 1) / kTile, tiles_j = (p.r2 + kTile - 1) / kTile;
  // Loops uniform across the block (the __syncthreads below).
  for (int64_t b = blockIdx.z; b < p.batches; b += gridDim.z) {
    for (int64_t ti = blockIdx.y; ti < tiles_i; ti += gridDim.y) {
      for (int64_t tj = blockIdx.x; tj < tiles_j; tj += gridDim.x) {
        const int64_t i = ti * kTile + ty, j = tj * kTile + tx;
        A acc = A(0);
        for (int64_t k0 = 0; k0 < p.m; k0 += kTileK) {
          // 256 threads stage 16 x 32 coordinates of each operand: two per thread per operand.
          for (int e = threadIdx.x; e < kTile * kTileK; e += kTile * kTile) {
            const int row = e / kTileK, col = e % kTileK;
            const int64_t k = k0 + col, xi = ti * kTile + row, yj = tj * kTile + row;
            xs[row][col] = xi < p.r1 && k < p.m ? static_cast<A>(x1[(b * p.r1 + xi) * p.m + k]) : A(0);
            ys[row][col] = yj < p.r2 && k < p.m ? static_cast<A>(x2[(b * p.r2 + yj) * p.m + k]) : A(0);
          }
          __syncthreads();
          const int kn = p.m - k0 < kTileK ? static_cast<int>(p.m - k0) : kTileK;
          for (int k = 0; k < kn; ++k) acc = fold<K, A>(acc, abs(xs[ty][k] - ys[tx][k]), pv);
          __syncthreads();
        }
        if (i < p.r1 && j < p.r2) out[(b * p.r1 + i) * p.r2 + j] = static_cast<T>(finish<K, A>(acc, pv));
      }
    }
  }
}

// norms[r] = sum_k x[r, k]^2 over `rows` rows of m: a warp per row.
template <typename T>
__global__ void __launch_bounds__(kBlock)
    row_norms_kernel(const T* x, int64_t rows, int64_t m, acc_t<T>* norms) {
  using A = acc_t<T>;
  const int lane = threadIdx.x % kWarp;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (kBlock / kWarp);
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * (kBlock / kWarp) + threadIdx.x / kWarp; r < rows;
       r += warps) {
    A s = A(0);
    for (int64_t k = lane; k < m; k += kWarp) {
      const A v = static_cast<A>(x[r * m + k]);
      s += v * v;
    }
    s = warp_reduce(s, SumOp<A>{});
    if (lane == 0) norms[r] = s;
  }
}

template <typename T>
__global__ void __launch_bounds__(kBlock)
    mm_finish_kernel(CdistLaunch p, const acc_t<T>* n1, const acc_t<T>* n2) {
  using A = acc_t<T>;
  T* out = static_cast<T*>(p.out);
  const int64_t numel = p.batches * p.r1 * p.r2;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < numel;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = e / p.r2, j = e - row * p.r2, b = row / p.r1;
    const A norms = n1[row] + n2[b * p.r2 + j];
    A d2 = norms + static_cast<A>(out[e]);
    if (d2 < static_cast<A>(linalg::kCdistRecompute) * norms) {  // cancelled: computed again directly
      const T* x = static_cast<const T*>(p.x1) + row * p.m;
      const T* y = static_cast<const T*>(p.x2) + (b * p.r2 + j) * p.m;
      d2 = A(0);
      for (int64_t k = 0; k < p.m; ++k)
        d2 = fold<Norm::Two, A>(d2, static_cast<A>(x[k]) - static_cast<A>(y[k]), A(2));
    }
    out[e] = static_cast<T>(sqrt(d2 < A(0) ? A(0) : d2));  // NaN stays NaN (as torch's clamp_min)
  }
}

template <typename T>
void launch_direct(const CdistLaunch& p) {
  const dim3 grid(static_cast<unsigned>(std::min<int64_t>((p.r2 + kTile - 1) / kTile, 1 << 30)),
                  static_cast<unsigned>(std::min<int64_t>((p.r1 + kTile - 1) / kTile, 65535)),
                  static_cast<unsigned>(std::min<int64_t>(p.batches, 65535)));
  auto stream = static_cast<cudaStream_t>(p.stream);
  constexpr int threads = kTile * kTile;
  if (p.p == 0)
    SO_LAUNCH(grid, threads, 0, stream, direct_kernel<T, Norm::Zero>)(p);
  else if (p.p == 1)
    SO_LAUNCH(grid, threads, 0, stream, direct_kernel<T, Norm::One>)(p);
  else if (p.p == 2)
    SO_LAUNCH(grid, threads, 0, stream, direct_kernel<T, Norm::Two>)(p);
  else if (std::isinf(p.p))
    SO_LAUNCH(grid, threads, 0, stream, direct_kernel<T, Norm::Inf>)(p);
  else
    SO_LAUNCH(grid, threads, 0, stream, direct_kernel<T, Norm::General>)(p);
}

template <typename T>
void launch_mm_finish(const CdistLaunch& p) {
  using A = acc_t<T>;
  auto stream = static_cast<cudaStream_t>(p.stream);
  A* n1 = static_cast<A*>(p.workspace);
  A* n2 = n1 + p.batches * p.r1;
  constexpr int kRowsPerBlock = kBlock / kWarp;
  SO_LAUNCH(grid_for((p.batches * p.r1 + kRowsPerBlock - 1) / kRowsPerBlock, 8), kBlock, 0, stream,
            row_norms_kernel<T>)(static_cast<const T*>(p.x1), p.batches * p.r1, p.m, n1);
  SO_LAUNCH(grid_for((p.batches * p.r2 + kRowsPerBlock - 1) / kRowsPerBlock, 8), kBlock, 0, stream,
            row_norms_kernel<T>)(static_cast<const T*>(p.x2), p.batches * p.r2, p.m, n2);
  const int64_t numel = p.batches * p.r1 * p.r2;
  SO_LAUNCH(grid_for((numel + kBlock - 1) / kBlock, 8), kBlock, 0, stream, mm_finish_kernel<T>)(p, n1, n2);
}

}  // namespace

const char* cdist_direct(const CdistLaunch& p) {
  if (p.batches * p.r1 * p.r2 == 0) return nullptr;
  return launch_for_dtype<false>(p.dtype, "dtype not supported by the CUDA cdist kernels",
                                 [&](auto tag) { launch_direct<decltype(tag)>(p); });
}

int64_t cdist_workspace_bytes(const CdistLaunch& p) {
  return p.batches * (p.r1 + p.r2) * static_cast<int64_t>(sizeof(double));  // double: the widest acc_t
}

const char* cdist_mm_finish(const CdistLaunch& p) {
  if (p.batches * p.r1 * p.r2 == 0) return nullptr;
  return launch_for_dtype<false>(p.dtype, "dtype not supported by the CUDA cdist kernels",
                                 [&](auto tag) { launch_mm_finish<decltype(tag)>(p); });
}

}  // namespace structops::cuda_kernels
