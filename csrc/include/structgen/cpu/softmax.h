// The passes of the softmax family over contiguous rows and over blocks of contiguous columns:
// the max, and the sum of exp(x - shift) in a fixed order of 16 lanes. softmax, log_softmax and
// logsumexp (csrc/ops/normalization/cpu.cpp) and cross_entropy_loss's log-sum-exp (csrc/ops/loss/
// cpu.cpp) run these, so every member of the family rounds the same way.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include <ATen/OpMathType.h>

#include <structgen/cpu/float16.h>
#include <structgen/cpu/rows.h>  // SO_CPU_CLONES

namespace structgen::cpu::softmax {

constexpr int kLanes = 16;
constexpr int64_t kColumnBlock = 64;  // columns of one block of [n, inner]: 4 cache lines of float

// exp for the softmax family, as a formula gcc vectorises inline (libmvec's expf call costs ~2x
// here): x = n ln2 + r with |r| <= ln2 / 2 (ln2 split in two so n ln2 is exact), exp(r) by its
// degree-6 Taylor polynomial (relative error < 2.4e-7, about 1 ulp), 2^n put into the exponent
// bits, n read from the rounding sum's low mantissa bits. Nothing is clamped before: x < -87.3
// gives 0 (exp(-inf) = 0) and x > 88.7 inf (logsumexp of +inf shifts by 0) by two one-sided
// selects, and NaN stays NaN through the arithmetic; (88.38, 88.7] also overflows to inf, a range
// softmax (x - max <= 0) never reaches. Clamping x first let gcc fold each clamped range to
// constants and blend them in: 33 instructions per 16 lanes and 2.5x this loop's time.
// Double keeps std::exp.
inline float softmax_exp(float x) {
  const float rounded = x * 1.44269504f + 12582912.0f;  // 1.5 * 2^23: n = round(x log2 e) below
  const float n = rounded - 12582912.0f;
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;
  float p = 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t n_bits = std::bit_cast<int32_t>(rounded) - std::bit_cast<int32_t>(12582912.0f);
  const float scale = std::bit_cast<float>((n_bits + 127) << 23);
  const float y = x < -87.3f ? 0.0f : p * scale;
  return x > 88.7f ? std::numeric_limits<float>::infinity() : y;
}
inline double softmax_exp(double x) { return std::exp(x); }

// kLanes accumulators as one GCC vector, which gcc keeps in registers and compares or adds whole.
// As a std::array the max (a compare and a select per lane) stayed scalar, 0.12 ns per element and
// a third of log_softmax's time (0.03 now), and the sums were spilled between blocks.
template <typename acc_t>
struct LanesOf {
  typedef acc_t type __attribute__((vector_size(kLanes * sizeof(acc_t))));
};
template <typename acc_t>
using Lanes = typename LanesOf<acc_t>::type;

// v = x[0:kLanes] widened to acc_t (a constant-count loop gcc vectorises, then one vector load;
// an out parameter, as a vector return value has no fixed ABI across the portable build's clones).
template <typename acc_t, typename scalar_t>
[[gnu::always_inline]] inline void load_lanes(Lanes<acc_t>& v, const scalar_t* x) {
  alignas(sizeof(Lanes<acc_t>)) acc_t group[kLanes];
  for (int l = 0; l < kLanes; ++l) group[l] = cpu::to_acc<acc_t>(x[l]);
  std::memcpy(&v, group, sizeof v);
}

template <typename acc_t, typename scalar_t>
SO_CPU_CLONES acc_t row_max(const scalar_t* __restrict x, int64_t n) {
  constexpr acc_t inf = std::numeric_limits<acc_t>::infinity();
  Lanes<acc_t> m = Lanes<acc_t>{} - inf;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    Lanes<acc_t> v;
    load_lanes<acc_t>(v, x + i);
    m = m < v ? v : m;
  }
  acc_t r = -inf;
  for (int l = 0; l < kLanes; ++l) r = std::max(r, m[l]);
  for (; i < n; ++i) r = std::max(r, cpu::to_acc<acc_t>(x[i]));
  return r;
}

// s += e[0:n] by whole groups of kLanes; returns the sum of the rest (under kLanes values). The
// exp sums use it: every row in the same order, lanes then rest.
template <typename acc_t>
[[gnu::always_inline]] inline acc_t add_groups(Lanes<acc_t>& s, const acc_t* e, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    Lanes<acc_t> v;
    load_lanes<acc_t>(v, e + i);
    s += v;
  }
  acc_t rest = 0;
  for (; i < n; ++i) rest += e[i];
  return rest;
}

template <typename acc_t>
acc_t total(const Lanes<acc_t>& s) {
  acc_t r = 0;
  for (int l = 0; l < kLanes; ++l) r += s[l];
  return r;
}

// e[i] = exp(x[i] - shift); returns their sum. Two plain loops: fused into the lanes loop, gcc
// vectorised the exp across interleaved lanes with permutes.
template <typename acc_t, typename scalar_t>
SO_CPU_CLONES acc_t exp_and_sum(const scalar_t* __restrict x, acc_t shift, acc_t* __restrict e, int64_t n) {
  for (int64_t i = 0; i < n; ++i) e[i] = softmax_exp(cpu::to_acc<acc_t>(x[i]) - shift);
  Lanes<acc_t> s{};
  const acc_t rest = add_groups(s, e, n);
  return total<acc_t>(s) + rest;
}

