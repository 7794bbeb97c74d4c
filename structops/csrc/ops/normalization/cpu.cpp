// CPU impls of softmax, log_softmax, logsumexp (it shares softmax's row passes), layer_norm,
// batch_norm, var and std (Welford on structgen/cpu/reduce.h's loops; their CUDA kernels share
// layer_norm's row statistics). The meta functions (from the rules) have checked shapes and
// dtypes, wrapped `dim` and allocated contiguous outputs; these compute.
//
// softmax views the input as [outer, n, inner] (n along `dim`). With inner == 1 each row is
// contiguous: three passes over it (max; exp(x - max) and its sum; scale), plain loops gcc
// vectorises (exp: softmax_exp in structgen/cpu/softmax.h); half/bfloat16 rows are widened to float first,
// and log_softmax sums its exp values without storing them. With inner > 1 the same passes run over blocks of
// contiguous columns, so the vector loop runs along `inner` instead of striding. Threads split rows (or
// column blocks).
#include <structgen/cpu/pointwise.h>
#include <structgen/cpu/reduce.h>
#include <structgen/cpu/softmax.h>
#include <structops/ops/batch_norm.h>
#include <structops/ops/layer_norm.h>
#include <structops/ops/log_softmax_int.h>
#include <structops/ops/logsumexp.h>
#include <structops/ops/softmax_int.h>
#include <structops/ops/std_correction.h>
#include <structops/ops/var_correction.h>
#include <structgen/parallel.h>
#include <ops/normalization/rows.h>

#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/ops/imag_ops.h>
#include <ATen/ops/real_ops.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>
#include <utility>
#include <type_traits>
#include <vector>

#include <c10/util/SmallVector.h>
#include <ops/runtime_names.h>

