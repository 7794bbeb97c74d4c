// CPU kernels of scaled_dot_product_attention: tiled (online softmax, after FlashAttention) and
// math (common.h). The meta function (from the rules) has checked shapes and dtypes and allocated
// contiguous outputs.
//
// Tiled: a task is kRows query rows of one head; it walks the keys in blocks of kKeys. Per block:
// S = (scale Q) K^T (kRows x kKeys), the mask and the causal cut applied, then each row's running
// max m and sum l are updated and its output rescaled, O = O exp(m_old - m_new) + exp(S - m_new) V.
// At the end O / l and logsumexp m + log l. A task holds its query block, one key block
// transposed, one value block (widened for half/bfloat16), the scores and the outputs: memory
// per thread, independent of the sequence lengths. The products run on a register-tiled
// 4 x (64 bytes) micro-kernel; causal tasks stop at the last key their rows see.
#include <ops/attention/common.h>
#include <structgen/cpu/float16.h>
#include <structgen/cpu/rows.h>  // SO_CPU_CLONES
#include <structgen/cpu/softmax.h>
#include <structgen/parallel.h>
#include <structops/ops/scaled_dot_product_attention.h>

#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace structops::impl {
namespace {

constexpr int64_t kRows = 64;  // query rows per task
constexpr int64_t kKeys = 64;  // keys per block

// 32 bytes of A as one GCC vector: a ymm (AVX2, AVX-512) or two xmm. A 64-byte vector type is
// split through the stack by gcc's AVX2 code, so a tile's row is two of these.
template <typename A>
struct RunOf {
  typedef A type __attribute__((vector_size(32)));
};
template <typename A>
using Run = typename RunOf<A>::type;

// c[m x n] += a[m x k] b[k x n], row-major with leading dims. Rows of c in fours, columns in
// pairs of runs: those 8 accumulators stay in registers over all of k, each step two runs of b
// loaded and four of a's values broadcast.
template <typename A>
[[gnu::always_inline]] inline void gemm_acc(int64_t m, int64_t n, int64_t k, const A* __restrict a, int64_t lda,
                                            const A* __restrict b, int64_t ldb, A* __restrict c, int64_t ldc) {
  constexpr int64_t MR = 4, W = sizeof(Run<A>) / sizeof(A), NR = 2 * W;
  int64_t i = 0;
  for (; i + MR <= m; i += MR) {
    int64_t j = 0;
    for (; j + NR <= n; j += NR) {
      Run<A> lo[MR], hi[MR];
      for (int64_t r = 0; r < MR; ++r) {
        std::memcpy(&lo[r], c + (i + r) * ldc + j, sizeof(Run<A>));
        std::memcpy(&hi[r], c + (i + r) * ldc + j + W, sizeof(Run<A>));
      }
      for (int64_t p = 0; p < k; ++p) {
        Run<A> b0, b1;
        std::memcpy(&b0, b + p * ldb + j, sizeof b0);
        std::memcpy(&b1, b + p * ldb + j + W, sizeof b1);
        for (int64_t r = 0; r < MR; ++r) {
          const A ar = a[(i + r) * lda + p];
          lo[r] += ar * b0;
          hi[r] += ar * b1;
        }
      }
      for (int64_t r = 0; r < MR; ++r) {
        std::memcpy(c + (i + r) * ldc + j, &lo[r], sizeof(Run<A>));
        std::memcpy(c + (i + r) * ldc + j + W, &hi[r], sizeof(Run<A>));
      }
    }
    if (j < n) {
      for (int64_t r = i; r < i + MR; ++r)
        for (int64_t p = 0; p < k; ++p)
          for (int64_t x = j; x < n; ++x) c[r * ldc + x] += a[r * lda + p] * b[p * ldb + x];
    }
  }
  for (; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      for (int64_t x = 0; x < n; ++x) c[i * ldc + x] += a[i * lda + p] * b[p * ldb + x];
}

struct Problem {
  int64_t heads, group, l, s, e, ev;
  attention::MaskView mask;
  bool causal;
  double scale;
};

// One task: rows [q0, q0 + rows) of head h.
template <typename T, typename A>
SO_CPU_CLONES void attend_block(const Problem& p, int64_t h, int64_t q0, const T* __restrict query,
                                const T* __restrict key, const T* __restrict value, T* __restrict out,
                                T* __restrict lse, std::vector<A>& buffer) {
  const int64_t rows = std::min(kRows, p.l - q0), e = p.e, ev = p.ev;
  A* qs = buffer.data();           // [rows, e], scaled
  A* kt = qs + kRows * e;          // [e, kKeys]
  A* vb = kt + e * kKeys;          // [kKeys, ev] (half/bfloat16 only)
  A* sc = vb + kKeys * ev;         // [rows, kKeys]
  A* pb = sc + kRows * kKeys;      // [rows, kKeys]: exp(scores - max)
  A* o = pb + kRows * kKeys;       // [rows, ev]
  A* m = o + kRows * ev;           // [rows]
  A* sum = m + kRows;              // [rows]
  constexpr A inf = std::numeric_limits<A>::infinity();
  const T* q = query + (h * p.l + q0) * e;
  const T* k = key + (h / p.group) * p.s * e;
  const T* v = value + (h / p.group) * p.s * ev;
  const A scale = static_cast<A>(p.scale);
  for (int64_t i = 0; i < rows * e; ++i) qs[i] = cpu::to_acc<A>(q[i]) * scale;
  std::fill(o, o + rows * ev, A(0));
  std::fill(m, m + rows, -inf);
  std::fill(sum, sum + rows, A(0));
  bool failed[kRows] = {};
  const int64_t keys = p.causal ? std::min(p.s, q0 + rows) : p.s;  // later keys are cut for every row
  for (int64_t k0 = 0; k0 < keys; k0 += kKeys) {
    const int64_t cols = std::min(kKeys, keys - k0);
    for (int64_t j = 0; j < cols; ++j)
      for (int64_t d = 0; d < e; ++d) kt[d * kKeys + j] = cpu::to_acc<A>(k[(k0 + j) * e + d]);
    std::fill(sc, sc + rows * kKeys, A(0));
    gemm_acc<A>(rows, cols, e, qs, e, kt, kKeys, sc, kKeys);
    for (int64_t i = 0; i < rows; ++i) {
      A* row = sc + i * kKeys;
      const int64_t qi = q0 + i;
      p.mask.apply(row, h, qi, k0, cols);
      if (p.causal)
        for (int64_t j = std::max<int64_t>(0, qi + 1 - k0); j < cols; ++j) row[j] = -inf;
      bool nan = false;
      for (int64_t j = 0; j < cols; ++j) nan |= row[j] != row[j];
      failed[i] |= nan;  // a NaN score makes the row NaN (the max below skips NaN)
      const A top = std::max(m[i], cpu::softmax::row_max<A>(row, cols));
      A* weights = pb + i * kKeys;
      if (top == -inf) {  // every key so far masked: nothing enters this row yet
        std::fill(weights, weights + cols, A(0));
        continue;
      }
      const A add = cpu::softmax::exp_and_sum<A>(row, top, weights, cols);  // vector exp and lanes
      const A keep = cpu::softmax::softmax_exp(m[i] - top);  // 0 for the first keys seen
      if (keep != A(1))
        for (int64_t x = 0; x < ev; ++x) o[i * ev + x] *= keep;
      sum[i] = sum[i] * keep + add;
      m[i] = top;
    }
    const A* vblock;
    if constexpr (std::is_same_v<T, A>) {
      vblock = v + k0 * ev;
    } else {
      cpu::widen(v + k0 * ev, vb, cols * ev);
      vblock = vb;
    }
    gemm_acc<A>(rows, ev, cols, pb, kKeys, vblock, ev, o, ev);
  }
  constexpr A nan = std::numeric_limits<A>::quiet_NaN();
  for (int64_t i = 0; i < rows; ++i) {
    // A row masked whole: 0 (and -inf). A +inf score (an overflowed product) makes the sum NaN
    // (inf - inf), as torch's softmax, but the log-sum-exp +inf.
    const A inv = failed[i] ? nan : sum[i] == 0 ? A(0) : A(1) / sum[i];
    for (int64_t x = 0; x < ev; ++x) out[(h * p.l + q0 + i) * ev + x] = static_cast<T>(o[i * ev + x] * inv);
    lse[h * p.l + q0 + i] = static_cast<T>(failed[i] ? nan : m[i] == inf ? inf : m[i] + std::log(sum[i]));
  }
}

}  // namespace

void scaled_dot_product_attention_out_cpu_tiled(const at::Tensor& query, const at::Tensor& key,
                                                 const at::Tensor& value, const std::optional<at::Tensor>& attn_mask,
                                                 bool is_causal, std::optional<double> scale, bool /*enable_gqa*/,
                                                 at::ScalarType /*compute_dtype*/, const at::Tensor& out,
                                                 const at::Tensor& logsumexp) {
  if (out.numel() == 0 && logsumexp.numel() == 0) return;
  const at::ScalarType ct = at::toOpMathType(query.scalar_type());
  const attention::Mask mask(attn_mask, logsumexp, key.size(-2), ct);
  Problem p{logsumexp.numel() / std::max<int64_t>(1, query.size(-2)),
            attention::group_of(query, key),
            query.size(-2),
            key.size(-2),
            query.size(-1),
            value.size(-1),
            mask.view(),
            is_causal,
            attention::scale_of(query, scale)};
  if (p.l == 0) return;
  const at::Tensor q = query.contiguous(), k = key.contiguous(), v = value.contiguous();
  const int64_t blocks = (p.l + kRows - 1) / kRows;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, query.scalar_type(), "scaled_dot_product_attention", [&] {
    using acc_t = at::opmath_type<scalar_t>;
    const scalar_t* qp = q.const_data_ptr<scalar_t>();
    const scalar_t* kp = k.const_data_ptr<scalar_t>();
    const scalar_t* vp = v.const_data_ptr<scalar_t>();
    scalar_t* op = out.data_ptr<scalar_t>();
    scalar_t* lp = logsumexp.data_ptr<scalar_t>();
    const size_t floats = kRows * p.e + p.e * kKeys + kKeys * p.ev + 2 * kRows * kKeys + kRows * p.ev + 2 * kRows;
    structgen::parallel_for(0, p.heads * blocks, 1, [&](int64_t begin, int64_t end) {
      std::vector<acc_t> buffer(floats);
      for (int64_t t = begin; t < end; ++t) {
        attend_block<scalar_t, acc_t>(p, t / blocks, t % blocks * kRows, qp, kp, vp, op, lp, buffer);
      }
    });
  });
}

void scaled_dot_product_attention_out_cpu_math(const at::Tensor& query, const at::Tensor& key,
                                               const at::Tensor& value, const std::optional<at::Tensor>& attn_mask,
                                               bool is_causal, std::optional<double> scale, bool /*enable_gqa*/,
                                               at::ScalarType /*compute_dtype*/, const at::Tensor& out,
                                               const at::Tensor& logsumexp) {
  attention::math(query, key, value, attn_mask, is_causal, scale, out, logsumexp);
}

}  // namespace structops::impl