// The sum of exp(x[i] - shift), for log_softmax and logsumexp, which never read the exp values:
// exp_and_sum's loops over a 256-element block that stays in L1, with the same lanes and order
// (a block is whole lanes, so only the row's end has a rest).
template <typename acc_t, typename scalar_t>
SO_CPU_CLONES acc_t exp_sum(const scalar_t* __restrict x, acc_t shift, int64_t n) {
  constexpr int64_t kBlock = 256;
  static_assert(kBlock % kLanes == 0);
  alignas(64) std::array<acc_t, kBlock> e;
  Lanes<acc_t> s{};
  acc_t rest = 0;
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t m = std::min(kBlock, n - b);
    for (int64_t i = 0; i < m; ++i) e[i] = softmax_exp(cpu::to_acc<acc_t>(x[b + i]) - shift);
    rest += add_groups(s, e.data(), m);
  }
  return total<acc_t>(s) + rest;
}
// What exp(x - shift) is shifted by. kMax: the max itself, as log_softmax (and cross_entropy_loss,
// which torch computes through it): an infinite max makes the result NaN (inf - inf). kFiniteMax:
// the max, or 0 where it is infinite, as torch's logsumexp: all -inf gives -inf, any +inf gives
// +inf. A NaN gives NaN either way (the max skips it, its exp does not).
enum class Shift { kMax, kFiniteMax };

template <Shift kShift, typename acc_t>
acc_t shift_of(acc_t max) {
  return kShift == Shift::kFiniteMax && std::isinf(max) ? acc_t(0) : max;
}

// The first two passes over `width` contiguous columns of [n, inner], shared by softmax, logsumexp
// and cross_entropy_loss: m[k] = the column's shift (shift_of its max), s[k] = the sum of
// exp(x - m[k]). kKeep (softmax) also stores each exp in e ([n, width]) for the last pass.
template <bool kKeep, Shift kShift, typename scalar_t, typename acc_t>
[[gnu::always_inline]] inline void column_max_exp_sum(const scalar_t* __restrict x, int64_t n, int64_t inner,
                                                      int64_t width, acc_t* __restrict m, acc_t* __restrict s,
                                                      acc_t* __restrict e) {
  for (int64_t k = 0; k < width; ++k) m[k] = -std::numeric_limits<acc_t>::infinity(), s[k] = 0;
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t k = 0; k < width; ++k) m[k] = std::max(m[k], cpu::to_acc<acc_t>(x[j * inner + k]));
  }
  if constexpr (kShift == Shift::kFiniteMax) {
    for (int64_t k = 0; k < width; ++k) m[k] = shift_of<kShift>(m[k]);
  }
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t k = 0; k < width; ++k) {
      const acc_t v = softmax_exp(cpu::to_acc<acc_t>(x[j * inner + k]) - m[k]);
      if constexpr (kKeep) e[j * width + k] = v;
      s[k] += v;
    }
  }
}

// A log-sum-exp in two parts: log(sum(exp(x))) = shift + log_sum. Kept apart where the result is
// used against the x's again (log_softmax: (x - shift) - log_sum; cross_entropy: (shift - x[t]) +
// log_sum): added first, a shift of -1e9 (a masked row) or 1e4 would swallow log_sum's digits.
template <typename acc_t>
struct ShiftedLogSum {
  acc_t shift;
  acc_t log_sum;
  acc_t total() const { return shift + log_sum; }
};

// The log-sum-exp of a contiguous row of n (an empty row: -inf), shifted by kShift.
template <Shift kShift, typename acc_t, typename scalar_t>
ShiftedLogSum<acc_t> row_log_sum_exp(const scalar_t* x, int64_t n) {
  if (n == 0) return {-std::numeric_limits<acc_t>::infinity(), acc_t(0)};
  const acc_t shift = shift_of<kShift>(row_max<acc_t>(x, n));
  return {shift, std::log(exp_sum<acc_t>(x, shift, n))};
}

// The log-sum-exps of `width` <= kColumnBlock contiguous columns of [n, inner] (column k:
// x[j * inner + k]), shifted by kShift: the vector loops run along the columns. `shift` and
// `log_sum` receive the parts, each `width` long.
template <Shift kShift, typename scalar_t, typename out_t>
SO_CPU_CLONES void column_log_sum_exp(const scalar_t* __restrict x, int64_t n, int64_t inner, int64_t width,
                                      out_t* __restrict shift, out_t* __restrict log_sum) {
  using acc_t = at::opmath_type<scalar_t>;
  std::array<acc_t, kColumnBlock> m, s;
  column_max_exp_sum<false, kShift>(x, n, inner, width, m.data(), s.data(), static_cast<acc_t*>(nullptr));
  for (int64_t k = 0; k < width; ++k)
    shift[k] = static_cast<out_t>(m[k]), log_sum[k] = static_cast<out_t>(std::log(s[k]));
}

}  // namespace structgen::cpu::softmax
