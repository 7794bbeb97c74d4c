// CPU impls of the reductions over a dim list (sum, mean, prod, amax, amin, all, any, var, std,
// norm) on the loops of structops/cpu_reduce.h, plus argmax/argmin (which need the element's
// index) and the cumsum scan. The meta function has already applied keepdim and dtype to out, and
// validated `dim` into `reduced_dims` (None and [] already expanded as the op defines).
#include <structops/cpu_reduce.h>
#include <structops/ops/all_dims.h>
#include <structops/ops/amax.h>
#include <structops/ops/amin.h>
#include <structops/ops/any_dims.h>
#include <structops/ops/argmax.h>
#include <structops/ops/argmin.h>
#include <structops/ops/cumsum.h>
#include <structops/ops/mean_dim.h>
#include <structops/ops/norm_ScalarOpt_dim.h>
#include <structops/ops/prod_dim.h>
#include <structops/ops/std_correction.h>
#include <structops/ops/sum_dim_IntList.h>
#include <structops/ops/var_correction.h>

#include <ATen/AccumulateType.h>
#include <ATen/Dispatch.h>
#include <ATen/Dispatch_v2.h>
#include <ATen/OpMathType.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <type_traits>

namespace structops::impl {
namespace {

// Floating sums accumulate in opmath (float for float, half and bfloat16; double for double) over
// the cascade of cpu::reduce's rows, as torch's sums do; integers in int64. (at::acc_type, double
// for float, halved the vector width and ran at half torch's speed.)
template <typename scalar_t>
using sum_acc_t = std::conditional_t<std::is_same_v<scalar_t, bool> || std::is_integral_v<scalar_t>, int64_t,
                                     at::opmath_type<scalar_t>>;

template <typename scalar_t, bool kMean>
struct Sum {
  using acc_t = sum_acc_t<scalar_t>;
  acc_t identity() const { return acc_t(0); }
  acc_t step(acc_t a, scalar_t x) const { return a + static_cast<acc_t>(x); }
  acc_t merge(acc_t a, acc_t b) const { return a + b; }
  scalar_t finish(acc_t a, int64_t n) const {
    if constexpr (kMean) return static_cast<scalar_t>(a / static_cast<acc_t>(n));  // 0/0: NaN, as torch
    return static_cast<scalar_t>(a);
  }
};

// NaN-propagating max/min (torch.amax/amin): a NaN anywhere makes the result NaN.
template <typename scalar_t, bool kMax>
struct Extremum {
  using acc_t = at::opmath_type<scalar_t>;  // float for half/bfloat16, the type itself otherwise
  acc_t identity() const {
    if constexpr (std::is_same_v<acc_t, bool>) return !kMax;
    else if constexpr (std::numeric_limits<acc_t>::has_infinity)
      return kMax ? -std::numeric_limits<acc_t>::infinity() : std::numeric_limits<acc_t>::infinity();
    else return kMax ? std::numeric_limits<acc_t>::lowest() : std::numeric_limits<acc_t>::max();
  }
  acc_t step(acc_t a, scalar_t x) const { return merge(a, static_cast<acc_t>(x)); }
  acc_t merge(acc_t a, acc_t b) const {
    // One select without short-circuit branches (NaN wins: once a is NaN no comparison replaces
    // it), so gcc vectorises the lanes.
    const bool take = (kMax ? b > a : b < a) | (b != b);
    return take ? b : a;
  }
  scalar_t finish(acc_t a, int64_t) const { return static_cast<scalar_t>(a); }
};

template <typename scalar_t>
struct Prod {
  using acc_t = sum_acc_t<scalar_t>;
  acc_t identity() const { return acc_t(1); }
  acc_t step(acc_t a, scalar_t x) const { return a * static_cast<acc_t>(x); }
  acc_t merge(acc_t a, acc_t b) const { return a * b; }
  scalar_t finish(acc_t a, int64_t) const { return static_cast<scalar_t>(a); }
};

// all (kAll) / any: out is bool, or uint8 for uint8 input (as torch).
template <typename scalar_t, typename out_t, bool kAll>
struct Truth {
  bool identity() const { return kAll; }
  bool step(bool a, scalar_t x) const { return kAll ? (a && x != scalar_t(0)) : (a || x != scalar_t(0)); }
  bool merge(bool a, bool b) const { return kAll ? (a && b) : (a || b); }
  out_t finish(bool a, int64_t) const { return static_cast<out_t>(a); }
};

// Welford's running mean and sum of squared deviations, in double; merge is Chan's formula.
struct Moments {
  double mean = 0, m2 = 0;
  int64_t n = 0;
};

template <typename scalar_t, bool kStd>
struct Variance {
  double correction;
  Moments identity() const { return {}; }
  Moments step(Moments a, scalar_t x) const {
    const double v = static_cast<double>(x);
    a.n += 1;
    const double d = v - a.mean;
    a.mean += d / static_cast<double>(a.n);
    a.m2 += d * (v - a.mean);
    return a;
  }
  Moments merge(Moments a, Moments b) const {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    const double n = static_cast<double>(a.n + b.n), d = b.mean - a.mean;
    return {a.mean + d * static_cast<double>(b.n) / n,
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

// |x|^p summed, p-th root at the end; the common p have their own loops (no pow per element).
enum class NormKind { kOne, kTwo, kInf, kNegInf, kZero, kGeneral };

template <typename scalar_t, NormKind K>
struct Norm {
  using acc_t = at::opmath_type<scalar_t>;  // accurate over cpu::reduce's cascade, like sums
  double p;
  acc_t identity() const {
    if constexpr (K == NormKind::kNegInf) return std::numeric_limits<acc_t>::infinity();
    return acc_t(0);
  }
  acc_t step(acc_t a, scalar_t x) const {
    const acc_t v = std::abs(static_cast<acc_t>(x));
    if constexpr (K == NormKind::kOne) return a + v;
    else if constexpr (K == NormKind::kTwo) return a + v * v;
    else if constexpr (K == NormKind::kZero) return a + (v != acc_t(0) ? acc_t(1) : acc_t(0));
    else if constexpr (K == NormKind::kGeneral) return a + std::pow(v, static_cast<acc_t>(p));
    else return merge(a, v);
  }
  acc_t merge(acc_t a, acc_t b) const {
    if constexpr (K == NormKind::kInf || K == NormKind::kNegInf) {
      if (b != b) return b;  // NaN propagates
      return K == NormKind::kInf ? (b > a ? b : a) : (b < a ? b : a);
    }
    return a + b;
  }
  scalar_t finish(acc_t a, int64_t) const {
    if constexpr (K == NormKind::kTwo) return static_cast<scalar_t>(std::sqrt(a));
    else if constexpr (K == NormKind::kGeneral) return static_cast<scalar_t>(std::pow(a, acc_t(1) / static_cast<acc_t>(p)));
    return static_cast<scalar_t>(a);
  }
};

// Index of the first maximum (kMax) or minimum over the last `n` elements of each row; a NaN
// counts as the extreme, and the first NaN wins (torch.argmax/argmin).
template <typename scalar_t, bool kMax>
int64_t arg_extremum_row(const scalar_t* x, int64_t n) {
  using acc_t = at::opmath_type<scalar_t>;
  acc_t best = static_cast<acc_t>(x[0]);
  int64_t at = 0;
  if (best != best) return 0;
  for (int64_t i = 1; i < n; ++i) {
    const acc_t v = static_cast<acc_t>(x[i]);
    if (v != v) return i;
    if (kMax ? v > best : v < best) best = v, at = i;
  }
  return at;
}

template <bool kMax>
void arg_extremum(const at::Tensor& self, at::IntArrayRef reduced_dims, const at::Tensor& out) {
  const auto [x, n] = cpu::reduced_rows(self, reduced_dims);
  const int64_t rows = out.numel();
  if (rows == 0) return;
  int64_t* o = out.data_ptr<int64_t>();
  AT_DISPATCH_ALL_TYPES_AND3(at::kHalf, at::kBFloat16, at::kBool, x.scalar_type(), kMax ? "argmax" : "argmin", [&] {
    const scalar_t* in = x.const_data_ptr<scalar_t>();
    structops::parallel_for(0, rows, std::max<int64_t>(1, cpu::kGrainSize / std::max<int64_t>(n, 1)),
                            [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) o[r] = arg_extremum_row<scalar_t, kMax>(in + r * n, n);
    });
  });
}

template <bool kAll>
void truth(const at::Tensor& self, at::IntArrayRef reduced_dims, const at::Tensor& out) {
  AT_DISPATCH_ALL_TYPES_AND3(at::kHalf, at::kBFloat16, at::kBool, self.scalar_type(), kAll ? "all" : "any", [&] {
    if (out.scalar_type() == at::kByte) {
      cpu::reduce<scalar_t, uint8_t>(Truth<scalar_t, uint8_t, kAll>{}, self, reduced_dims, out);
    } else {
      cpu::reduce<scalar_t, bool>(Truth<scalar_t, bool, kAll>{}, self, reduced_dims, out);
    }
  });
}

template <bool kStd>
void variance(const at::Tensor& self, at::IntArrayRef reduced_dims, const std::optional<at::Scalar>& correction,
              const at::Tensor& out) {
  const double c = correction.has_value() ? correction->toDouble() : 1.0;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, out.scalar_type(), kStd ? "std" : "var", [&] {
    cpu::reduce<scalar_t, scalar_t>(Variance<scalar_t, kStd>{c}, self, reduced_dims, out);
  });
}

template <bool kMax>
void extremum(const at::Tensor& self, at::IntArrayRef reduced_dims, const at::Tensor& out) {
  AT_DISPATCH_ALL_TYPES_AND3(at::kHalf, at::kBFloat16, at::kBool, out.scalar_type(), kMax ? "amax" : "amin", [&] {
    cpu::reduce<scalar_t, scalar_t>(Extremum<scalar_t, kMax>{}, self, reduced_dims, out);
  });
}

// A scan cannot cascade: its running sums accumulate in double for floats and complex<double> for
// complex (at::acc_type, as torch's cumsum), int64 for integers.
// Unsigned types (bool, uint8..uint64) run in uint64_t, so their sums wrap as the type's do.
template <typename scalar_t, bool = std::is_integral_v<scalar_t>>
struct ScanAcc {
  using type = at::acc_type<scalar_t, false>;
};
template <typename scalar_t>
struct ScanAcc<scalar_t, true> {
  using type = std::conditional_t<std::is_unsigned_v<scalar_t>, uint64_t, int64_t>;
};
template <typename scalar_t>
using scan_acc_t = typename ScanAcc<scalar_t>::type;

// out = running sum of x along the middle dim of [outer, n, inner] (both contiguous).
template <typename scalar_t>
SO_CPU_CLONES void scan_block(const scalar_t* __restrict x, scalar_t* __restrict o, int64_t n, int64_t inner,
                              int64_t width, scan_acc_t<scalar_t>* __restrict acc) {
  for (int64_t k = 0; k < width; ++k) acc[k] = scan_acc_t<scalar_t>(0);
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t k = 0; k < width; ++k) {
      acc[k] += static_cast<scan_acc_t<scalar_t>>(x[j * inner + k]);
      o[j * inner + k] = static_cast<scalar_t>(acc[k]);
    }
  }
}

// Scans along contiguous rows (inner == 1): kRowGroup rows side by side, so their running sums
// are independent chains (one row alone waits on each add's latency).
constexpr int64_t kRowGroup = 8;

template <typename scalar_t>
SO_CPU_CLONES void scan_rows(const scalar_t* __restrict x, scalar_t* __restrict o, int64_t n, int64_t rows) {
  std::array<scan_acc_t<scalar_t>, kRowGroup> acc{};
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t r = 0; r < rows; ++r) {
      acc[r] += static_cast<scan_acc_t<scalar_t>>(x[r * n + j]);
      o[r * n + j] = static_cast<scalar_t>(acc[r]);
    }
  }
}

}  // namespace

