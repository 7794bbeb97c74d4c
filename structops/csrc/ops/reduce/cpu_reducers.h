// The CPU reducers of the reduction family: what cpu::reduce (structgen/cpu/reduce.h) folds per
// element, one functor per reduction. Shared by the family's cpu_*.cpp files, which are split by
// op so that editing one reduction recompiles its own file only.
#pragma once

#include <ATen/OpMathType.h>
#include <ATen/core/Tensor.h>
#include <structgen/cpu/float16.h>
#include <structgen/cpu/reduce.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <ops/runtime_names.h>

namespace structops::impl::reducers {

// Floating sums accumulate in opmath (float for float, half and bfloat16; double for double) over
// the cascade of cpu::reduce's rows, as torch's sums do; integers in int64. (at::acc_type, double
// for float, halved the vector width and ran at half torch's speed.)
template <typename scalar_t>
using sum_acc_t = std::conditional_t<std::is_same_v<scalar_t, bool> || std::is_integral_v<scalar_t>, int64_t,
                                     at::opmath_type<scalar_t>>;

// in_t: what the input holds, where it is not the result's type (an integer input widened per
// element: fold_in_int64).
template <typename scalar_t, bool kMean, typename in_t = scalar_t>
struct Sum {
  using acc_t = sum_acc_t<scalar_t>;
  acc_t identity() const { return acc_t(0); }
  acc_t step(acc_t a, in_t x) const { return fold(a, structgen::cpu::to_acc<acc_t>(x)); }
  acc_t fold(acc_t a, acc_t v) const { return a + v; }
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
    if constexpr (std::is_same_v<acc_t, bool>)
      return !kMax;
    else if constexpr (std::numeric_limits<acc_t>::has_infinity)
      return kMax ? -std::numeric_limits<acc_t>::infinity() : std::numeric_limits<acc_t>::infinity();
    else
      return kMax ? std::numeric_limits<acc_t>::lowest() : std::numeric_limits<acc_t>::max();
  }
  acc_t step(acc_t a, scalar_t x) const { return merge(a, structgen::cpu::to_acc<acc_t>(x)); }
  acc_t fold(acc_t a, acc_t v) const { return merge(a, v); }
  acc_t merge(acc_t a, acc_t b) const {
    // max/min as the vector instruction computes it (a NaN a stays: no comparison replaces it),
    // then a NaN b taken: two selects without branches, which gcc vectorises.
    const acc_t m = kMax ? (b > a ? b : a) : (b < a ? b : a);
    return b != b ? b : m;
  }
  scalar_t finish(acc_t a, int64_t) const { return static_cast<scalar_t>(a); }
};

// Integer results narrower than int64, and bool, come from dtype= only (an integer input's sum
// and prod are int64): they are computed in int64 and narrowed once at the end. The values are the
// same (int64 sums and products agree with the narrow type's modulo 2^bits; bool's is nonzero),
// and the loops are instantiated for int64 alone instead of for six dtypes.
inline bool is_narrow_integral(at::ScalarType t) {
  return t == at::kBool || t == at::kByte || t == at::kChar || t == at::kShort || t == at::kInt;
}

// reduce(x_wide, out_wide) on x converted to the `wide` dtype, then out = out_wide narrowed: for
// dtypes whose result a wider dtype's loops compute exactly (these, and norm's rarer p of half
// and bfloat16 through float).
template <typename Reduce>
void in_wider(at::ScalarType wide, const at::Tensor& x, const at::Tensor& out, const Reduce& reduce) {
  const at::Tensor out_wide = out.new_empty(out.sizes(), out.options().dtype(wide));
  reduce(x.to(wide), out_wide);
  out.copy_(out_wide);
}

// The dtypes fold_in_int64 reads: bool and the signed integers, uint8.
inline bool is_int64_foldable(at::ScalarType t) { return is_narrow_integral(t) || t == at::kLong; }

// An integer or bool `self` folded into `result` (int64, laid out as cpu::reduce writes) by the
// reducer make(in_t{}) returns, its elements read in their own type (bool as its bytes, 0 or 1)
// and widened one by one, as torch's integer sums and products do: a converted int64 copy took 8
// bytes per element, and as much for an expanded input (issue 56).
template <typename MakeReducer>
void fold_in_int64(const at::Tensor& self, at::IntArrayRef reduced_dims, const at::Tensor& result,
                   cpu::ReduceLayout layout, const MakeReducer& make) {
  const auto fold = [&](auto in) {
    cpu::reduce_storage<decltype(in), int64_t>(make(in), self, reduced_dims, result, layout);
  };
  switch (self.scalar_type()) {
    case at::kBool:
    case at::kByte:
      return fold(uint8_t{});
    case at::kChar:
      return fold(int8_t{});
    case at::kShort:
      return fold(int16_t{});
    case at::kInt:
      return fold(int32_t{});
    case at::kLong:
      return fold(int64_t{});
    default:
      TORCH_INTERNAL_ASSERT(false, "fold_in_int64: ", self.scalar_type(), " is not an integer dtype");
  }
}