namespace structops::impl {
namespace {

using cpu::softmax::column_log_sum_exp;
using cpu::softmax::column_max_exp_sum;
using cpu::softmax::exp_and_sum;
using cpu::softmax::exp_sum;
using cpu::softmax::kColumnBlock;
using cpu::softmax::kLanes;
using cpu::softmax::row_log_sum_exp;
using cpu::softmax::row_max;
using cpu::softmax::Shift;
using cpu::softmax::softmax_exp;

// Whether a row pass reads scalar_t directly (float, double); half and bfloat16 rows are widened to
// float once first: measured, the three passes each widening bfloat16 took 1.35 ms for 2048 rows
// of 2048 against 1.09 ms staged (and widening inside the max pass 1.30 ms).
template <typename scalar_t>
constexpr bool kReadsDirectly = std::is_same_v<scalar_t, at::opmath_type<scalar_t>>;

// The last pass of a row: o = e * c (softmax: c = 1 / sum) or o = (x - shift) - c (log_softmax:
// c = log(sum), subtracted last, as torch: shift + c first loses c's digits to a shift of -1e9
// or 1e4).
template <bool kLog, typename scalar_t, typename value_t, typename acc_t>
SO_CPU_CLONES void store_row(const value_t* __restrict v, acc_t shift, acc_t c, scalar_t* __restrict o,
                             int64_t n) {
  store_narrowed(o, n, [&](int64_t i) {
    return kLog ? (cpu::to_acc<acc_t>(v[i]) - shift) - c : cpu::to_acc<acc_t>(v[i]) * c;
  });
}

// Softmax over contiguous rows: a max pass, an exp-and-sum pass, a store pass. log_softmax keeps
// no exp values (its last pass is (x - max) - log(sum)).
template <bool kLog, typename scalar_t, typename value_t>
void softmax_rows_of(const value_t* x, scalar_t* o, int64_t n, std::vector<at::opmath_type<scalar_t>>& e) {
  using acc_t = at::opmath_type<scalar_t>;
  const acc_t m = row_max<acc_t>(x, n);
  if constexpr (kLog) {
    store_row<true>(x, m, std::log(exp_sum<acc_t>(x, m, n)), o, n);
  } else {
    const acc_t sum = exp_and_sum<acc_t>(x, m, e.data(), n);
    store_row<false>(e.data(), acc_t(0), acc_t(1) / sum, o, n);
  }
}

template <bool kLog, typename scalar_t>
void softmax_rows(const scalar_t* x, scalar_t* o, int64_t rows, int64_t n) {
  using acc_t = at::opmath_type<scalar_t>;
  structgen::parallel_for(0, rows, std::max<int64_t>(1, cpu::kGrainSize / std::max<int64_t>(n, 1)),
                          [&](int64_t begin, int64_t end) {
                            std::vector<acc_t> e(kLog ? 0 : n), staged(kReadsDirectly<scalar_t> ? 0 : n);
                            for (int64_t r = begin; r < end; ++r) {
                              if constexpr (kReadsDirectly<scalar_t>) {
                                softmax_rows_of<kLog>(x + r * n, o + r * n, n, e);
                              } else {
                                cpu::widen(x + r * n, staged.data(), n);
                                softmax_rows_of<kLog, scalar_t>(staged.data(), o + r * n, n, e);
                              }
                            }
                          });
}

// Softmax along the middle dim of [outer, n, inner], inner > 1: blocks of contiguous columns.
// Float16 blocks are first staged widened (`staged`, [n, width], by the vector instruction): the
// passes read float then, where each read widened by bit arithmetic (0.54-0.61x torch at 2048^2).
template <bool kLog, typename scalar_t>
SO_CPU_CLONES void softmax_block(const scalar_t* __restrict x, scalar_t* __restrict o, int64_t n,
                                 int64_t inner, int64_t width, at::opmath_type<scalar_t>* __restrict e,
                                 at::opmath_type<scalar_t>* __restrict staged) {
  using acc_t = at::opmath_type<scalar_t>;
  std::array<acc_t, kColumnBlock> m, s;
  const auto finish = [&](const auto* __restrict v, int64_t stride) {
    column_max_exp_sum<true, Shift::kMax>(v, n, stride, width, m.data(), s.data(), e);
    for (int64_t k = 0; k < width; ++k) s[k] = kLog ? std::log(s[k]) : acc_t(1) / s[k];
    for (int64_t j = 0; j < n; ++j) {
      store_narrowed(o + j * inner, width, [&](int64_t k) {
        return kLog ? (cpu::to_acc<acc_t>(v[j * stride + k]) - m[k]) - s[k] : e[j * width + k] * s[k];
      });
    }
  };
  if constexpr (std::is_same_v<scalar_t, c10::Half>) {
    for (int64_t j = 0; j < n; ++j) cpu::widen(x + j * inner, staged + j * width, width);
    finish(staged, width);
  } else {
    finish(x, inner);
  }
}

template <bool kLog>
void softmax(const at::Tensor& self, int64_t dim, const at::Tensor& out) {
  if (out.numel() == 0) return;
  const at::Tensor x =
      cpu::operand(self, out.scalar_type(), self.device()).contiguous();  // dtype= casts first
  const int64_t n = x.dim() == 0 ? 1 : x.size(dim);
  int64_t inner = 1;
  for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
  const int64_t outer = x.numel() / (n * inner);
  AT_DISPATCH_FLOATING_TYPES_AND2(
      at::kHalf, at::kBFloat16, out.scalar_type(), kLog ? "log_softmax" : "softmax", [&] {
        using acc_t = at::opmath_type<scalar_t>;
        const scalar_t* in = x.const_data_ptr<scalar_t>();
        scalar_t* o = out.data_ptr<scalar_t>();
        if (inner == 1) {
          softmax_rows<kLog>(in, o, outer, n);
          return;
        }
        const int64_t blocks = (inner + kColumnBlock - 1) / kColumnBlock;
        structgen::parallel_for(0, outer * blocks, std::max<int64_t>(1, cpu::kGrainSize / (n * kColumnBlock)),
                                [&](int64_t begin, int64_t end) {
                                  std::vector<acc_t> e(n * kColumnBlock),
                                      staged(std::is_same_v<scalar_t, c10::Half> ? n * kColumnBlock : 0);
                                  for (int64_t t = begin; t < end; ++t) {
                                    const int64_t b = t / blocks, k0 = (t % blocks) * kColumnBlock;
                                    const int64_t offset = b * n * inner + k0;
                                    softmax_block<kLog>(in + offset, o + offset, n, inner,
                                                        std::min(kColumnBlock, inner - k0), e.data(),
                                                        staged.data());
                                  }
                                });
      });
}

// Elements of a row summed in acc_t lanes before their totals join a double sum.
constexpr int64_t kStatBlock = 256;

// The sums over a row of d = x[i] - center and, where `exact_deviations`, of d^2: each block of
// kStatBlock elements in 16 lanes (add_lanes' order), the blocks' totals in double. d's lanes are
// double where `exact_deviations` (the mean's correction: summed in float lanes, a float32 row of
// 1000 lost 5e-6 of a mean 300 times smaller than its values, as much as the first pass), d^2's
// acc_t. Each sum has a loop of its own: with both in one loop (float and double lanes), or lanes
// a lambda wrote to, gcc left them scalar (a float32 row of 1024: 1.1 us, now 0.23 us).
template <typename acc_t, bool exact_deviations, typename value_t>
std::pair<double, double> deviations(const value_t* __restrict x, int64_t n, acc_t center) {
  using dev_t = std::conditional_t<exact_deviations, double, acc_t>;
  const auto value = [&](int64_t i) {
    return static_cast<acc_t>(cpu::to_acc<at::opmath_type<value_t>>(x[i]));
  };
  double dev_total = 0, sq_total = 0;
  for (int64_t b = 0; b < n; b += kStatBlock) {
    const int64_t m = std::min(kStatBlock, n - b);
    std::array<dev_t, kLanes> dev{};
    add_lanes(dev, m,
              [&](int64_t i) { return static_cast<dev_t>(value(b + i)) - static_cast<dev_t>(center); });
    dev_total += total(dev);
    if constexpr (exact_deviations) {
      std::array<acc_t, kLanes> sq{};
      add_lanes(sq, m, [&](int64_t i) {
        const acc_t d = value(b + i) - center;
        return d * d;
      });
      sq_total += total(sq);
    }
  }
  return {dev_total, sq_total};
}

// The biased variance from the deviations from a mean that was off by d_sum / n (the corrected
// two-pass algorithm), never negative; NaN stays NaN, squares past the range give inf.
template <typename acc_t>
acc_t variance_of(acc_t d_sum, acc_t d_squares, int64_t n) {
  if (std::isinf(d_squares)) return d_squares;  // inf - inf would be NaN
  const acc_t m2 = d_squares - d_sum * (d_sum / static_cast<acc_t>(n));
  return m2 < acc_t(0) ? acc_t(0) : m2 / static_cast<acc_t>(n);
}

// The first element of a run if it is finite, else 0: the pivot sums of x - pivot are taken about
// (an infinite pivot would make every difference inf - inf or inf).
template <typename acc_t>
acc_t finite_or_zero(acc_t x) {
  return std::isfinite(x) ? x : acc_t(0);
}

// A row's mean and biased variance (in double, summed as `deviations` does in acc_t): the mean of
// x - x[0], plus x[0] (a row around 1e30, or 1e8 in float32, sums its small differences, not
// values whose sum rounds at 1e30's ulp; a constant row's mean is exact), then the corrected
// two-pass algorithm (the deviations from that mean, summed, correct it, and their squares give
// the variance without E[x^2] - mean^2's cancellation). A row holding inf has mean inf; squares
// past acc_t's range give inf (the caller sums again in double lanes).
template <typename acc_t, typename value_t>
std::pair<double, double> row_moments(const value_t* __restrict x, int64_t n) {
  const acc_t pivot = finite_or_zero(static_cast<acc_t>(cpu::to_acc<at::opmath_type<value_t>>(x[0])));
  const double first =
      static_cast<double>(pivot) + deviations<acc_t, false>(x, n, pivot).first / static_cast<double>(n);
  const acc_t center = static_cast<acc_t>(first);
  const auto [d_sum, d_squares] = deviations<acc_t, true>(x, n, center);
  const double correction = d_sum / static_cast<double>(n);
  const double mean = static_cast<double>(center) + (std::isfinite(correction) ? correction : 0.0);
  return {mean, variance_of<double>(d_sum, d_squares, n)};
}

// A float64 row of finite values whose squares pass double's range (data near its max, where
// torch's rstd is NaN and an unscaled one 0): normalised as x / 2^k with 2^k near max|x| (exact
// scalings: layer_norm does not depend on the scale but for eps, which scales by 4^-k), its mean
// and rstd scaled back. False for a row holding inf or NaN, whose statistics stay as computed.
template <typename param_t>
bool layer_norm_row_rescaled(const double* __restrict x, const param_t* __restrict w,
                             const param_t* __restrict b, double* __restrict o, int64_t n, double eps,
                             double& mean_out, double& rstd_out) {
  double top = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) return false;
    top = std::max(top, std::abs(x[i]));
  }
  const int k = std::ilogb(top);
  std::vector<double> y(n);
  for (int64_t i = 0; i < n; ++i) y[i] = std::ldexp(x[i], -k);
  const auto [mean, var] = row_moments<double>(y.data(), n);
  const double rstd = 1.0 / std::sqrt(var + std::ldexp(eps, -2 * k));
  for (int64_t j = 0; j < n; ++j) {
    double v = (y[j] - mean) * rstd;
    if (w) v *= static_cast<double>(w[j]);
    if (b) v += static_cast<double>(b[j]);
    o[j] = v;
  }
  mean_out = std::ldexp(mean, k);
  rstd_out = std::ldexp(rstd, -k);
  return true;
}

