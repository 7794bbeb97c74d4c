// Device side of scaled_dot_product_attention (ops/attention/launch.h AttentionLaunch). CUDA and
// our own headers only, no torch.
//
// One warp per query row, walking the keys once with an online softmax: lanes split the head
// dims, a score is their shuffled sum, and the running output (the row's ev values, in the compute
// type) lives in the workspace, rescaled when the row's maximum grows. Memory is linear in the
// sequence (no [l, s] scores); the kernel is simple rather than fast (no shared-memory tiles of
// keys across the rows of a block yet).
#include <cmath>
#include <cstdint>
#include <limits>

#include <structgen/cuda/block_reduce.cuh>
#include <structgen/cuda/launch.cuh>
#include <ops/attention/launch.h>
#include <ops/runtime_names.h>

namespace structops::cuda_kernels {
namespace {

constexpr int kRowsPerBlock = kBlock / kWarp;

template <typename A>
__device__ A masked(const AttentionLaunch& p, int64_t h, int64_t i, int64_t j, A score) {
  if (p.causal && j > i) return -std::numeric_limits<A>::infinity();
  if (p.mask_kind == MaskKind::None) return score;
  const int64_t at = p.mask_offsets[h] + i * p.mask_stride_l + j * p.mask_stride_s;
  if (p.mask_kind == MaskKind::Keep) {
    return static_cast<const bool*>(p.mask)[at] ? score : -std::numeric_limits<A>::infinity();
  }
  return score + static_cast<const A*>(p.mask)[at];
}

template <typename T>
__global__ void __launch_bounds__(kBlock) attention_kernel(AttentionLaunch p) {
  using A = acc_t<T>;
  const int lane = threadIdx.x % kWarp;
  const int64_t rows = p.heads * p.l;
  const int64_t step = static_cast<int64_t>(gridDim.x) * kRowsPerBlock;
  for (int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / kWarp; row < rows;
       row += step) {
    const int64_t h = row / p.l, i = row % p.l;
    const T* q = static_cast<const T*>(p.query) + row * p.e;
    const T* k = static_cast<const T*>(p.key) + (h / p.group) * p.s * p.e;
    const T* v = static_cast<const T*>(p.value) + (h / p.group) * p.s * p.ev;
    A* o = static_cast<A*>(p.workspace) + row * p.ev;
    for (int64_t x = lane; x < p.ev; x += kWarp) o[x] = A(0);
    A top = -std::numeric_limits<A>::infinity(), sum = 0;
    bool failed = false;  // a NaN score makes the row NaN (the max below skips NaN)
    const int64_t keys = p.causal ? (i + 1 < p.s ? i + 1 : p.s) : p.s;
    for (int64_t j = 0; j < keys; ++j) {
      A dot = 0;
      for (int64_t d = lane; d < p.e; d += kWarp)
        dot += static_cast<A>(q[d]) * static_cast<A>(k[j * p.e + d]);
      dot = warp_reduce(dot, SumOp<A>{});
      const A score = masked<A>(p, h, i, j, __shfl_sync(0xffffffffu, dot, 0) * static_cast<A>(p.scale));
      failed |= score != score;
      const A next = score > top ? score : top;
      if (next == -std::numeric_limits<A>::infinity()) continue;  // every key so far masked
      const A keep = exp(top - next), weight = exp(score - next);
      sum = sum * keep + weight;
      top = next;
      for (int64_t x = lane; x < p.ev; x += kWarp)
        o[x] = o[x] * keep + weight * static_cast<A>(v[j * p.ev + x]);
    }
    // A row masked whole: 0 (and -inf). A +inf score (an overflowed product) makes the sum NaN
    // (inf - inf), as torch's softmax, but the log-sum-exp +inf.
    const A nan = std::numeric_limits<A>::quiet_NaN();
    const A inv = failed ? nan : sum == A(0) ? A(0) : A(1) / sum;
    T* out = static_cast<T*>(p.out) + row * p.ev;
    for (int64_t x = lane; x < p.ev; x += kWarp) out[x] = static_cast<T>(o[x] * inv);
    const A lse = failed ? nan : top == std::numeric_limits<A>::infinity() ? top : top + log(sum);
    if (lane == 0) static_cast<T*>(p.logsumexp)[row] = static_cast<T>(lse);
  }
}

}  // namespace

int64_t attention_workspace_bytes(const AttentionLaunch& p) {
  const int64_t bytes = p.dtype == Dtype::Float64 ? 8 : 4;
  return p.heads * p.l * p.ev * bytes;
}

const char* attention(const AttentionLaunch& p) {
  if (p.heads * p.l == 0) return nullptr;
  return launch_for_dtype<false>(p.dtype, "dtype not supported by the CUDA attention kernel", [&](auto tag) {
    using T = decltype(tag);
    const int grid = grid_for((p.heads * p.l + kRowsPerBlock - 1) / kRowsPerBlock, 8);
    SO_LAUNCH(grid, kBlock, 0, static_cast<cudaStream_t>(p.stream), attention_kernel<T>)(p);
  });
}

}  // namespace structops::cuda_kernels
