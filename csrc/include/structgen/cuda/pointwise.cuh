// Device side of generated CUDA pointwise kernels: CUDA and our own headers only, no torch
// (ARCHITECTURE decision 6), so nvcc compile-checks every kernel on machines without CUDA torch.
//
// Two kernels per (op, dtype, index width):
//   contiguous: every operand dense and aligned; each thread moves VEC elements per step with
//     16-byte vector loads and stores, in a grid-stride loop unrolled Unroll times (Threads and Unroll:
//     template parameters, so an op's kernel variants can differ in them);
//   strided: any strides (broadcast, transposed, channels_last, sliced), up to 25 dims, through
//     an offset calculator over the merged geometry (divisions by the dims' sizes as multiplies),
//     kStridedPerThread elements per thread with their loads issued together.
// 32-bit indices whenever every offset fits, 64-bit otherwise (tensors over 2^31 elements).
// half and bfloat16 load as their storage type and compute in float (the formula's T).
// An input given as a CPU scalar is read from the launch's values (Values), not from memory.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include <structgen/cuda/launch.cuh>
#include <structgen/cuda/opmath.cuh>
#include <structgen/pointwise/launch.h>
#include <structgen/pointwise/math.h>

namespace structgen::cuda_kernels {

template <typename T, int VEC>
struct alignas(sizeof(T) * VEC) Vec {
  T v[VEC];
};

// The inputs given as CPU scalars (PointwiseLaunch::is_value), by operand number: read here, not
// from memory, in the opmath type of the input's storage type (float for half and bfloat16, as
// torch's kernels read a CPU scalar: 65536 would be inf as half).
template <int N>
struct Values {
  bool is_value[N + 1] = {};
  alignas(16) unsigned char bytes[N + 1][16] = {};

  template <typename T>
  __device__ opmath_t<T> get(int k) const {
    opmath_t<T> v;
    memcpy(&v, bytes[k], sizeof(v));
    return v;
  }
};

// An input's element as the formula takes it: its value where it is given as one, else the
// element widened to its opmath type.
template <typename T, int N>
__device__ opmath_t<T> operand(const T& x, const Values<N>& values, int k) {
  return values.is_value[k] ? values.template get<T>(k) : static_cast<opmath_t<T>>(x);
}

template <int VEC, typename T, typename index_t, int N>
__device__ Vec<opmath_t<T>, VEC> load_vec(const T* p, index_t base, const Values<N>& values, int k) {
  Vec<opmath_t<T>, VEC> r;
  if (!values.is_value[k]) {
    const Vec<T, VEC> v = *reinterpret_cast<const Vec<T, VEC>*>(p + base);
#pragma unroll
    for (int j = 0; j < VEC; ++j) r.v[j] = static_cast<opmath_t<T>>(v.v[j]);
    return r;
  }
  const opmath_t<T> v = values.template get<T>(k);
#pragma unroll
  for (int j = 0; j < VEC; ++j) r.v[j] = v;
  return r;
}

// No __restrict__ here or in the tiled mm: inplace calls pass the same memory as out and an input.
template <int Threads, int Unroll, int VEC, typename index_t, typename F, typename out_t, typename... in_t>
__global__ void __launch_bounds__(Threads)
    contiguous_kernel(F f, index_t n, Values<sizeof...(in_t)> values, out_t* out, const in_t*... in) {
  const index_t step = static_cast<index_t>(gridDim.x) * Threads * VEC;
  index_t base = (static_cast<index_t>(blockIdx.x) * Threads + threadIdx.x) * VEC;
  [&]<size_t... I>(std::index_sequence<I...>) {
#pragma unroll Unroll
    for (; base < n; base += step) {
      if (base + VEC <= n) {
        Vec<out_t, VEC> r;
        // All loads are issued before the formula runs (one 16-byte load per input).
        [&](const auto&... v) {  // (nvcc: a pack of the kernel's in_t here fails to expand)
#pragma unroll
          for (int j = 0; j < VEC; ++j) r.v[j] = static_cast<out_t>(f(v.v[j]...));
        }(load_vec<VEC>(in, base, values, I + 1)...);
        *reinterpret_cast<Vec<out_t, VEC>*>(out + base) = r;
      } else {
        for (index_t i = base; i < n; ++i) {
          out[i] = static_cast<out_t>(f(operand(in[i], values, I + 1)...));
        }
      }
    }
  }(std::make_index_sequence<sizeof...(in_t)>{});
}

// n / d and n % d for a divisor fixed at launch, as a multiply-high, an add and a shift
// (Granlund and Montgomery's round-up method, as torch's IntDivider): the strided kernel splits
// every linear index into per-dim positions, and a hardware 32-bit division costs ~20
// instructions per dim. Exact for every n < 2^31, which the 32-bit instantiation guarantees;
// the 64-bit one divides.
template <typename index_t>
struct Divider {
  index_t d = 1;
  void set(index_t divisor) { d = divisor; }
  __device__ index_t div(index_t n) const { return n / d; }
};

template <>
struct Divider<uint32_t> {
  uint32_t d = 1;
  uint32_t magic = 1;  // floor(2^32 * (2^shift - d) / d) + 1
  uint32_t shift = 0;  // ceil(log2(d))
  void set(uint32_t divisor) {
    d = divisor;
    shift = 0;
    while (shift < 32 && (uint64_t{1} << shift) < divisor) ++shift;
    magic = static_cast<uint32_t>(((uint64_t{1} << 32) * ((uint64_t{1} << shift) - divisor)) / divisor + 1);
  }
  __device__ uint32_t div(uint32_t n) const {
    return (__umulhi(n, magic) + n) >> shift;  // __umulhi(n, magic) <= n < 2^31: no overflow
  }
};

template <int N, typename index_t>
struct OffsetCalculator {
  int ndim;
  Divider<index_t> sizes[kPointwiseMaxDims];
  index_t strides[N + 1][kPointwiseMaxDims];