// sum's two CPU kernel variants (the manifest's `kernels:`; structops::autotune times them per
// shape bucket): reduce along contiguous rows, or accumulate contiguous columns of outputs.
static void sum_with_layout(const at::Tensor& self, at::IntArrayRef reduced_dims, const at::Tensor& out,
                     cpu::ReduceLayout layout) {
  const at::Tensor x = cpu::operand(self, out.scalar_type(), self.device());  // sum(int) -> int64, dtype=
  AT_DISPATCH_ALL_TYPES_AND_COMPLEX_AND3(at::kHalf, at::kBFloat16, at::kBool, out.scalar_type(), "sum", [&] {
    cpu::reduce<scalar_t, scalar_t>(Sum<scalar_t, false>{}, x, reduced_dims, out, layout);
  });
}

void sum_out_cpu_rows(const at::Tensor& self, at::IntArrayRef reduced_dims, bool /*keepdim*/,
                      std::optional<at::ScalarType> /*dtype*/, at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  sum_with_layout(self, reduced_dims, out, cpu::ReduceLayout::rows);
}

void sum_out_cpu_columns(const at::Tensor& self, at::IntArrayRef reduced_dims, bool /*keepdim*/,
                         std::optional<at::ScalarType> /*dtype*/, at::ScalarType /*compute_dtype*/,
                         const at::Tensor& out) {
  sum_with_layout(self, reduced_dims, out, cpu::ReduceLayout::columns);
}

