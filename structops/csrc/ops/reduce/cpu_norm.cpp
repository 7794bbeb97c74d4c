// CPU impl of norm over a dim list: |x|^p summed and rooted, the common p with loops of their own.
#include "cpu_reducers.h"

#include <structgen/cpu/reduce.h>
#include <structops/ops/norm_ScalarOpt_dim.h>

#include <ATen/Dispatch.h>

#include <cmath>
#include <limits>
#include <type_traits>
#include <ops/runtime_names.h>

namespace structops::impl {
using namespace reducers;
namespace {

// sum(|x|^p)^(1/p) over the reduced dims of a real self, one pass.
void norm_values(const at::Tensor& self, double pv, at::IntArrayRef reduced_dims, const at::Tensor& out) {
  const bool common_p = pv == 1 || pv == 2;
  if (!common_p && (out.scalar_type() == at::kHalf || out.scalar_type() == at::kBFloat16)) {
    // The rarer p of half and bfloat16 run float's loops on a float copy: the same arithmetic (they
    // accumulate in float either way) and the same rounding of the result, 8 fewer instantiations.
    return in_wider(at::kFloat, self, out, [&](const at::Tensor& x32, const at::Tensor& out32) {
      norm_values(x32, pv, reduced_dims, out32);
    });
  }
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, out.scalar_type(), "norm", [&] {
    if (pv == 1)
      cpu::reduce<scalar_t, scalar_t>(Norm<scalar_t, NormKind::kOne>{pv}, self, reduced_dims, out);
    else if (pv == 2)
      cpu::reduce<scalar_t, scalar_t>(Norm<scalar_t, NormKind::kTwo>{pv}, self, reduced_dims, out);
    else if constexpr (std::is_same_v<scalar_t, float> || std::is_same_v<scalar_t, double>) {
      if (pv == 0)
        cpu::reduce<scalar_t, scalar_t>(Norm<scalar_t, NormKind::kZero>{pv}, self, reduced_dims, out);
      else if (std::isinf(pv) && pv > 0)
        cpu::reduce<scalar_t, scalar_t>(Norm<scalar_t, NormKind::kInf>{pv}, self, reduced_dims, out);
      else if (std::isinf(pv))
        cpu::reduce<scalar_t, scalar_t>(Norm<scalar_t, NormKind::kNegInf>{pv}, self, reduced_dims, out);
      else
        cpu::reduce<scalar_t, scalar_t>(Norm<scalar_t, NormKind::kGeneral>{pv}, self, reduced_dims, out);
    }
  });
}

// The outputs whose |x|^p left the accumulator's range (p > 1): norm([1e20, 5e19]) in float
// squares to inf and norm([1e-30]) to 0 where the norm itself is representable (torch gives inf
// and 0 there). They are computed again as max|x| * norm(x / max|x|), whose terms are at most 1,
// after one look at the outputs: only an output that came out inf, 0 or subnormal can be one.
void rescale_out_of_range(const at::Tensor& self, double pv, at::IntArrayRef reduced_dims,
                          const at::Tensor& out) {
  if (!(pv > 1) || std::isinf(pv) || self.numel() == 0) return;
  // in float for float16 and bfloat16, the accumulator's type (x / max|x| rounded to them would
  // lose digits, and a number compared with them is rounded to them first)
  const bool narrow = self.scalar_type() == at::kHalf || self.scalar_type() == at::kBFloat16;
  const at::Tensor magnitude = narrow ? out.abs().to(at::kFloat) : out.abs();
  const double tiny = magnitude.scalar_type() == at::kDouble ? std::numeric_limits<double>::min()
                                                             : std::numeric_limits<float>::min();
  const at::Tensor suspect = magnitude.isinf().logical_or_(magnitude.lt(tiny));
  if (!suspect.any().item<bool>()) return;
  const at::Tensor x = narrow ? self.to(at::kFloat) : self;
  const at::Tensor top = x.abs().amax(reduced_dims, /*keepdim=*/true);
  const at::Tensor scale = top.masked_fill(top.gt(0).logical_and_(top.isfinite()).logical_not_(), 1.0);
  const at::Tensor scaled = x.new_empty(out.sizes());  // 0, inf and NaN maxima: x unscaled
  norm_values(x.div(scale), pv, reduced_dims, scaled);
  const at::Tensor fixed = scaled.mul_(scale.reshape(out.sizes()));
  out.copy_(fixed.to(out.scalar_type()).where(suspect, out));
}

}  // namespace

void norm_out_cpu(const at::Tensor& self, const std::optional<at::Scalar>& p, at::IntArrayRef reduced_dims,
                  bool /*keepdim*/, at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  const double pv = p.has_value() ? p->toDouble() : 2.0;
  const at::Tensor real = self.is_complex() ? self.abs() : self;  // the p-norm of the magnitudes (torch's)
  if (real.numel() == out.numel()) {  // one element per output: |x| (x != 0 for p = 0), as torch,
    // exactly: (|x|^p)^(1/p) rounds, and p = 1e-8 takes |x|^p to 1
    out.copy_((pv == 0 ? real.ne(0) : real.abs()).reshape(out.sizes()));
    return;
  }
  norm_values(real, pv, reduced_dims, out);
  rescale_out_of_range(real, pv, reduced_dims, out);
}

}  // namespace structops::impl
