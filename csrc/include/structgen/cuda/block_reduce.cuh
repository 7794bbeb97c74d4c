// Block- and warp-level reductions shared by the hand-written CUDA kernels (csrc/ops/*/cuda.cu):
// accumulator types (float for half/bfloat16), sum and NaN-propagating max/min, shuffles, and grid
// sizing by the device's multiprocessor count. CUDA headers only, no torch.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include <structgen/cuda/opmath.cuh>
#include <structgen/pointwise/launch.h>  // Dtype

namespace structgen::cuda_kernels {

constexpr int kWarp = 32;
constexpr int kBlock = 256;

template <typename T>
using acc_t = opmath_t<T>;  // what reductions accumulate in

template <typename A>
struct SumOp {
  __device__ A identity() const { return A(0); }
  __device__ A combine(A a, A b) const { return a + b; }
};

template <typename A>
struct ProdOp {
  __device__ A identity() const { return A(1); }
  __device__ A combine(A a, A b) const { return a * b; }
};

// NaN-propagating max (kMax) / min, as torch.amax/amin.
template <typename A, bool kMax>
struct ExtremeOp {
  __device__ A identity() const {
    if constexpr (std::numeric_limits<A>::has_infinity) {
      return kMax ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::infinity();
    } else {
      return kMax ? std::numeric_limits<A>::lowest() : std::numeric_limits<A>::max();
    }
  }
  __device__ A combine(A a, A b) const {
    if (a != a) return a;  // NaN wins (never true for integers)
    if (b != b) return b;
    return kMax ? (b > a ? b : a) : (b < a ? b : a);
  }
};

// A lane's value `offset` lanes down. An accumulator that is a struct (argmax's value and
// position) overloads it member by member: __shfl_down_sync moves scalars only.
template <typename A>
__device__ A shfl_down(A v, int offset) {
  return __shfl_down_sync(0xffffffffu, v, offset);
}

template <typename A, typename Op>
__device__ A warp_reduce(A v, const Op& op) {
#pragma unroll
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v = op.combine(v, shfl_down(v, offset));
  return v;
}

// The block's result in thread 0; `shared` holds one value per warp.
template <typename A, typename Op>
__device__ A block_reduce(A v, const Op& op, A* shared) {
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  v = warp_reduce(v, op);
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = threadIdx.x < blockDim.x / kWarp ? shared[lane] : op.identity();
  if (warp == 0) v = warp_reduce(v, op);
  __syncthreads();  // `shared` is reused for the next row
  return v;
}

// The current device's multiprocessor count (grids are sized to it), cached per device.
inline int sm_count() {
  int device = 0;
  cudaGetDevice(&device);
  static int cached[64] = {};
  if (device < 64 && cached[device] > 0) return cached[device];
  int n = 1;
  cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device);
  if (device < 64) cached[device] = n;
  return n;
}

inline int grid_for(int64_t tasks, int per_sm) {
  return static_cast<int>(
      std::max<int64_t>(1, std::min<int64_t>(tasks, static_cast<int64_t>(sm_count()) * per_sm)));
}

// Calls launch(T{}) with T the device type of `dtype` (float, double, __half, __nv_bfloat16, and
// int64_t where kInt64), then returns nullptr or the CUDA error; `unsupported` for other dtypes.
template <bool kInt64, typename F>
const char* launch_for_dtype(Dtype dtype, const char* unsupported, F&& launch) {
  switch (dtype) {
    case Dtype::Float32:
      launch(float{});
      break;
    case Dtype::Float64:
      launch(double{});
      break;
    case Dtype::Float16:
      launch(__half{});
      break;
    case Dtype::BFloat16:
      launch(__nv_bfloat16{});
      break;
    case Dtype::Int64:
      if constexpr (!kInt64) {
        return unsupported;
      } else {
        launch(int64_t{});
        break;
      }
    default:
      return unsupported;
  }
  const cudaError_t error = cudaGetLastError();
  return error == cudaSuccess ? nullptr : cudaGetErrorString(error);
}

}  // namespace structgen::cuda_kernels