// (x - mean) * rstd * w + b over rows of n elements; mean and rstd per row (biased variance).
template <typename scalar_t, typename value_t, typename param_t>
SO_CPU_CLONES void layer_norm_row(const value_t* __restrict x, const param_t* __restrict w,
                                  const param_t* __restrict b, scalar_t* __restrict o, int64_t n, double eps,
                                  at::opmath_type<scalar_t>& mean_out, at::opmath_type<scalar_t>& rstd_out) {
  using acc_t = at::opmath_type<scalar_t>;
  auto [mean64, var64] = row_moments<acc_t>(x, n);
  if constexpr (!std::is_same_v<acc_t, double>) {
    if (std::isinf(mean64) || std::isinf(var64)) {  // squares past float's range (data near its max)
      std::tie(mean64, var64) = row_moments<double>(x, n);
    }
  } else if constexpr (std::is_same_v<value_t, double> && std::is_same_v<scalar_t, double>) {
    if (!std::isfinite(mean64) || !std::isfinite(var64)) {  // past double's range: scaled, if finite
      if (layer_norm_row_rescaled(x, w, b, o, n, eps, mean_out, rstd_out)) return;
    }
  }
  const acc_t mean = static_cast<acc_t>(mean64);
  const acc_t rstd = static_cast<acc_t>(1.0 / std::sqrt(var64 + eps));  // var64 may be past float's range
  // (x - mean) * rstd, as torch: x * rstd - mean * rstd cancels where the mean is large
  store_narrowed(o, n, [&](int64_t j) {
    acc_t y = (cpu::to_acc<acc_t>(x[j]) - mean) * rstd;
    if (w) y *= cpu::to_acc<acc_t>(w[j]);
    if (b) y += cpu::to_acc<acc_t>(b[j]);
    return y;
  });
  mean_out = mean;
  rstd_out = rstd;
}

