// CPU impl of rms_norm: per row of n elements, the mean of x^2, rstd = 1 / sqrt(mean + eps), then
// x * rstd * w rounded once, in the compute dtype (float for float16/bfloat16, whose rows are
// widened first, as layer_norm's). Two passes over a row, threads split rows.
//
// The squares are summed in the compute dtype's lanes (rows.h's order) and the blocks' totals in
// double. A float row whose squares pass float's range (|x| above 1e19) is summed again in double
// and written in double; a float64 row past double's range (data near its max) is normalised as
// x / 2^k, 2^k near max|x|, which rms_norm does not depend on but for eps (scaled by 4^-k).
#include <structgen/cpu/pointwise.h>
#include <structgen/parallel.h>
#include <ops/normalization/rows.h>
#include <structops/ops/rms_norm.h>

#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include <ops/runtime_names.h>

namespace structops::impl {
namespace {

// Elements of a row summed in sum_t lanes before their totals join a double sum.
constexpr int64_t kSquareBlock = 256;

// The sum of x[i]^2 (x[i] * scale, squared, where `scale` is not 1) over a row.
template <typename sum_t, typename value_t>
double sum_of_squares(const value_t* __restrict x, int64_t n, sum_t scale = 1) {
  double sum = 0;
  for (int64_t b = 0; b < n; b += kSquareBlock) {
    std::array<sum_t, kLanes> s{};
    add_lanes(s, std::min(kSquareBlock, n - b), [&](int64_t i) {
      const sum_t v = static_cast<sum_t>(x[b + i]) * scale;
      return v * v;
    });
    sum += total(s);
  }
  return sum;
}

// A float64 row of finite values whose squares pass double's range: normalised as x / 2^k with
// 2^k near max|x| (exact scalings), its rstd scaled back. False for a row holding inf or NaN.
template <typename scalar_t>
bool rms_norm_row_rescaled(const double* __restrict x, const double* __restrict w, scalar_t* __restrict o,
                           int64_t n, double eps, double& rstd_out) {
  double top = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(x[i])) return false;
    top = std::max(top, std::abs(x[i]));
  }
  const int k = std::ilogb(top);
  const double scale = std::ldexp(1.0, -k);
  const double rstd =
      1.0 / std::sqrt(sum_of_squares<double>(x, n, scale) / static_cast<double>(n) + std::ldexp(eps, -2 * k));
  for (int64_t j = 0; j < n; ++j) o[j] = static_cast<scalar_t>(x[j] * scale * rstd * (w ? w[j] : 1.0));
  rstd_out = std::ldexp(rstd, -k);
  return true;
}

// One row: o = x * rstd * w (w may be null), rstd written to rstd_out. x and w hold acc_t (float16
// and bfloat16 rows widened by the caller) or scalar_t.
template <typename scalar_t, typename value_t>
SO_CPU_CLONES void rms_norm_row(const value_t* __restrict x, const value_t* __restrict w,
                                scalar_t* __restrict o, int64_t n, double eps,
                                at::opmath_type<scalar_t>& rstd_out) {
  using acc_t = at::opmath_type<scalar_t>;
  double squares = sum_of_squares<acc_t>(x, n);
  if constexpr (!std::is_same_v<acc_t, double>) {
    if (std::isinf(squares)) {  // past float's range: in double, and written in double (rstd is tiny)
      squares = sum_of_squares<double>(x, n);
      const double rstd = 1.0 / std::sqrt(squares / static_cast<double>(n) + eps);
      store_narrowed(o, n, [&](int64_t j) {
        return static_cast<acc_t>(static_cast<double>(x[j]) * rstd * (w ? static_cast<double>(w[j]) : 1.0));
      });
      rstd_out = static_cast<acc_t>(rstd);
      return;
    }
  } else if constexpr (std::is_same_v<scalar_t, double>) {
    if (std::isinf(squares) && rms_norm_row_rescaled(x, w, o, n, eps, rstd_out)) return;
  }
  const acc_t rstd = static_cast<acc_t>(1.0 / std::sqrt(squares / static_cast<double>(n) + eps));
  if (w) {
    store_narrowed(o, n,
                   [&](int64_t j) { return static_cast<acc_t>(x[j]) * rstd * static_cast<acc_t>(w[j]); });
  } else {
    store_narrowed(o, n, [&](int64_t j) { return static_cast<acc_t>(x[j]) * rstd; });
  }
  rstd_out = rstd;
}

}  // namespace

void rms_norm_out_cpu(const at::Tensor& input, c10::SymIntArrayRef normalized_shape,
                      const std::optional<at::Tensor>& weight, std::optional<double> eps,
                      at::ScalarType /*compute_dtype*/, const at::Tensor& out, const at::Tensor& rstd) {
  int64_t n = 1;
  for (const auto& s : normalized_shape) n *= s.expect_int();
  const int64_t rows = rstd.numel();
  if (rows == 0) return;
  if (n == 0) {  // the mean of no squares: torch's rstd is NaN
    rstd.fill_(std::numeric_limits<double>::quiet_NaN());
    return;
  }
  const at::Tensor x = input.contiguous();
  const at::Tensor w = weight.has_value() ? weight->contiguous() : at::Tensor();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, out.scalar_type(), "rms_norm", [&] {
    using acc_t = at::opmath_type<scalar_t>;
    const double e = eps.has_value() ? *eps : static_cast<double>(std::numeric_limits<acc_t>::epsilon());
    const scalar_t* in = x.const_data_ptr<scalar_t>();
    const scalar_t* wp = w.defined() ? w.const_data_ptr<scalar_t>() : nullptr;
    scalar_t* o = out.data_ptr<scalar_t>();
    acc_t* rp = rstd.data_ptr<acc_t>();  // the compute dtype, [*batch, 1, ...]: one per row
    structgen::parallel_for(
        0, rows, std::max<int64_t>(1, cpu::kGrainSize / n), [&](int64_t begin, int64_t end) {
          if constexpr (std::is_same_v<scalar_t, acc_t>) {
            for (int64_t r = begin; r < end; ++r) rms_norm_row(in + r * n, wp, o + r * n, n, e, rp[r]);
          } else {  // float16 and bfloat16 rows and weight widened to float once (as layer_norm's)
            std::vector<acc_t> row(n), wf(wp ? n : 0);
            if (wp) cpu::widen(wp, wf.data(), n);
            for (int64_t r = begin; r < end; ++r) {
              cpu::widen(in + r * n, row.data(), n);
              rms_norm_row(row.data(), wp ? wf.data() : nullptr, o + r * n, n, e, rp[r]);
            }
          }
        });
  });
}

}  // namespace structops::impl
