// CPU impls of the reductions over a dim list (sum, mean, amax, amin) on the loops of
// structops/cpu_reduce.h. The meta function has already applied keepdim and dtype to out, and
// validated `dim` into `reduced_dims` (None and [] already expanded to every dim).
#include <structops/cpu_reduce.h>
#include <structops/ops/amax.h>
#include <structops/ops/amin.h>
#include <structops/ops/mean_dim.h>
#include <structops/ops/sum_dim_IntList.h>

#include <ATen/AccumulateType.h>
#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>

#include <cmath>
#include <limits>
#include <type_traits>

namespace structops::impl {
namespace {

// Floating sums accumulate in double (at::acc_type on the CPU), integers in int64.
template <typename scalar_t>
using sum_acc_t = std::conditional_t<std::is_same_v<scalar_t, bool>, int64_t, at::acc_type<scalar_t, false>>;

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
    if constexpr (std::is_floating_point_v<acc_t>) {
      if (b != b) return b;  // NaN wins; written as a select so the loop still vectorises
    }
    return kMax ? (b > a ? b : a) : (b < a ? b : a);
  }
  scalar_t finish(acc_t a, int64_t) const { return static_cast<scalar_t>(a); }
};

template <bool kMax>
void extremum(const at::Tensor& self, at::IntArrayRef reduced_dims, const at::Tensor& out) {
  AT_DISPATCH_ALL_TYPES_AND3(at::kHalf, at::kBFloat16, at::kBool, out.scalar_type(), kMax ? "amax" : "amin", [&] {
    cpu::reduce<scalar_t, scalar_t>(Extremum<scalar_t, kMax>{}, self, reduced_dims, out);
  });
}

}  // namespace

void sum_IntList_out_cpu(const at::Tensor& self, at::IntArrayRef reduced_dims, bool /*keepdim*/,
                         std::optional<at::ScalarType> /*dtype*/, at::ScalarType /*compute_dtype*/,
                         const at::Tensor& out) {
  const at::Tensor x = cpu::operand(self, out.scalar_type(), self.device());  // sum(int) -> int64, dtype=
  AT_DISPATCH_ALL_TYPES_AND_COMPLEX_AND3(at::kHalf, at::kBFloat16, at::kBool, out.scalar_type(), "sum", [&] {
    cpu::reduce<scalar_t, scalar_t>(Sum<scalar_t, false>{}, x, reduced_dims, out);
  });
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

}  // namespace structops::impl