// Per-channel sums over [N, C, S] (S contiguous) of d = x - shift[c], and of d^2 where
// kSquares. Columns when S == 1 (a [N, C] input: vectors along C), otherwise rows of S per (n, c)
// with 16 lanes (a loop per sum, add_lanes: both in one loop stayed scalar). No test inside the
// loops: with `if (squares)` in it, gcc left the columns scalar (batch_norm of [256, 1024]: 0.19x
// torch, with the store's loop of one element per channel).
template <bool kSquares, typename scalar_t>
void channel_sums(const scalar_t* __restrict x, int64_t N, int64_t C, int64_t S,
                  const double* __restrict shift, double* __restrict sums, double* __restrict squares) {
  const auto value = [&](int64_t i) {
    return static_cast<double>(cpu::to_acc<at::opmath_type<scalar_t>>(x[i]));
  };
  if (S == 1) {
    // 256 columns at least: a 1 KiB run per row of a float32 input (16 took one cache line per
    // row of a [2048, 2048] input: 0.35x torch, 0.50x now)
    structgen::parallel_for(0, C, std::max<int64_t>(256, cpu::kGrainSize / std::max<int64_t>(N, 1)),
                            [&](int64_t begin, int64_t end) {
                              for (int64_t c = begin; c < end; ++c) {
                                sums[c] = 0;
                                if constexpr (kSquares) squares[c] = 0;
                              }
                              for (int64_t n = 0; n < N; ++n) {
                                for (int64_t c = begin; c < end; ++c) {
                                  const double d = value(n * C + c) - shift[c];
                                  sums[c] += d;
                                  if constexpr (kSquares) squares[c] += d * d;
                                }
                              }
                            });
    return;
  }
  structgen::parallel_for(0, C, std::max<int64_t>(1, cpu::kGrainSize / std::max<int64_t>(N * S, 1)),
                          [&](int64_t begin, int64_t end) {
                            for (int64_t c = begin; c < end; ++c) {
                              std::array<double, kLanes> lanes{}, sq{};
                              const double m = shift[c];
                              for (int64_t n = 0; n < N; ++n) {
                                const int64_t row = (n * C + c) * S;
                                add_lanes(lanes, S, [&](int64_t i) { return value(row + i) - m; });
                                if constexpr (kSquares) {
                                  add_lanes(sq, S, [&](int64_t i) {
                                    const double d = value(row + i) - m;
                                    return d * d;
                                  });
                                }
                              }
                              sums[c] = total(lanes);
                              if constexpr (kSquares) squares[c] = total(sq);
                            }
                          });
}

