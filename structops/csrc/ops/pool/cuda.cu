// Device side of max_pool2d/3d_with_indices and avg_pool2d (ops/pool/launch.h): CUDA and our
// own headers only, no torch (ARCHITECTURE decision 6). One thread per output element (grid-stride,
// 64-bit positions): adjacent threads hold adjacent output columns, so their window reads overlap
// and coalesce. The window's positions inside the input are walked in torch's order (d, h, w).
// max: NaN wins (the last NaN), ties keep the first position; a window whose values all equal the
// type's lowest value reports its first position, as the CPU impl. avg: the sum in acc_t (float
// for half/bfloat16, int64 for integers, truncating division as torch) over the divisor torch uses.
#include <cstdint>
#include <limits>

#include <structgen/cuda/launch.cuh>
#include <structgen/cuda/block_reduce.cuh>
#include <ops/pool/launch.h>
#include <ops/runtime_names.h>

namespace structops::cuda_kernels {
namespace {

// The first window index i of output o along dim `k` with o * s - p + i * d >= 0.
__device__ inline int64_t first_inside(const PoolLaunch& p, int k, int64_t o) {
  const int64_t start = o * p.stride[k] - p.padding[k];
  return start >= 0 ? 0 : (-start + p.dilation[k] - 1) / p.dilation[k];
}

// The window clipped to the padded input (with_pad) or to the input, along dim `k` (average).
__device__ inline int64_t clipped(const PoolLaunch& p, int k, int64_t o, bool with_pad) {
  const int64_t start = o * p.stride[k] - p.padding[k];
  const int64_t end = min(start + p.kernel[k], p.in[k] + p.padding[k]);
  return with_pad ? end - start : min(end, p.in[k]) - max(start, int64_t{0});
}

template <typename A>
__device__ A lowest() {
  if constexpr (std::numeric_limits<A>::has_infinity)
    return -std::numeric_limits<A>::infinity();
  else
    return std::numeric_limits<A>::lowest();
}

template <typename T, bool kMax>
__global__ void __launch_bounds__(kBlock) pool_kernel(PoolLaunch p) {
  using A = acc_t<T>;
  const T* self = static_cast<const T*>(p.self);
  T* result = static_cast<T*>(p.result);
  const int64_t numel = p.planes * p.out[0] * p.out[1] * p.out[2];
  const int64_t plane_in = p.in[0] * p.in[1] * p.in[2];
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < numel;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rem = e;
    int64_t o[3];
    for (int k = 2; k >= 0; --k) {
      o[k] = rem % p.out[k];
      rem /= p.out[k];
    }
    const T* x = self + rem * plane_in;  // rem: the plane
    int64_t lo[3];
    for (int k = 0; k < 3; ++k) lo[k] = first_inside(p, k, o[k]);
    A best = kMax ? lowest<A>() : A(0);
    int64_t at = -1;
    for (int64_t i = lo[0]; i < p.kernel[0]; ++i) {
      const int64_t id = o[0] * p.stride[0] - p.padding[0] + i * p.dilation[0];
      if (id >= p.in[0]) break;
      for (int64_t j = lo[1]; j < p.kernel[1]; ++j) {
        const int64_t ih = o[1] * p.stride[1] - p.padding[1] + j * p.dilation[1];
        if (ih >= p.in[1]) break;
        const int64_t row = (id * p.in[1] + ih) * p.in[2];
        for (int64_t l = lo[2]; l < p.kernel[2]; ++l) {
          const int64_t iw = o[2] * p.stride[2] - p.padding[2] + l * p.dilation[2];
          if (iw >= p.in[2]) break;
          const A v = static_cast<A>(x[row + iw]);
          if constexpr (kMax) {
            if (v > best || v != v) best = v, at = row + iw;  // NaN replaces the max
          } else {
            best += v;
          }
        }
      }
    }
    if constexpr (kMax) {
      if (at < 0) {  // every value equals the lowest: the window's first position inside the input
        const int64_t id = o[0] * p.stride[0] - p.padding[0] + lo[0] * p.dilation[0];
        const int64_t ih = o[1] * p.stride[1] - p.padding[1] + lo[1] * p.dilation[1];
        const int64_t iw = o[2] * p.stride[2] - p.padding[2] + lo[2] * p.dilation[2];
        at = (id * p.in[1] + ih) * p.in[2] + iw;
      }
      result[e] = static_cast<T>(best);
      p.indices[e] = at;
    } else {
      int64_t factor = p.divisor;
      if (factor == 0) {
        factor = 1;
        for (int k = 0; k < 3; ++k) factor *= clipped(p, k, o[k], p.count_include_pad);
      }
      result[e] = static_cast<T>(best / static_cast<A>(factor));
    }
  }
}

template <typename T>
void launch(const PoolLaunch& p) {
  const int64_t numel = p.planes * p.out[0] * p.out[1] * p.out[2];
  const int grid = grid_for((numel + kBlock - 1) / kBlock, 8);
  auto stream = static_cast<cudaStream_t>(p.stream);
  if (p.max)
    SO_LAUNCH(grid, kBlock, 0, stream, pool_kernel<T, true>)(p);
  else
    SO_LAUNCH(grid, kBlock, 0, stream, pool_kernel<T, false>)(p);
}

}  // namespace

const char* pool(const PoolLaunch& p) {
  if (p.planes * p.out[0] * p.out[1] * p.out[2] == 0) return nullptr;
  return launch_for_dtype<true>(p.dtype, "dtype not supported by the CUDA pooling kernels",
                                [&](auto tag) { launch<decltype(tag)>(p); });
}

}  // namespace structops::cuda_kernels
