// CPU kernels of scaled_dot_product_attention: tiled (online softmax, after FlashAttention) and
// math (common.h). The meta function (from the rules) has checked shapes and dtypes and allocated
// contiguous outputs.
//
// Tiled: a task is kChunk blocks of kRows query rows of one head; it walks the keys in blocks of
// kKeys, each transposed once for the task's blocks of rows. Per pair of blocks:
// S = (scale Q) K^T (kRows x kKeys), the mask and the causal cut applied, then each row's running
// max m and sum l are updated and its output rescaled, O = O exp(m_old - m_new) + exp(S - m_new) V.
// At the end O / l and logsumexp m + log l. A task holds its query rows, one key block
// transposed, one value block (widened for half/bfloat16), the scores and the outputs: memory
// per thread, independent of the sequence lengths. The products run on a register-tiled
// 6 x (64 bytes) micro-kernel over rows of a packed side by side; the exponentials and their sums
// are one inline vector loop per row; causal tasks stop at the last key their rows see.
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

constexpr int64_t kRows = 64;  // query rows per block
constexpr int64_t kKeys = 64;  // keys per block
constexpr int64_t kChunk = 8;  // blocks of query rows per task, which share each key block's transposition

// 32 bytes of A as one GCC vector: a ymm (AVX2, AVX-512) or two xmm. A 64-byte vector type is
// split through the stack by gcc's AVX2 code, so a tile's row is two of these.
template <typename A>
struct RunOf {
  typedef A type __attribute__((vector_size(32)));
};
template <typename A>
using Run = typename RunOf<A>::type;

// Keeps a run in a register: gcc otherwise folds each of its loads into every FMA that reads it
// (four loads of the same run per step, which left the products bound by loads at half the FMA
// rate). Where the build does not target AVX (a 32-byte run is two registers) it does nothing.
template <typename A>
[[gnu::always_inline]] inline void in_register(Run<A>& v) {
#if defined(__AVX__)
  asm("" : "+x"(v));
#else
  (void)v;
#endif
}

// The most of k gemm_rows packs a's rows for (on the stack); gemm_acc splits a longer k.
constexpr int64_t kPackedDepth = 512;

// c[i0 + MR x n] += a[i0 + MR x k] b[k x n] (row-major with leading dims) for the rows from i0:
// columns in pairs of runs, 2 MR accumulators in registers over all of k, each step two runs of b
// loaded and MR of a's values broadcast, from a's rows packed side by side first (one pointer, no
// strides to keep in registers). k <= kPackedDepth.
template <int64_t MR, typename A>
[[gnu::always_inline]] inline void gemm_rows(int64_t i0, int64_t n, int64_t k, const A* __restrict a,
                                             int64_t lda, const A* __restrict b, int64_t ldb, A* __restrict c,
                                             int64_t ldc) {
  constexpr int64_t W = sizeof(Run<A>) / sizeof(A), NR = 2 * W;
  alignas(64) A packed[MR * kPackedDepth];
  for (int64_t p = 0; p < k; ++p)
    for (int64_t r = 0; r < MR; ++r) packed[p * MR + r] = a[(i0 + r) * lda + p];
  int64_t j = 0;
  for (; j + NR <= n; j += NR) {
    Run<A> lo[MR], hi[MR];
    for (int64_t r = 0; r < MR; ++r) {
      std::memcpy(&lo[r], c + (i0 + r) * ldc + j, sizeof(Run<A>));
      std::memcpy(&hi[r], c + (i0 + r) * ldc + j + W, sizeof(Run<A>));
    }
    const A* ap = packed;
    for (int64_t p = 0; p < k; ++p, ap += MR) {
      Run<A> b0, b1;
      std::memcpy(&b0, b + p * ldb + j, sizeof b0);
      std::memcpy(&b1, b + p * ldb + j + W, sizeof b1);
      in_register<A>(b0);
      in_register<A>(b1);
      for (int64_t r = 0; r < MR; ++r) {
        const A ar = ap[r];
        lo[r] += ar * b0;
        hi[r] += ar * b1;
      }
    }
    for (int64_t r = 0; r < MR; ++r) {
      std::memcpy(c + (i0 + r) * ldc + j, &lo[r], sizeof(Run<A>));
      std::memcpy(c + (i0 + r) * ldc + j + W, &hi[r], sizeof(Run<A>));
    }
  }
  for (int64_t r = i0; r < i0 + MR; ++r)
    for (int64_t p = 0; p < k; ++p)
      for (int64_t x = j; x < n; ++x) c[r * ldc + x] += a[r * lda + p] * b[p * ldb + x];
}