// Welford's running mean and sum of squared deviations, in double, of the values less `shift`
// (the first value seen): the mean's rounding then scales with the spread, not with the values
// (float64 data around 1e4 lost 270 ulps of its variance unshifted), and a constant run gives 0
// exactly. merge is Chan's formula, after moving b to a's shift.
struct Moments {
  double shift = 0, mean = 0, m2 = 0;
  int64_t n = 0;
};

template <typename scalar_t, bool kStd>
struct Variance {
  double correction;
  Moments identity() const { return {}; }
  Moments step(Moments a, scalar_t x) const {
    const double v = static_cast<double>(x);
    if (a.n == 0) a.shift = v;
    a.n += 1;
    const double y = v - a.shift, d = y - a.mean;
    a.mean += d / static_cast<double>(a.n);
    a.m2 += d * (y - a.mean);
    return a;
  }
  Moments merge(Moments a, Moments b) const {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    const double n = static_cast<double>(a.n + b.n), d = (b.mean + (b.shift - a.shift)) - a.mean;
    return {a.shift, a.mean + d * static_cast<double>(b.n) / n,
            a.m2 + b.m2 + d * d * static_cast<double>(a.n) * static_cast<double>(b.n) / n, a.n + b.n};
  }
  scalar_t finish(Moments a, int64_t n) const {
    // Divide by max(0, N - correction): N <= correction gives inf or NaN, as torch.var; nothing
    // to reduce is NaN whatever the correction (its mean is undefined), as torch and the CUDA impl.
    const double v = n == 0 ? std::numeric_limits<double>::quiet_NaN()
                            : a.m2 / std::max(0.0, static_cast<double>(n) - correction);
    return static_cast<scalar_t>(kStd ? std::sqrt(v) : v);
  }
};

template <bool kStd>
void variance(const at::Tensor& self, at::IntArrayRef reduced_dims,
              const std::optional<at::Scalar>& correction, const at::Tensor& out) {
  if (self.is_complex()) {
    // |z - mean|^2 is the sum of the parts' squared deviations: a complex tensor's variance is
    // its real part's plus its imaginary part's, a real result (torch.var).
    const at::Tensor parts = out.new_empty({2, out.numel()});
    variance<false>(at::_ops::real::call(self), reduced_dims, correction, parts[0].view(out.sizes()));
    variance<false>(at::_ops::imag::call(self), reduced_dims, correction, parts[1].view(out.sizes()));
    const at::Tensor total = parts[0].add(parts[1]).view(out.sizes());
    out.copy_(kStd ? total.sqrt() : total);
    return;
  }
  const double c = correction.has_value() ? correction->toDouble() : 1.0;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, out.scalar_type(), kStd ? "std" : "var", [&] {
    cpu::reduce<scalar_t, scalar_t>(Variance<scalar_t, kStd>{c}, self, reduced_dims, out);
  });
}

}  // namespace

// dtype: torch casts the input to it before the operation (not the result after it).
void softmax_out_cpu(const at::Tensor& self, at::IntArrayRef softmax_dim, std::optional<at::ScalarType> dtype,
                     at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  // a 0-dim self reduces no dim
  softmax<false>(dtype ? self.to(*dtype) : self, softmax_dim.empty() ? 0 : softmax_dim[0], out);
}

void log_softmax_out_cpu(const at::Tensor& self, at::IntArrayRef softmax_dim,
                         std::optional<at::ScalarType> dtype, at::ScalarType /*compute_dtype*/,
                         const at::Tensor& out) {
  softmax<true>(dtype ? self.to(*dtype) : self, softmax_dim.empty() ? 0 : softmax_dim[0], out);
}

