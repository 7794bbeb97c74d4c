// CPU impl of norm over a dim list: |x|^p summed and rooted, the common p with loops of their own.
#include "cpu_reducers.h"

#include <structops/cpu/reduce.h>
#include <structops/ops/norm_ScalarOpt_dim.h>

#include <ATen/Dispatch.h>

#include <cmath>
#include <type_traits>

namespace structops::impl {
using namespace reducers;
void norm_out_cpu(const at::Tensor& self, const std::optional<at::Scalar>& p, at::IntArrayRef reduced_dims,
                  bool /*keepdim*/, at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  const double pv = p.has_value() ? p->toDouble() : 2.0;
  if (self.is_complex()) {  // the p-norm of the magnitudes (torch's): a real result
    norm_out_cpu(self.abs(), p, reduced_dims, false, out.scalar_type(), out);
    return;
  }
  const bool common_p = pv == 1 || pv == 2;
  if (!common_p && (out.scalar_type() == at::kHalf || out.scalar_type() == at::kBFloat16)) {
    // The rarer p of half and bfloat16 run float's loops on a float copy: the same arithmetic (they
    // accumulate in float either way) and the same rounding of the result, 8 fewer instantiations.
    return in_wider(at::kFloat, self, out, [&](const at::Tensor& x32, const at::Tensor& out32) {
      norm_out_cpu(x32, p, reduced_dims, false, at::kFloat, out32);
    });
  }
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, out.scalar_type(), "norm", [&] {
    if (pv == 1) cpu::reduce<scalar_t, scalar_t>(Norm<scalar_t, NormKind::kOne>{pv}, self, reduced_dims, out);
    else if (pv == 2) cpu::reduce<scalar_t, scalar_t>(Norm<scalar_t, NormKind::kTwo>{pv}, self, reduced_dims, out);
    else if constexpr (std::is_same_v<scalar_t, float> || std::is_same_v<scalar_t, double>) {
      if (pv == 0) cpu::reduce<scalar_t, scalar_t>(Norm<scalar_t, NormKind::kZero>{pv}, self, reduced_dims, out);
      else if (std::isinf(pv) && pv > 0) cpu::reduce<scalar_t, scalar_t>(Norm<scalar_t, NormKind::kInf>{pv}, self, reduced_dims, out);
      else if (std::isinf(pv)) cpu::reduce<scalar_t, scalar_t>(Norm<scalar_t, NormKind::kNegInf>{pv}, self, reduced_dims, out);
      else cpu::reduce<scalar_t, scalar_t>(Norm<scalar_t, NormKind::kGeneral>{pv}, self, reduced_dims, out);
    }
  });
}

}  // namespace structops::impl