  __device__ void offsets(index_t linear, index_t (&off)[N + 1]) const {
#pragma unroll
    for (int k = 0; k <= N; ++k) off[k] = 0;
    for (int d = 0; d < ndim; ++d) {
      const index_t next = sizes[d].div(linear);
      const index_t i = linear - next * sizes[d].d;
      linear = next;
#pragma unroll
      for (int k = 0; k <= N; ++k) off[k] += i * strides[k][d];
    }
  }
};

// Elements per thread in the strided kernel: their offsets and loads are all issued before the
// formula runs, so a thread keeps several memory requests in flight (gathers cannot vectorise).
constexpr int kStridedPerThread = 4;

template <typename T, int K>
struct Lanes {
  T v[K];
};

template <int Threads, typename index_t, typename F, typename out_t, typename... in_t>
__global__ void __launch_bounds__(Threads)
    strided_kernel(F f, index_t n, OffsetCalculator<sizeof...(in_t), index_t> calc,
                   Values<sizeof...(in_t)> values, out_t* out, const in_t*... in) {
  constexpr int N = sizeof...(in_t);
  constexpr int K = kStridedPerThread;
  const index_t step = static_cast<index_t>(gridDim.x) * Threads * K;
  for (index_t base = static_cast<index_t>(blockIdx.x) * Threads * K + threadIdx.x; base < n; base += step) {
    index_t off[K][N + 1];
#pragma unroll
    for (int j = 0; j < K; ++j) {
      if (base + j * Threads < n) calc.offsets(base + j * Threads, off[j]);
    }
    [&]<size_t... I>(std::index_sequence<I...>) {
      const auto gather = [&](const auto* p, size_t k) {
        using T = std::remove_cv_t<std::remove_pointer_t<decltype(p)>>;
        Lanes<opmath_t<T>, K> r{};
        if (values.is_value[k]) {
          const opmath_t<T> v = values.template get<T>(k);
#pragma unroll
          for (int j = 0; j < K; ++j) r.v[j] = v;
          return r;
        }
#pragma unroll
        for (int j = 0; j < K; ++j) {
          if (base + j * Threads < n) r.v[j] = static_cast<opmath_t<T>>(p[off[j][k]]);
        }
        return r;
      };
      const auto apply = [&](const auto&... v) {
#pragma unroll
        for (int j = 0; j < K; ++j) {
          if (base + j * Threads < n) out[off[j][0]] = static_cast<out_t>(f(v.v[j]...));
        }
      };
      apply(gather(in, I + 1)...);  // the inputs and their operand numbers, in step
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
    calc.sizes[d].set(static_cast<index_t>(p.sizes[d]));
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

  Values<N> values;
  for (int k = 1; k <= N; ++k) {
    values.is_value[k] = p.is_value[k];
    memcpy(values.bytes[k], p.values[k], sizeof(values.bytes[k]));
  }
  bool dense = p.ndim == 1;
  bool aligned = reinterpret_cast<uintptr_t>(p.data[0]) % (VEC * sizeof(out_t)) == 0;
  constexpr size_t in_sizes[] = {sizeof(in_t)...};
  int64_t max_offset = 0;
  for (int k = 0; k <= N; ++k) {
    if (p.is_value[k]) continue;  // read from the launch: any layout
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
            f, static_cast<uint32_t>(p.numel), values, out, static_cast<const in_t*>(p.data[I + 1])...);
      } else {
        SO_LAUNCH(blocks, Threads, 0, stream, contiguous_kernel<Threads, Unroll, VEC, int64_t>)(
            f, p.numel, values, out, static_cast<const in_t*>(p.data[I + 1])...);
      }
    } else {
      const int blocks = blocks_for((p.numel + kStridedPerThread - 1) / kStridedPerThread, Threads);
      if (small) {
        SO_LAUNCH(blocks, Threads, 0, stream, strided_kernel<Threads, uint32_t>)(
            f, static_cast<uint32_t>(p.numel), offset_calculator<N, uint32_t>(p), values, out,
            static_cast<const in_t*>(p.data[I + 1])...);
      } else {
        SO_LAUNCH(blocks, Threads, 0, stream, strided_kernel<Threads, int64_t>)(
            f, p.numel, offset_calculator<N, int64_t>(p), values, out,
            static_cast<const in_t*>(p.data[I + 1])...);
      }
    }
  }(std::make_index_sequence<N>{});
  const cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? nullptr : cudaGetErrorString(err);
}

}  // namespace structgen::cuda_kernels
