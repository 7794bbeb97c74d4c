// CPU impl of norm over a dim list: |x|^p summed and rooted, the common p with loops of their own.
#include "cpu_reducers.h"

#include <structops/cpu/reduce.h>
#include <structops/ops/norm_ScalarOpt_dim.h>

#include <ATen/Dispatch.h>
#include <ATen/ops/abs.h>

#include <cmath>

namespace structops::impl {
using namespace reducers;
void norm_out_cpu(const at::Tensor& self, const std::optional<at::Scalar>& p, at::IntArrayRef reduced_dims,
                  bool /*keepdim*/, at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  const double pv = p.has_value() ? p->toDouble() : 2.0;
  if (self.is_complex()) {  // the p-norm of the magnitudes (torch's): a real result
    norm_out_cpu(at::abs(self), p, reduced_dims, false, out.scalar_type(), out);
    return;
  }
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