void logsumexp_out_cpu(const at::Tensor& self, at::IntArrayRef reduced_dims, bool /*keepdim*/,
                       at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  const int64_t rows = out.numel();
  if (rows == 0) return;
  const at::Tensor input = cpu::operand(self, out.scalar_type(), self.device());  // integers as float32
  if (input.is_complex()) {
    // Reduced dims last and contiguous: one row per output.
    const auto [x, n] = cpu::reduced_rows(input, reduced_dims);
    AT_DISPATCH_COMPLEX_TYPES(out.scalar_type(), "logsumexp", [&] {
      using real_t = typename scalar_t::value_type;
      const scalar_t* in = x.const_data_ptr<scalar_t>();
      scalar_t* o = out.data_ptr<scalar_t>();
      structgen::parallel_for(0, rows, std::max<int64_t>(1, cpu::kGrainSize / std::max<int64_t>(n, 1)),
                              [&](int64_t begin, int64_t end) {
                                for (int64_t r = begin; r < end; ++r) {
                                  // torch's shift: the largest real part (0 when it is infinite); the sum and
                                  // its log are complex.
                                  real_t m = -std::numeric_limits<real_t>::infinity();
                                  for (int64_t i = 0; i < n; ++i) m = std::max(m, in[r * n + i].real());
                                  const real_t shift = std::isinf(m) ? real_t(0) : m;
                                  scalar_t sum(0);
                                  for (int64_t i = 0; i < n; ++i) sum += std::exp(in[r * n + i] - shift);
                                  o[r] = std::log(sum) + shift;
                                }
                              });
    });
    return;
  }
  // Reduced dims that are one run of adjacent dims with elements after them ([outer, n, inner] of the
  // contiguous input, inner > 1): columns in blocks, no transposed copy of the input.
  c10::SmallVector<int64_t, 8> dims(reduced_dims.begin(), reduced_dims.end());
  std::sort(dims.begin(), dims.end());
  const bool adjacent = !dims.empty() && dims.back() - dims.front() + 1 == static_cast<int64_t>(dims.size());
  int64_t inner = 1;
  for (int64_t d = adjacent ? dims.back() + 1 : input.dim(); d < input.dim(); ++d) inner *= input.size(d);
  if (adjacent && inner > 1) {
    const at::Tensor xc = input.contiguous();
    int64_t n = 1;
    for (int64_t d : dims) n *= xc.size(d);
    const int64_t outer = rows / inner;
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, out.scalar_type(), "logsumexp", [&] {
      const scalar_t* in = xc.const_data_ptr<scalar_t>();
      scalar_t* o = out.data_ptr<scalar_t>();
      const int64_t blocks = (inner + kColumnBlock - 1) / kColumnBlock;
      const int64_t grain = std::max<int64_t>(1, cpu::kGrainSize / (std::max<int64_t>(n, 1) * kColumnBlock));
      structgen::parallel_for(0, outer * blocks, grain, [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
          const int64_t b = t / blocks, k0 = (t % blocks) * kColumnBlock;
          const int64_t width = std::min(kColumnBlock, inner - k0);
          std::array<at::opmath_type<scalar_t>, kColumnBlock> shift, log_sum;
          column_log_sum_exp<Shift::kFiniteMax>(in + b * n * inner + k0, n, inner, width, shift.data(),
                                                log_sum.data());
          for (int64_t k = 0; k < width; ++k)
            o[b * inner + k0 + k] = static_cast<scalar_t>(shift[k] + log_sum[k]);
        }
      });
    });
    return;
  }
  // Otherwise the reduced dims last and contiguous: one row per output.
  const auto [x, n] = cpu::reduced_rows(input, reduced_dims);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, out.scalar_type(), "logsumexp", [&] {
    using acc_t = at::opmath_type<scalar_t>;
    const scalar_t* in = x.const_data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    structgen::parallel_for(
        0, rows, std::max<int64_t>(1, cpu::kGrainSize / std::max<int64_t>(n, 1)),
        [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            o[r] = static_cast<scalar_t>(row_log_sum_exp<Shift::kFiniteMax, acc_t>(in + r * n, n).total());
          }
        });
  });
}

void var_out_cpu(const at::Tensor& self, at::IntArrayRef reduced_dims,
                 const std::optional<at::Scalar>& correction, bool /*keepdim*/,
                 at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  variance<false>(self, reduced_dims, correction, out);
}

void std_out_cpu(const at::Tensor& self, at::IntArrayRef reduced_dims,
                 const std::optional<at::Scalar>& correction, bool /*keepdim*/,
                 at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  variance<true>(self, reduced_dims, correction, out);
}