void mean_out_cpu(const at::Tensor& self, at::IntArrayRef reduced_dims, bool /*keepdim*/,
                  std::optional<at::ScalarType> /*dtype*/, at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  const at::Tensor x = cpu::operand(self, out.scalar_type(), self.device());  // sum(int) -> int64, dtype=
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES_AND2(at::kHalf, at::kBFloat16, out.scalar_type(), "mean", [&] {
    cpu::reduce<scalar_t, scalar_t>(Sum<scalar_t, true>{}, x, reduced_dims, out);
  });
}

void amax_out_cpu(const at::Tensor& self, at::IntArrayRef reduced_dims, bool /*keepdim*/,
                  at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  extremum<true>(self, reduced_dims, out);
}

void amin_out_cpu(const at::Tensor& self, at::IntArrayRef reduced_dims, bool /*keepdim*/,
                  at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  extremum<false>(self, reduced_dims, out);
}

void prod_out_cpu(const at::Tensor& self, at::IntArrayRef reduced_dims, bool /*keepdim*/,
                  std::optional<at::ScalarType> /*dtype*/, at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  const at::Tensor x = cpu::operand(self, out.scalar_type(), self.device());  // prod(int) -> int64, dtype=
  AT_DISPATCH_ALL_TYPES_AND3(at::kHalf, at::kBFloat16, at::kBool, out.scalar_type(), "prod", [&] {
    cpu::reduce<scalar_t, scalar_t>(Prod<scalar_t>{}, x, reduced_dims, out);
  });
}