// c[m x n] += a[m x k] b[k x n], row-major with leading dims: rows in sixes (12 accumulators, the
// most AVX2's 16 registers hold beside two runs of b and a broadcast), then fours.
template <typename A>
[[gnu::always_inline]] inline void gemm_acc(int64_t m, int64_t n, int64_t k, const A* __restrict a,
                                            int64_t lda, const A* __restrict b, int64_t ldb, A* __restrict c,
                                            int64_t ldc) {
  for (int64_t p0 = 0; p0 < k; p0 += kPackedDepth) {  // c += a[:, p0:] b[p0:, :] a depth at a time
    const int64_t depth = std::min(kPackedDepth, k - p0);
    const A* ap = a + p0;
    const A* bp = b + p0 * ldb;
    int64_t i = 0;
    for (; i + 6 <= m; i += 6) gemm_rows<6>(i, n, depth, ap, lda, bp, ldb, c, ldc);
    for (; i + 4 <= m; i += 4) gemm_rows<4>(i, n, depth, ap, lda, bp, ldb, c, ldc);
    for (; i < m; ++i)
      for (int64_t p = 0; p < depth; ++p)
        for (int64_t x = 0; x < n; ++x) c[i * ldc + x] += ap[i * lda + p] * bp[p * ldb + x];
  }
}

struct Problem {
  int64_t heads, group, l, s, e, ev;
  attention::MaskView mask;
  bool causal;
  double scale;
};

// The largest of row[0:n], and whether one is NaN (which the max skips), in 32-byte runs.
template <typename A>
[[gnu::always_inline]] inline A max_and_nan(const A* __restrict row, int64_t n, bool& nan) {
  constexpr int64_t W = sizeof(Run<A>) / sizeof(A);
  constexpr A inf = std::numeric_limits<A>::infinity();
  Run<A> top = Run<A>{} - inf;
  decltype(top != top) bad = {};
  int64_t j = 0;
  for (; j + W <= n; j += W) {
    Run<A> v;
    std::memcpy(&v, row + j, sizeof v);
    bad |= v != v;
    top = top < v ? v : top;
  }
  A r = -inf;
  bool any = false;
  for (int64_t l = 0; l < W; ++l) r = std::max(r, top[l]), any |= bad[l] != 0;
  for (; j < n; ++j) any |= row[j] != row[j], r = std::max(r, row[j]);
  nan = any;
  return r;
}

// Per thread: a chunk's scaled queries, outputs and row statistics, one key block transposed,
// one value block (half/bfloat16 widened), one block of scores and of their exponentials.
template <typename A>
struct Scratch {
  std::vector<A> data;
  A *qs, *kt, *vb, *sc, *pb, *o, *m, *sum;
  std::vector<char> failed;
  Scratch(int64_t e, int64_t ev)
      : data(kChunk * kRows * (e + ev + 2) + kKeys * (e + ev) + 2 * kRows * kKeys) {
    qs = data.data();             // [chunk rows, e], scaled
    o = qs + kChunk * kRows * e;  // [chunk rows, ev]
    m = o + kChunk * kRows * ev;  // [chunk rows]
    sum = m + kChunk * kRows;     // [chunk rows]
    kt = sum + kChunk * kRows;    // [e, kKeys]
    vb = kt + e * kKeys;          // [kKeys, ev]
    sc = vb + kKeys * ev;         // [kRows, kKeys]
    pb = sc + kRows * kKeys;      // [kRows, kKeys]: exp(scores - max)
    failed.resize(kChunk * kRows);
  }
};

// Scores of one block of query rows (rows of the chunk from r0) against one key block: the mask
// and the causal cut, then each row's running max and sum and its output rescaled, and the
// exponentials times the values added to the outputs.
template <typename A>
[[gnu::always_inline]] inline void attend_rows(const Problem& p, int64_t h, int64_t q0, int64_t r0,
                                               int64_t rows, int64_t k0, int64_t cols, const A* vblock,
                                               Scratch<A>& w) {
  constexpr A inf = std::numeric_limits<A>::infinity();
  const int64_t e = p.e, ev = p.ev;
  std::fill(w.sc, w.sc + rows * kKeys, A(0));
  gemm_acc<A>(rows, cols, e, w.qs + r0 * e, e, w.kt, kKeys, w.sc, kKeys);
  for (int64_t i = 0; i < rows; ++i) {
    A* row = w.sc + i * kKeys;
    const int64_t r = r0 + i, qi = q0 + r;
    p.mask.apply(row, h, qi, k0, cols);
    if (p.causal)
      for (int64_t j = std::max<int64_t>(0, qi + 1 - k0); j < cols; ++j) row[j] = -inf;
    bool nan;
    const A top = std::max(w.m[r], max_and_nan(row, cols, nan));
    w.failed[r] |= nan;  // a NaN score makes the row NaN
    A* weights = w.pb + i * kKeys;
    if (top == -inf) {  // every key so far masked: nothing enters this row yet
      std::fill(weights, weights + cols, A(0));
      continue;
    }
    A add = 0;  // exp and sum inline, one vector loop (a call per row of 64 cost a quarter of the time)
#pragma omp simd reduction(+ : add)
    for (int64_t j = 0; j < cols; ++j) {
      weights[j] = cpu::softmax::softmax_exp(row[j] - top);
      add += weights[j];
    }
    const A keep = cpu::softmax::softmax_exp(w.m[r] - top);  // 0 for the first keys seen
    if (keep != A(1))
      for (int64_t x = 0; x < ev; ++x) w.o[r * ev + x] *= keep;
    w.sum[r] = w.sum[r] * keep + add;
    w.m[r] = top;
  }
  gemm_acc<A>(rows, ev, cols, w.pb, kKeys, vblock, ev, w.o + r0 * ev, ev);
}