void layer_norm_out_cpu(const at::Tensor& input, c10::SymIntArrayRef normalized_shape,
                        const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias,
                        double eps, at::ScalarType /*compute_dtype*/, const at::Tensor& out,
                        const at::Tensor& mean, const at::Tensor& rstd) {
  int64_t n = 1;
  for (const auto& s : normalized_shape) n *= s.expect_int();
  const int64_t rows = n == 0 ? mean.numel() : input.numel() / n;
  if (rows == 0) return;
  const at::Tensor x = input.contiguous();
  const at::Tensor w = weight.has_value() ? weight->contiguous() : at::Tensor();
  const at::Tensor b = bias.has_value() ? bias->contiguous() : at::Tensor();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, out.scalar_type(), "layer_norm", [&] {
    using acc_t = at::opmath_type<scalar_t>;
    const scalar_t* in = x.const_data_ptr<scalar_t>();
    const scalar_t* wp = w.defined() ? w.const_data_ptr<scalar_t>() : nullptr;
    const scalar_t* bp = b.defined() ? b.const_data_ptr<scalar_t>() : nullptr;
    scalar_t* o = out.data_ptr<scalar_t>();
    scalar_t* mp = mean.data_ptr<scalar_t>();  // [*batch, 1, ...]: contiguous, one per row
    scalar_t* rp = rstd.data_ptr<scalar_t>();
    if (n == 0) {  // nothing to normalise: torch gives NaN statistics
      for (int64_t r = 0; r < rows; ++r) mp[r] = rp[r] = std::numeric_limits<scalar_t>::quiet_NaN();
      return;
    }
    structgen::parallel_for(
        0, rows, std::max<int64_t>(1, cpu::kGrainSize / n), [&](int64_t begin, int64_t end) {
          if constexpr (std::is_same_v<scalar_t, c10::Half> || std::is_same_v<scalar_t, c10::BFloat16>) {
            // float16 and bfloat16 rows, weight and bias widened to float once each (exactly: the
            // same results): widened in each of the three passes, float16 layer_norm ran at 0.42x
            // torch, bfloat16 at 0.29-0.36x
            std::vector<acc_t> row(n), wf(wp ? n : 0), bf(bp ? n : 0);
            if (wp) cpu::widen(wp, wf.data(), n);
            if (bp) cpu::widen(bp, bf.data(), n);
            for (int64_t r = begin; r < end; ++r) {
              acc_t m, s;
              cpu::widen(in + r * n, row.data(), n);
              layer_norm_row(row.data(), wp ? wf.data() : nullptr, bp ? bf.data() : nullptr, o + r * n, n,
                             eps, m, s);
              mp[r] = static_cast<scalar_t>(m);
              rp[r] = static_cast<scalar_t>(s);
            }
          } else {
            for (int64_t r = begin; r < end; ++r) {
              acc_t m, s;
              layer_norm_row(in + r * n, wp, bp, o + r * n, n, eps, m, s);
              mp[r] = static_cast<scalar_t>(m);
              rp[r] = static_cast<scalar_t>(s);
            }
          }
        });
  });
}

