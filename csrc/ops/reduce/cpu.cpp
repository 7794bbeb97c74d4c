// CPU impls of the reductions over a dim list (sum, mean, prod, amax, amin, all, any, norm) on the
// loops of structops/cpu/reduce.h, plus argmax/argmin (which need the element's index). The meta
// function has already applied keepdim and dtype to out, and validated `dim` into `reduced_dims`
// (None and [] already expanded as the op defines). var and std ride on the same loops in
// ops/normalization/ (their CUDA kernels share layer_norm's row statistics there).
#include <structops/cpu/reduce.h>
#include <structops/ops/all_dims.h>
#include <structops/ops/amax.h>
#include <structops/ops/amin.h>
#include <structops/ops/any_dims.h>
#include <structops/ops/argmax.h>
#include <structops/ops/argmin.h>
#include <structops/ops/mean_dim.h>
#include <structops/ops/norm_ScalarOpt_dim.h>
#include <structops/ops/prod_dim.h>
#include <structops/ops/sum_dim_IntList.h>

#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>

#include <algorithm>
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

template <bool kMax>
void extremum(const at::Tensor& self, at::IntArrayRef reduced_dims, const at::Tensor& out) {
  AT_DISPATCH_ALL_TYPES_AND3(at::kHalf, at::kBFloat16, at::kBool, out.scalar_type(), kMax ? "amax" : "amin", [&] {
    cpu::reduce<scalar_t, scalar_t>(Extremum<scalar_t, kMax>{}, self, reduced_dims, out);
  });
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

}  // namespace structops::impl
