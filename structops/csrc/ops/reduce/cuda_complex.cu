// Device side of the complex reductions no real fold computes (ops/reduce/launch.h,
// complex_rows): prod, and logsumexp for the normalisation family's host glue. One warp per row
// of contiguous complex elements (real and imaginary parts interleaved); a lane folds every
// 32nd element, the lanes merge by shuffles. CUDA and our own headers only, no torch
// (ARCHITECTURE decision 6). The rest of the complex reductions (sum, mean, all, any, norms,
// var, std) are real folds over the parts, in the host glue.
#include <cmath>
#include <cstdint>

#include <structgen/cuda/block_reduce.cuh>
#include <structgen/cuda/launch.cuh>
#include <ops/reduce/launch.h>
#include <ops/runtime_names.h>

namespace structops::cuda_kernels {
namespace {

template <typename R>
struct Cx {
  R re, im;
};

template <typename R>
__device__ Cx<R> times(Cx<R> a, Cx<R> b) {  // c10::complex's product: no infinity recovery
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}

template <typename R>
__device__ Cx<R> down(Cx<R> v, int offset) {
  return {__shfl_down_sync(0xffffffffu, v.re, offset), __shfl_down_sync(0xffffffffu, v.im, offset)};
}

// prod (kLogSumExp false) or logsumexp of each row: torch's shift by the largest real part (0
// when it is infinite), the complex sum of exp(z - shift), its complex log plus the shift.
template <typename R, bool kLogSumExp>
__global__ void __launch_bounds__(kBlock)
    complex_rows_kernel(const R* __restrict__ in, R* __restrict__ out, int64_t rows, int64_t n) {
  const int lane = threadIdx.x % kWarp;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (kBlock / kWarp);
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * (kBlock / kWarp) + threadIdx.x / kWarp; row < rows;
       row += warps) {
    const R* x = in + 2 * row * n;
    Cx<R> acc;
    if constexpr (!kLogSumExp) {
      acc = {R(1), R(0)};
      for (int64_t i = lane; i < n; i += kWarp) acc = times(acc, Cx<R>{x[2 * i], x[2 * i + 1]});
      for (int offset = kWarp / 2; offset > 0; offset /= 2) acc = times(acc, down(acc, offset));
    } else {
      R m = -INFINITY;
      for (int64_t i = lane; i < n; i += kWarp) m = fmax(m, x[2 * i]);  // NaN parts skipped, as std::max
      for (int offset = kWarp / 2; offset > 0; offset /= 2)
        m = fmax(m, __shfl_xor_sync(0xffffffffu, m, offset));
      const R shift = isinf(m) ? R(0) : m;
      acc = {R(0), R(0)};
      for (int64_t i = lane; i < n; i += kWarp) {
        const R e = exp(x[2 * i] - shift);
        if (e != R(0))
          acc.re += e * cos(x[2 * i + 1]), acc.im += e * sin(x[2 * i + 1]);  // exp(-inf + iy) is 0
      }
      for (int offset = kWarp / 2; offset > 0; offset /= 2) {
        const Cx<R> other = down(acc, offset);
        acc.re += other.re, acc.im += other.im;
      }
      acc = {log(hypot(acc.re, acc.im)) + shift, atan2(acc.im, acc.re)};
    }
    if (lane == 0) out[2 * row] = acc.re, out[2 * row + 1] = acc.im;
  }
}

template <typename R>
void launch_complex(const ReduceLaunch& p) {
  const int64_t blocks = (p.outer + kBlock / kWarp - 1) / (kBlock / kWarp);
  auto stream = static_cast<cudaStream_t>(p.stream);
  const R* in = static_cast<const R*>(p.in);
  R* out = static_cast<R*>(p.out);
  if (p.op == ReduceOp::LogSumExp) {
    SO_LAUNCH(grid_for(blocks, 8), kBlock, 0, stream, complex_rows_kernel<R, true>)(in, out, p.outer, p.n);
  } else {
    SO_LAUNCH(grid_for(blocks, 8), kBlock, 0, stream, complex_rows_kernel<R, false>)(in, out, p.outer, p.n);
  }
}

}  // namespace

const char* complex_rows(const ReduceLaunch& p) {
  if (p.outer == 0) return nullptr;
  if (p.op != ReduceOp::Prod && p.op != ReduceOp::LogSumExp)
    return "complex_rows takes prod and logsumexp only";
  if (p.dtype == Dtype::ComplexFloat) {
    launch_complex<float>(p);
  } else if (p.dtype == Dtype::ComplexDouble) {
    launch_complex<double>(p);
  } else {
    return "dtype not supported by the CUDA complex reductions";
  }
  const cudaError_t error = cudaGetLastError();
  return error == cudaSuccess ? nullptr : cudaGetErrorString(error);
}

}  // namespace structops::cuda_kernels