void batch_norm_out_cpu(const at::Tensor& input, const std::optional<at::Tensor>& weight,
                        const std::optional<at::Tensor>& bias, const std::optional<at::Tensor>& running_mean,
                        const std::optional<at::Tensor>& running_var, bool training, double momentum,
                        double eps, at::ScalarType /*compute_dtype*/, const at::Tensor& out,
                        const at::Tensor& save_mean, const at::Tensor& save_invstd) {
  const int64_t N = input.size(0), C = input.size(1), S = input.numel() / std::max<int64_t>(N * C, 1);
  const at::Tensor x = input.contiguous();
  // Per channel: y = (x - mean[c]) * scale[c] + b[c], from the batch's or the running statistics
  // (x * scale + (b - mean * scale) cancels where scale is large: a running_var of 0 scales by 316).
  std::vector<double> mean(C), var(C), scale(C);
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, input.scalar_type(), "batch_norm", [&] {
    const scalar_t* in = x.const_data_ptr<scalar_t>();
    auto values = [&](const std::optional<at::Tensor>& t, double fallback) {
      std::vector<double> v(C, fallback);
      if (t.has_value()) {
        const at::Tensor tc = t->contiguous();
        const scalar_t* p = tc.const_data_ptr<scalar_t>();
        for (int64_t c = 0; c < C; ++c) v[c] = static_cast<double>(p[c]);
      }
      return v;
    };
    const int64_t count = N * S;
    if (training) {
      // One pass over x - (the channel's first element): the sums of d and d^2 give the mean and
      // (sum d^2 - (sum d)^2 / n) / n, taken where that difference keeps at least 2^-10 of sum d^2
      // (at most 10 of double's 53 bits cancel: the pivot within 32 standard deviations of the
      // mean). Elsewhere (a first element far out, a masked one; inf, NaN, no elements), as
      // layer_norm_row: deviations from the first pass's mean correct it and give the variance
      // (the corrected two-pass algorithm: a pass more, [32, 64, 56, 56] bfloat16 at 0.52x torch).
      // float64 always: its d is rounded, and the one-pass mean was 4 ulps off torch's.
      std::vector<double> pivot(C), squares(C);
      for (int64_t c = 0; c < C; ++c)
        pivot[c] = count > 0 ? finite_or_zero(static_cast<double>(in[c * S])) : 0.0;
      channel_sums<true>(in, N, C, S, pivot.data(), mean.data(), squares.data());
      const double n = static_cast<double>(count);
      std::vector<bool> again(C);
      for (int64_t c = 0; c < C; ++c) {
        const double d_sum = mean[c], m2 = squares[c] - d_sum * (d_sum / n);
        mean[c] = pivot[c] + d_sum / n;  // count 0: NaN
        again[c] = std::is_same_v<scalar_t, double> || !(std::isfinite(m2) && m2 >= squares[c] * 0x1p-10);
        var[c] = m2 / n;
      }
      if (std::find(again.begin(), again.end(), true) != again.end()) {
        std::vector<double> deviation(C);
        channel_sums<true>(in, N, C, S, mean.data(), deviation.data(), squares.data());
        for (int64_t c = 0; c < C; ++c) {
          if (!again[c]) continue;
          const double correction = deviation[c] / n;
          if (std::isfinite(correction)) mean[c] += correction;  // a channel holding inf: mean inf, as torch
          var[c] = variance_of<double>(deviation[c], squares[c], count);
        }
      }
    } else {
      mean = values(running_mean, 0.0);
      var = values(running_var, 1.0);
    }
    const std::vector<double> w = values(weight, 1.0), b = values(bias, 0.0);
    for (int64_t c = 0; c < C; ++c) {
      // torch's batch statistics take 0 for 1 / sqrt(0 + 0): a constant channel with eps=0 gives
      // bias, not (x - mean) * inf = NaN (its running statistics are used as they are)
      const double invstd = training && var[c] == 0 && eps == 0 ? 0.0 : 1.0 / std::sqrt(var[c] + eps);
      scale[c] = invstd * w[c];
      if (training) {
        save_mean.data_ptr<scalar_t>()[c] = static_cast<scalar_t>(mean[c]);
        save_invstd.data_ptr<scalar_t>()[c] = static_cast<scalar_t>(invstd);
      }
    }
    if (training) {  // running = (1 - momentum) * running + momentum * batch (variance unbiased)
      const double unbias = count > 1 ? static_cast<double>(count) / static_cast<double>(count - 1)
                                      : std::numeric_limits<double>::infinity();
      for (auto [t, batch, factor] :
           {std::tuple{&running_mean, &mean, 1.0}, std::tuple{&running_var, &var, unbias}}) {
        if (!t->has_value()) continue;
        const at::Tensor& r = **t;  // the caller's tensor, updated in place (any strides)
        const std::vector<double> now = values(*t, 0.0);
        at::Tensor dense = r.is_contiguous() ? r : r.contiguous();
        scalar_t* p = dense.data_ptr<scalar_t>();
        for (int64_t c = 0; c < C; ++c) {
          p[c] = static_cast<scalar_t>((1 - momentum) * now[c] + momentum * (*batch)[c] * factor);
        }
        if (!dense.is_same(r)) r.copy_(dense);
      }
    }
    scalar_t* o = out.data_ptr<scalar_t>();  // contiguous: the meta layout
    using acc_t = at::opmath_type<scalar_t>;
    std::vector<acc_t> mu(C), sc(C), sh(C);
    for (int64_t c = 0; c < C; ++c) {
      mu[c] = static_cast<acc_t>(mean[c]);
      sc[c] = static_cast<acc_t>(scale[c]);
      sh[c] = static_cast<acc_t>(b[c]);
    }
    const auto y = [&](int64_t i, int64_t c) { return (cpu::to_acc<acc_t>(in[i]) - mu[c]) * sc[c] + sh[c]; };
    if (S == 1) {  // [N, C]: a row of C channels at a time (one element per channel and sample)
      structgen::parallel_for(0, N, std::max<int64_t>(1, cpu::kGrainSize / std::max<int64_t>(C, 1)),
                              [&](int64_t begin, int64_t end) {
                                for (int64_t r = begin; r < end; ++r) {
                                  store_narrowed(o + r * C, C, [&](int64_t c) { return y(r * C + c, c); });
                                }
                              });
      return;
    }
    structgen::parallel_for(0, N * C, std::max<int64_t>(1, cpu::kGrainSize / S),
                            [&](int64_t begin, int64_t end) {
                              for (int64_t r = begin; r < end; ++r) {
                                const int64_t c = r % C;
                                store_narrowed(o + r * S, S, [&](int64_t i) { return y(r * S + i, c); });
                              }
                            });
  });
}

}  // namespace structops::impl