void all_out_cpu(const at::Tensor& self, at::IntArrayRef reduced_dims, bool /*keepdim*/,
                 at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  truth<true>(self, reduced_dims, out);
}

void any_out_cpu(const at::Tensor& self, at::IntArrayRef reduced_dims, bool /*keepdim*/,
                 at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  truth<false>(self, reduced_dims, out);
}

void argmax_out_cpu(const at::Tensor& self, at::IntArrayRef reduced_dims, bool /*keepdim*/,
                    at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  arg_extremum<true>(self, reduced_dims, out);
}

void argmin_out_cpu(const at::Tensor& self, at::IntArrayRef reduced_dims, bool /*keepdim*/,
                    at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  arg_extremum<false>(self, reduced_dims, out);
}

void var_out_cpu(const at::Tensor& self, at::IntArrayRef reduced_dims, const std::optional<at::Scalar>& correction,
                 bool /*keepdim*/, at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  variance<false>(self, reduced_dims, correction, out);
}

void std_out_cpu(const at::Tensor& self, at::IntArrayRef reduced_dims, const std::optional<at::Scalar>& correction,
                 bool /*keepdim*/, at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  variance<true>(self, reduced_dims, correction, out);
}

void norm_out_cpu(const at::Tensor& self, const std::optional<at::Scalar>& p, at::IntArrayRef reduced_dims,
                  bool /*keepdim*/, at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  const double pv = p.has_value() ? p->toDouble() : 2.0;
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, out.scalar_type(), "norm", [&] {
    if (pv == 1) cpu::reduce<scalar_t, scalar_t>(Norm<scalar_t, NormKind::kOne>{pv}, self, reduced_dims, out);
    else if (pv == 2) cpu::reduce<scalar_t, scalar_t>(Norm<scalar_t, NormKind::kTwo>{pv}, self, reduced_dims, out);
    else if (pv == 0) cpu::reduce<scalar_t, scalar_t>(Norm<scalar_t, NormKind::kZero>{pv}, self, reduced_dims, out);
    else if (std::isinf(pv) && pv > 0) cpu::reduce<scalar_t, scalar_t>(Norm<scalar_t, NormKind::kInf>{pv}, self, reduced_dims, out);
    else if (std::isinf(pv)) cpu::reduce<scalar_t, scalar_t>(Norm<scalar_t, NormKind::kNegInf>{pv}, self, reduced_dims, out);
    else cpu::reduce<scalar_t, scalar_t>(Norm<scalar_t, NormKind::kGeneral>{pv}, self, reduced_dims, out);
  });
}

