// Device side of generated CUDA pointwise kernels: CUDA and our own headers only, no torch
// (ARCHITECTURE decision 6), so nvcc compile-checks every kernel on machines without CUDA torch.
//
// Two kernels per (op, dtype, index width):
//   contiguous: every operand dense and aligned; each thread moves VEC elements per step with
//     16-byte vector loads and stores, in a grid-stride loop unrolled Unroll times (Threads and Unroll: template parameters, so
//     an op's kernel variants can differ in them);
//   strided: any strides (broadcast, transposed, channels_last, sliced), up to 25 dims, through
//     an offset calculator over the merged geometry.
// 32-bit indices whenever every offset fits, 64-bit otherwise (tensors over 2^31 elements).
// half and bfloat16 load as their storage type and compute in float (the formula's T).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

#include <structops/cuda/launch.cuh>
#include <structops/cuda/opmath.cuh>
#include <structops/pointwise/launch.h>
#include <structops/pointwise/math.h>

namespace structops::cuda_kernels {

template <typename T, int VEC>
struct alignas(sizeof(T) * VEC) Vec {
  T v[VEC];
};

// No __restrict__ here or in the tiled mm: inplace calls pass the same memory as out and an input.
template <int Threads, int Unroll, int VEC, typename index_t, typename F, typename out_t, typename... in_t>
__global__ void __launch_bounds__(Threads)
    contiguous_kernel(F f, index_t n, out_t* out, const in_t*... in) {
  const index_t step = static_cast<index_t>(gridDim.x) * Threads * VEC;
  index_t base = (static_cast<index_t>(blockIdx.x) * Threads + threadIdx.x) * VEC;
#pragma unroll Unroll
  for (; base < n; base += step) {
    if (base + VEC <= n) {
      Vec<out_t, VEC> r;
      // All loads are issued before the formula runs (one 16-byte load per input).
      [&](const Vec<in_t, VEC>... v) {
#pragma unroll
        for (int j = 0; j < VEC; ++j) r.v[j] = static_cast<out_t>(f(v.v[j]...));
      }(*reinterpret_cast<const Vec<in_t, VEC>*>(in + base)...);
      *reinterpret_cast<Vec<out_t, VEC>*>(out + base) = r;
    } else {
      for (index_t i = base; i < n; ++i) out[i] = static_cast<out_t>(f(in[i]...));
    }
  }
}

template <int N, typename index_t>
struct OffsetCalculator {
  int ndim;
  index_t sizes[kPointwiseMaxDims];
  index_t strides[N + 1][kPointwiseMaxDims];

  __device__ void offsets(index_t linear, index_t (&off)[N + 1]) const {
#pragma unroll
    for (int k = 0; k <= N; ++k) off[k] = 0;
    for (int d = 0; d < ndim; ++d) {
      const index_t i = linear % sizes[d];
      linear /= sizes[d];
#pragma unroll
      for (int k = 0; k <= N; ++k) off[k] += i * strides[k][d];
    }
  }
};

template <int Threads, typename index_t, typename F, typename out_t, typename... in_t>
__global__ void __launch_bounds__(Threads)
    strided_kernel(F f, index_t n, OffsetCalculator<sizeof...(in_t), index_t> calc, out_t* out, const in_t*... in) {
  constexpr int N = sizeof...(in_t);
  const index_t step = static_cast<index_t>(gridDim.x) * Threads;
  for (index_t i = static_cast<index_t>(blockIdx.x) * Threads + threadIdx.x; i < n; i += step) {
    index_t off[N + 1];
    calc.offsets(i, off);
    [&]<size_t... I>(std::index_sequence<I...>) {
      out[off[0]] = static_cast<out_t>(f(in[off[I + 1]]...));
    }(std::make_index_sequence<N>{});
  }
}

inline int blocks_for(int64_t work, int threads) {
  const int64_t blocks = (work + threads - 1) / threads;
  return static_cast<int>(blocks < 1 ? 1 : (blocks > (1 << 30) ? (1 << 30) : blocks));
}

template <int N, typename index_t>
OffsetCalculator<N, index_t> offset_calculator(const PointwiseLaunch& p) {
  OffsetCalculator<N, index_t> calc{};
  calc.ndim = p.ndim;
  for (int d = 0; d < p.ndim; ++d) {
    calc.sizes[d] = static_cast<index_t>(p.sizes[d]);
    for (int k = 0; k <= N; ++k) calc.strides[k][d] = static_cast<index_t>(p.strides[k][d]);
  }
  return calc;
}

// Launches f over p on p.stream with Threads per block, the contiguous loop unrolled Unroll times
// (a kernel variant's parameters); returns nullptr, or the CUDA error's text.
template <int Threads, int Unroll, typename out_t, typename... in_t, typename F>
const char* launch(const F& f, const PointwiseLaunch& p) {
  constexpr int N = sizeof...(in_t);
  constexpr size_t widest = std::max({sizeof(out_t), sizeof(in_t)...});
  constexpr int VEC = static_cast<int>(16 / widest);
  if (p.numel == 0) return nullptr;
  auto stream = static_cast<cudaStream_t>(p.stream);
  out_t* out = static_cast<out_t*>(p.data[0]);

  bool dense = p.ndim == 1;
  bool aligned = reinterpret_cast<uintptr_t>(p.data[0]) % (VEC * sizeof(out_t)) == 0;
  constexpr size_t in_sizes[] = {sizeof(in_t)...};
  int64_t max_offset = 0;
  for (int k = 0; k <= N; ++k) {
    dense = dense && p.strides[k][0] == 1;
    if (k > 0) aligned = aligned && reinterpret_cast<uintptr_t>(p.data[k]) % (VEC * in_sizes[k - 1]) == 0;
    int64_t last = 0;
    for (int d = 0; d < p.ndim; ++d) last += (p.sizes[d] - 1) * p.strides[k][d];
    max_offset = last > max_offset ? last : max_offset;
  }
  const bool small = index_fits(std::max(p.numel, max_offset), int64_t{1} << 31);  // int32 range

  [&]<size_t... I>(std::index_sequence<I...>) {
    if (dense && aligned) {
      const int blocks = blocks_for((p.numel + VEC * Unroll - 1) / (VEC * Unroll), Threads);
      if (small) {
        SO_LAUNCH(blocks, Threads, 0, stream, contiguous_kernel<Threads, Unroll, VEC, uint32_t>)(
            f, static_cast<uint32_t>(p.numel), out, static_cast<const in_t*>(p.data[I + 1])...);
      } else {
        SO_LAUNCH(blocks, Threads, 0, stream, contiguous_kernel<Threads, Unroll, VEC, int64_t>)(
            f, p.numel, out, static_cast<const in_t*>(p.data[I + 1])...);
      }
    } else {
      const int blocks = blocks_for(p.numel, Threads);
      if (small) {
        SO_LAUNCH(blocks, Threads, 0, stream, strided_kernel<Threads, uint32_t>)(
            f, static_cast<uint32_t>(p.numel), offset_calculator<N, uint32_t>(p), out,
            static_cast<const in_t*>(p.data[I + 1])...);
      } else {
        SO_LAUNCH(blocks, Threads, 0, stream, strided_kernel<Threads, int64_t>)(
            f, p.numel, offset_calculator<N, int64_t>(p), out, static_cast<const in_t*>(p.data[I + 1])...);
      }
    }
  }(std::make_index_sequence<N>{});
  const cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? nullptr : cudaGetErrorString(err);
}

}  // namespace structops::cuda_kernels
