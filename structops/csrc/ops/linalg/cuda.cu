// Device side of structops' own CUDA matrix product (MmLaunch in launch.h; the "tiled" variant next
// to cuBLAS through ATen, cuda_host.cpp): c = alpha * a @ b + beta * c on contiguous row-major a [m, k],
// b [k, n], c [m, n]. CUDA and our own headers only, no torch.
//
// Classic shared-memory tiling: a block computes a 64x64 tile of c with 256 threads, each a 4x4
// register tile; k advances in steps of 16 through shared-memory copies of a's and b's panels.
// half and bfloat16 are loaded as float and accumulated in float; beta == 0 never reads c.
#include <algorithm>
#include <cstdint>

#include <structgen/cuda/block_reduce.cuh>  // acc_t
#include <structgen/cuda/launch.cuh>
#include <ops/linalg/launch.h>
#include <ops/runtime_names.h>

namespace structops {
namespace cuda_kernels {
namespace {

constexpr int kTile = 64, kDepth = 16, kMicro = 4;  // 64x64 tile of c, k in steps of 16, 4x4 per thread

template <typename T>
__global__ void __launch_bounds__(256)
    mm_kernel(const T* a, const T* b, T* c, int64_t m, int64_t n, int64_t k, acc_t<T> alpha, acc_t<T> beta) {
  using A = acc_t<T>;
  SO_SHARED(A, as, [kDepth][kTile + 1]);  // a's panel, transposed: as[kk][row]
  SO_SHARED(A, bs, [kDepth][kTile + 1]);  // b's panel: bs[kk][col]
  const int tx = threadIdx.x % (kTile / kMicro), ty = threadIdx.x / (kTile / kMicro);
  // Tiles in row-major order on one grid dimension (grid.y would cap m at 65535 tiles); blocks
  // next to each other share a's row panel.
  const int64_t col_tiles = (n + kTile - 1) / kTile, tiles = (m + kTile - 1) / kTile * col_tiles;
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t row0 = tile / col_tiles * kTile, col0 = tile % col_tiles * kTile;
    A acc[kMicro][kMicro] = {};
    for (int64_t k0 = 0; k0 < k; k0 += kDepth) {
      // 256 threads load 64x16 elements of each panel: 4 each, zero outside the matrices.
      for (int e = threadIdx.x; e < kTile * kDepth; e += blockDim.x) {
        const int r = e / kDepth, kk = e % kDepth;
        const int64_t gr = row0 + r, gk = k0 + kk;
        as[kk][r] = gr < m && gk < k ? static_cast<A>(a[gr * k + gk]) : A(0);
        const int kb = e / kTile, cc = e % kTile;
        const int64_t gkb = k0 + kb, gc = col0 + cc;
        bs[kb][cc] = gkb < k && gc < n ? static_cast<A>(b[gkb * n + gc]) : A(0);
      }
      __syncthreads();
#pragma unroll
      for (int kk = 0; kk < kDepth; ++kk) {
        A ar[kMicro], br[kMicro];
#pragma unroll
        for (int i = 0; i < kMicro; ++i) ar[i] = as[kk][ty * kMicro + i], br[i] = bs[kk][tx * kMicro + i];
#pragma unroll
        for (int i = 0; i < kMicro; ++i) {
#pragma unroll
          for (int j = 0; j < kMicro; ++j) acc[i][j] += ar[i] * br[j];
        }
      }
      __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < kMicro; ++i) {
      const int64_t r = row0 + ty * kMicro + i;
#pragma unroll
      for (int j = 0; j < kMicro; ++j) {
        const int64_t col = col0 + tx * kMicro + j;
        if (r < m && col < n) {
          A v = alpha * acc[i][j];
          if (beta != A(0)) v += beta * static_cast<A>(c[r * n + col]);
          c[r * n + col] = static_cast<T>(v);
        }
      }
    }
  }
}

template <typename T>
void launch(const MmLaunch& p) {
  using A = acc_t<T>;
  const int64_t tiles = (p.m + kTile - 1) / kTile * ((p.n + kTile - 1) / kTile);
  const int grid = static_cast<int>(std::min<int64_t>(tiles, int64_t{1} << 30));
  SO_LAUNCH(grid, 256, 0, static_cast<cudaStream_t>(p.stream), mm_kernel<T>)(
      static_cast<const T*>(p.a), static_cast<const T*>(p.b), static_cast<T*>(p.c), p.m, p.n, p.k,
      static_cast<A>(p.alpha), static_cast<A>(p.beta));
}

}  // namespace

const char* mm(const MmLaunch& p) {
  if (p.m == 0 || p.n == 0) return nullptr;
  return launch_for_dtype<false>(p.dtype, "dtype not supported by structops' CUDA mm kernel",
                                 [&](auto tag) { launch<decltype(tag)>(p); });
}

}  // namespace cuda_kernels
}  // namespace structops
