// Device side of mse_loss, binary_cross_entropy and cross_entropy_loss (ops/loss/launch.h):
// CUDA and our own headers only, no torch (ARCHITECTURE decision 6).
//   mse / bce: one grid-stride pass computes each element's loss in acc_t (float for
//     half/bfloat16) and writes it (reduction none) or adds it to a per-thread double, reduced per
//     block into the workspace; bce raises a device flag for a self value outside [0, 1] (NaN too);
//   cross_entropy: one sample (n, s) per thread, or per warp when S == 1 and C >= 32 (a row of C
//     contiguous classes: the lanes split it and reduce with shuffles); max, log-sum-exp and the
//     loss as the CPU impl; a class target that is neither a class nor ignore_index lowers a
//     device int64 to its position (atomicMin: the first one in sample order), and is skipped;
//   finish (reductions): one block adds the per-block partials in block order and writes the sum,
//     or the mean over n (mse/bce) or over the counted target weights (cross_entropy).
// The summation order depends only on the sizes and the SM count.
#include <cmath>
#include <cstdint>

#include <structgen/cuda/launch.cuh>
#include <structgen/cuda/block_reduce.cuh>
#include <ops/loss/launch.h>
#include <ops/runtime_names.h>

namespace structops::cuda_kernels {
namespace {

constexpr int kPerSm = 4;  // blocks per SM of the reducing kernels (their partials: at most a few hundred)

int blocks_for(int64_t threads) { return grid_for((threads + kBlock - 1) / kBlock, kPerSm); }

template <typename T>
__device__ acc_t<T> load(const T* p, int64_t i) {
  return static_cast<acc_t<T>>(p[i]);
}

template <typename T>
__device__ T store(double v) {
  return static_cast<T>(static_cast<acc_t<T>>(v));
}

template <typename T>
__global__ void __launch_bounds__(kBlock) loss_kernel(LossLaunch p, double* partials) {
  using A = acc_t<T>;
  SO_SHARED(double, shared, [kWarp]);
  const T* a = static_cast<const T*>(p.self);
  const T* b = static_cast<const T*>(p.target);
  const T* w = static_cast<const T*>(p.weight);
  T* out = static_cast<T*>(p.out);
  double sum = 0;
  int bad = 0;  // bit 0: an input outside [0, 1]; bit 1: a target outside it (NaN included, as torch)
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < p.n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const A x = load(a, i), t = load(b, i);
    A l;
    if (p.op == LossOp::Mse) {
      const A d = x - t;
      l = d * d;
    } else {
      if (!(x >= A(0) && x <= A(1))) bad |= 1;
      if (!(t >= A(0) && t <= A(1))) bad |= 2;
      const A log_x = fmax(log(x), A(-100)), log_1mx = fmax(log1p(-x), A(-100));  // clamped as torch
      l = (w ? load(w, i) : A(1)) * ((t - A(1)) * log_1mx - t * log_x);
    }
    if (p.reduction == 0)
      out[i] = static_cast<T>(l);
    else
      sum += static_cast<double>(l);
  }
  if (bad && p.trap_on_bad) __trap();  // capturing: torch's device-side assert
  if (bad) atomicOr(p.bad, bad);
  if (p.reduction == 0) return;
  sum = block_reduce(sum, SumOp<double>{}, shared);
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

// One block: sum of partials[0, blocks) (and of counts, if given) in order; out[0] = the sum, or
// the mean over `n` (no counts) or over the summed counts. Nothing is written when *bad is set.
template <typename T>
__global__ void __launch_bounds__(kBlock)
    finish_kernel(const double* partials, const double* counts, int blocks, double n, int64_t reduction,
                  T* out, const int32_t* bad) {
  SO_SHARED(double, shared, [kWarp]);
  double s = 0, c = 0;
  for (int k = threadIdx.x; k < blocks; k += blockDim.x) {
    s += partials[k];
    if (counts) c += counts[k];
  }
  s = block_reduce(s, SumOp<double>{}, shared);
  c = block_reduce(c, SumOp<double>{}, shared);
  if (threadIdx.x != 0 || (bad && *bad)) return;
  out[0] = store<T>(reduction == 1 ? s / (counts ? c : n) : s);  // mean of nothing: NaN
}

template <int G, typename A>
__device__ A group_sum(A v) {
  if constexpr (G == 1) {
    return v;
  } else {
    v = warp_reduce(v, SumOp<A>{});
    return __shfl_sync(0xffffffffu, v, 0);
  }
}

template <int G, typename A>
__device__ A group_max(A v) {
  if constexpr (G == 1) {
    return v;
  } else {
#pragma unroll
    for (int offset = kWarp / 2; offset > 0; offset /= 2)
      v = fmax(v, __shfl_xor_sync(0xffffffffu, v, offset));
    return v;
  }
}

// G threads per sample (1, or a warp); partials: losses of each block, then counted weights.
template <typename T, int G>
__global__ void __launch_bounds__(kBlock) cross_entropy_kernel(CrossEntropyLaunch p, double* partials) {
  using A = acc_t<T>;
  SO_SHARED(double, shared, [kWarp]);
  const T* self = static_cast<const T*>(p.self);
  const T* w = static_cast<const T*>(p.weight);
  T* out = static_cast<T*>(p.out);
  const int lane = threadIdx.x % G;
  const int64_t samples = p.N * p.S, C = p.C, S = p.S;
  const A eps = static_cast<A>(p.label_smoothing), inv_c = A(1) / static_cast<A>(C);
  double total = 0, counted = 0;
  // Uniform across the G threads of a sample: the shuffles inside stay converged.
  for (int64_t i = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / G; i < samples;
       i += static_cast<int64_t>(gridDim.x) * (blockDim.x / G)) {
    const int64_t n = i / S, s = i - n * S;
    const T* x = self + n * C * S + s;  // class c at x[c * S]
    int64_t k = -1;
    if (!p.probabilities) {
      k = static_cast<const int64_t*>(p.target)[i];
      if (k == p.ignore_index) {
        if (p.reduction == 0 && lane == 0) out[i] = static_cast<T>(A(0));
        continue;
      }
      if (k < 0 || k >= C) {
        if (p.trap_on_bad) __trap();  // capturing: torch's device-side assert
        if (lane == 0)
          atomicMin(reinterpret_cast<unsigned long long*>(p.first_bad), static_cast<unsigned long long>(i));
        continue;
      }
    }
    A m = -INFINITY;
    for (int64_t c = lane; c < C; c += G) m = fmax(m, load(x, c * S));
    m = group_max<G>(m);
    const A shift = m;  // the max itself, as torch's log_softmax: a +inf logit or all -inf give NaN
    A sum = 0;
    for (int64_t c = lane; c < C; c += G) sum += exp(load(x, c * S) - shift);
    // -log_softmax(x)[c] = (shift - x[c]) + log(sum): shift + log(sum) first would lose the log's
    // digits to a large shift (a masked sample of -1e9)
    const A log_sum = log(group_sum<G>(sum));
    const auto nll = [&](int64_t c) { return (shift - load(x, c * S)) + log_sum; };
    A l, weight_of_target = A(1);
    if (p.probabilities) {
      const T* t = static_cast<const T*>(p.target) + n * C * S + s;
      A acc = 0;
      for (int64_t c = lane; c < C; c += G) {
        const A q = load(t, c * S) * (A(1) - eps) + eps * inv_c;
        acc += (q * nll(c)) *
               (w ? load(w, c) : A(1));  // torch's order: q * 0 for the max class before a large weight
      }
      l = group_sum<G>(acc);
    } else {
      weight_of_target = w ? load(w, k) : A(1);
      l = (A(1) - eps) * weight_of_target * nll(k);
      if (p.label_smoothing > 0) {
        A smooth = 0;
        for (int64_t c = lane; c < C; c += G) smooth += (w ? load(w, c) : A(1)) * nll(c);
        l += eps * inv_c * group_sum<G>(smooth);
      }
    }
    if (lane != 0) continue;
    if (p.reduction == 0) {
      out[i] = static_cast<T>(l);
    } else {
      total += static_cast<double>(l);
      counted += static_cast<double>(weight_of_target);
    }
  }
  if (p.reduction == 0) return;
  total = block_reduce(total, SumOp<double>{}, shared);
  counted = block_reduce(counted, SumOp<double>{}, shared);
  if (threadIdx.x == 0) partials[blockIdx.x] = total, partials[gridDim.x + blockIdx.x] = counted;
}

template <typename T>
void launch_loss(const LossLaunch& p) {
  auto stream = static_cast<cudaStream_t>(p.stream);
  const int blocks = p.reduction == 0 ? grid_for((p.n + kBlock - 1) / kBlock, 8) : blocks_for(p.n);
  auto* partials = static_cast<double*>(p.workspace);
  if (p.n > 0) SO_LAUNCH(blocks, kBlock, 0, stream, loss_kernel<T>)(p, partials);
  if (p.reduction == 0) return;
  if (p.n == 0) {  // no partials were written: the finish kernel reads none
    SO_LAUNCH(1, kBlock, 0, stream, finish_kernel<T>)(partials, nullptr, 0, 0.0, p.reduction,
                                                      static_cast<T*>(p.out), nullptr);
    return;
  }
  SO_LAUNCH(1, kBlock, 0, stream, finish_kernel<T>)(partials, nullptr, blocks, static_cast<double>(p.n),
                                                    p.reduction, static_cast<T*>(p.out), p.bad);
}

template <typename T>
void launch_cross_entropy(const CrossEntropyLaunch& p) {
  auto stream = static_cast<cudaStream_t>(p.stream);
  const int64_t samples = p.N * p.S;
  const bool warp = p.S == 1 && p.C >= kWarp;
  const int64_t threads = warp ? samples * kWarp : samples;
  const int blocks = p.reduction == 0 ? grid_for((threads + kBlock - 1) / kBlock, 8) : blocks_for(threads);
  auto* partials = static_cast<double*>(p.workspace);
  if (samples > 0) {
    if (warp)
      SO_LAUNCH(blocks, kBlock, 0, stream, cross_entropy_kernel<T, kWarp>)(p, partials);
    else
      SO_LAUNCH(blocks, kBlock, 0, stream, cross_entropy_kernel<T, 1>)(p, partials);
  }
  if (p.reduction == 0) return;
  const int written = samples > 0 ? blocks : 0;
  SO_LAUNCH(1, kBlock, 0, stream, finish_kernel<T>)(partials, partials + written, written, 0.0, p.reduction,
                                                    static_cast<T*>(p.out), nullptr);
}

}  // namespace

int64_t loss_workspace_bytes(int64_t reduction) {  // room for the most blocks blocks_for() gives
  return reduction == 0
             ? 0
             : 2 * static_cast<int64_t>(sm_count()) * kPerSm * static_cast<int64_t>(sizeof(double));
}

const char* loss(const LossLaunch& p) {
  if (p.reduction == 0 && p.n == 0) return nullptr;
  return launch_for_dtype<false>(p.dtype, "dtype not supported by the CUDA loss kernels",
                                 [&](auto tag) { launch_loss<decltype(tag)>(p); });
}

const char* cross_entropy(const CrossEntropyLaunch& p) {
  if (p.reduction == 0 && p.N * p.S == 0) return nullptr;
  return launch_for_dtype<false>(p.dtype, "dtype not supported by the CUDA cross_entropy kernel",
                                 [&](auto tag) { launch_cross_entropy<decltype(tag)>(p); });
}

}  // namespace structops::cuda_kernels