// One task: rows [q0, q0 + n) of head h, at most kChunk blocks of kRows; each key block is
// transposed once for all of them. Causal tasks stop at the last key their rows see, and a block
// of rows skips the key blocks after its last row.
template <typename T, typename A>
SO_CPU_CLONES void attend_chunk(const Problem& p, int64_t h, int64_t q0, const T* __restrict query,
                                const T* __restrict key, const T* __restrict value, T* __restrict out,
                                T* __restrict lse, Scratch<A>& w) {
  const int64_t n = std::min(kChunk * kRows, p.l - q0), e = p.e, ev = p.ev;
  constexpr A inf = std::numeric_limits<A>::infinity();
  const T* q = query + (h * p.l + q0) * e;
  const T* k = key + (h / p.group) * p.s * e;
  const T* v = value + (h / p.group) * p.s * ev;
  const A scale = static_cast<A>(p.scale);
  for (int64_t i = 0; i < n * e; ++i) w.qs[i] = cpu::to_acc<A>(q[i]) * scale;
  std::fill(w.o, w.o + n * ev, A(0));
  std::fill(w.m, w.m + n, -inf);
  std::fill(w.sum, w.sum + n, A(0));
  std::fill(w.failed.begin(), w.failed.begin() + n, 0);
  const int64_t keys = p.causal ? std::min(p.s, q0 + n) : p.s;  // later keys are cut for every row
  for (int64_t k0 = 0; k0 < keys; k0 += kKeys) {
    const int64_t cols = std::min(kKeys, keys - k0);
    for (int64_t j = 0; j < cols; ++j)
      for (int64_t d = 0; d < e; ++d) w.kt[d * kKeys + j] = cpu::to_acc<A>(k[(k0 + j) * e + d]);
    const A* vblock;
    if constexpr (std::is_same_v<T, A>) {
      vblock = v + k0 * ev;
    } else {
      cpu::widen(v + k0 * ev, w.vb, cols * ev);
      vblock = w.vb;
    }
    for (int64_t r0 = 0; r0 < n; r0 += kRows) {
      const int64_t rows = std::min(kRows, n - r0);
      if (p.causal && k0 >= q0 + r0 + rows) continue;  // keys after every row of the block
      attend_rows(p, h, q0, r0, rows, k0, cols, vblock, w);
    }
  }
  constexpr A nan = std::numeric_limits<A>::quiet_NaN();
  for (int64_t i = 0; i < n; ++i) {
    // A row masked whole: 0 (and -inf). A +inf score (an overflowed product) makes the sum NaN
    // (inf - inf), as torch's softmax, but the log-sum-exp +inf.
    const A inv = w.failed[i] ? nan : w.sum[i] == 0 ? A(0) : A(1) / w.sum[i];
    for (int64_t x = 0; x < ev; ++x) out[(h * p.l + q0 + i) * ev + x] = static_cast<T>(w.o[i * ev + x] * inv);
    const A m = w.m[i];
    lse[h * p.l + q0 + i] = static_cast<T>(w.failed[i] ? nan : m == inf ? inf : m + std::log(w.sum[i]));
  }
}

}  // namespace

void scaled_dot_product_attention_out_cpu_tiled(const at::Tensor& query, const at::Tensor& key,
                                                const at::Tensor& value,
                                                const std::optional<at::Tensor>& attn_mask, bool is_causal,
                                                std::optional<double> scale, bool /*enable_gqa*/,
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
  const int64_t chunks = (p.l + kChunk * kRows - 1) / (kChunk * kRows);
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, query.scalar_type(), "scaled_dot_product_attention", [&] {
        using acc_t = at::opmath_type<scalar_t>;
        const scalar_t* qp = q.const_data_ptr<scalar_t>();
        const scalar_t* kp = k.const_data_ptr<scalar_t>();
        const scalar_t* vp = v.const_data_ptr<scalar_t>();
        scalar_t* op = out.data_ptr<scalar_t>();
        scalar_t* lp = logsumexp.data_ptr<scalar_t>();
        structgen::parallel_for(0, p.heads * chunks, 1, [&](int64_t begin, int64_t end) {
          Scratch<acc_t> scratch(p.e, p.ev);
          for (int64_t t = begin; t < end; ++t) {
            attend_chunk<scalar_t, acc_t>(p, t / chunks, t % chunks * kChunk * kRows, qp, kp, vp, op, lp,
                                          scratch);
          }
        });
      });
}

void scaled_dot_product_attention_out_cpu_math(const at::Tensor& query, const at::Tensor& key,
                                               const at::Tensor& value,
                                               const std::optional<at::Tensor>& attn_mask, bool is_causal,
                                               std::optional<double> scale, bool /*enable_gqa*/,
                                               at::ScalarType /*compute_dtype*/, const at::Tensor& out,
                                               const at::Tensor& logsumexp) {
  attention::math(query, key, value, attn_mask, is_causal, scale, out, logsumexp);
}

}  // namespace structops::impl