// Sum (mean: divided by the count) of an integer or bool `self` into `out` of any result dtype,
// read in place (cpu_sum.cpp): in int64, exact, or in double for an int64 input with a floating
// result (int64 would wrap where torch's floating sum does not); a result of another dtype goes
// through an output-sized temporary, cast once.
void integer_sum(const at::Tensor& self, at::IntArrayRef reduced_dims, const at::Tensor& out,
                 cpu::ReduceLayout layout, bool mean);

template <typename scalar_t, typename in_t = scalar_t>
struct Prod {
  using acc_t = sum_acc_t<scalar_t>;
  acc_t identity() const { return acc_t(1); }
  acc_t step(acc_t a, in_t x) const { return fold(a, structgen::cpu::to_acc<acc_t>(x)); }
  acc_t fold(acc_t a, acc_t v) const { return a * v; }
  acc_t merge(acc_t a, acc_t b) const { return a * b; }
  scalar_t finish(acc_t a, int64_t) const { return static_cast<scalar_t>(a); }
};

// all (kAll) / any: out is bool, or uint8 for uint8 input (as torch). The truth accumulates as a
// byte of 0 or 1 by & and |: gcc vectorises neither bool lanes nor the branches of && and || (bool
// all over 1e6 ran at 0.83x torch).
template <typename scalar_t, typename out_t, bool kAll>
struct Truth {
  uint8_t identity() const { return kAll; }
  uint8_t step(uint8_t a, scalar_t x) const {
    return kAll ? (a & uint8_t(x != scalar_t(0))) : (a | uint8_t(x != scalar_t(0)));
  }
  uint8_t merge(uint8_t a, uint8_t b) const { return kAll ? (a & b) : (a | b); }
  out_t finish(uint8_t a, int64_t) const { return static_cast<out_t>(a); }
};

// Truth over an element's bits (cpu::reduce_storage): it is nonzero when a bit under `mask` is set,
// the mask leaving out floating-point sign bits (-0.0 is false, NaN true), so one instantiation
// serves every dtype of a size. out: one byte of 0 or 1, which bool and uint8 both are.
template <typename bits_t, bool kAll>
struct TruthBits {
  bits_t mask;
  uint8_t identity() const { return kAll; }
  uint8_t step(uint8_t a, bits_t x) const {
    return kAll ? (a & uint8_t((x & mask) != 0)) : (a | uint8_t((x & mask) != 0));
  }
  uint8_t merge(uint8_t a, uint8_t b) const { return kAll ? (a & b) : (a | b); }
  uint8_t finish(uint8_t a, int64_t) const { return a; }
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
  acc_t step(acc_t a, scalar_t x) const { return fold(a, structgen::cpu::to_acc<acc_t>(x)); }
  acc_t fold(acc_t a, acc_t x) const {
    const acc_t v = std::abs(x);
    if constexpr (K == NormKind::kOne)
      return a + v;
    else if constexpr (K == NormKind::kTwo)
      return a + v * v;
    else if constexpr (K == NormKind::kZero)
      return a + (v != acc_t(0) ? acc_t(1) : acc_t(0));
    else if constexpr (K == NormKind::kGeneral)
      return a + std::pow(v, static_cast<acc_t>(p));
    else
      return merge(a, v);
  }
  acc_t merge(acc_t a, acc_t b) const {
    if constexpr (K == NormKind::kInf || K == NormKind::kNegInf) {
      if (b != b) return b;  // NaN propagates
      return K == NormKind::kInf ? (b > a ? b : a) : (b < a ? b : a);
    }
    return a + b;
  }
  scalar_t finish(acc_t a, int64_t) const {
    if constexpr (K == NormKind::kTwo)
      return static_cast<scalar_t>(std::sqrt(a));
    else if constexpr (K == NormKind::kGeneral)
      return static_cast<scalar_t>(std::pow(a, acc_t(1) / static_cast<acc_t>(p)));
    return static_cast<scalar_t>(a);
  }
};

}  // namespace structops::impl::reducers