void cumsum_out_cpu(const at::Tensor& self, at::IntArrayRef scan_dim, std::optional<at::ScalarType> /*dtype*/,
                    at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  if (out.numel() == 0) return;
  const at::Tensor x = cpu::operand(self, out.scalar_type(), self.device()).contiguous();  // int -> int64, dtype=
  const int64_t dim = scan_dim.empty() ? 0 : scan_dim[0];  // a 0-dim self scans one element
  const int64_t n = x.dim() == 0 ? 1 : x.size(dim);
  int64_t inner = 1;
  for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
  const int64_t outer = x.numel() / (n * inner);
  constexpr int64_t kBlock = 256;
  const int64_t blocks = (inner + kBlock - 1) / kBlock;
  AT_DISPATCH_V2(out.scalar_type(), "cumsum", AT_WRAP([&] {
    const scalar_t* in = x.const_data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();  // contiguous: the meta layout
    if (inner == 1 && n > 1) {
      const int64_t groups = (outer + kRowGroup - 1) / kRowGroup;
      structops::parallel_for(0, groups, std::max<int64_t>(1, cpu::kGrainSize / (n * kRowGroup)),
                              [&](int64_t begin, int64_t end) {
        for (int64_t g = begin; g < end; ++g) {
          const int64_t r0 = g * kRowGroup;
          scan_rows(in + r0 * n, o + r0 * n, n, std::min(kRowGroup, outer - r0));
        }
      });
      return;
    }
    structops::parallel_for(0, outer * blocks, std::max<int64_t>(1, cpu::kGrainSize / (n * std::min(inner, kBlock))),
                            [&](int64_t begin, int64_t end) {
      std::array<scan_acc_t<scalar_t>, kBlock> acc;
      for (int64_t t = begin; t < end; ++t) {
        const int64_t b = t / blocks, k0 = (t % blocks) * kBlock;
        const int64_t offset = b * n * inner + k0;
        scan_block(in + offset, o + offset, n, inner, std::min(kBlock, inner - k0), acc.data());
      }
    });
  }), AT_EXPAND(AT_ALL_TYPES), AT_EXPAND(AT_COMPLEX_TYPES), at::kHalf, at::kBFloat16, at::kBool,
     AT_EXPAND(AT_BAREBONES_UNSIGNED_TYPES));
}

}  // namespace structops::impl
