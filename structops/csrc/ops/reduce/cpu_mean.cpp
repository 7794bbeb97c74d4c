// CPU impl of mean on the loops of structgen/cpu/reduce.h (sum's reducer, divided by the count).
// The meta function has already applied keepdim and dtype to out, and validated `dim` into
// `reduced_dims`.
#include "cpu_reducers.h"

#include <structgen/cpu/reduce.h>
#include <structops/ops/mean_dim.h>

#include <ATen/Dispatch.h>
#include <ops/runtime_names.h>

namespace structops::impl {
using namespace reducers;

void mean_out_cpu(const at::Tensor& self, at::IntArrayRef reduced_dims, bool /*keepdim*/,
                  std::optional<at::ScalarType> /*dtype*/, at::ScalarType /*compute_dtype*/,
                  const at::Tensor& out) {
  if (is_int64_foldable(self.scalar_type())) {  // dtype= given: read in place
    return integer_sum(self, reduced_dims, out, cpu::ReduceLayout::automatic, /*mean=*/true);
  }
  const at::Tensor x = cpu::operand(self, out.scalar_type(), self.device());  // dtype= of a floating input
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES_AND2(at::kHalf, at::kBFloat16, out.scalar_type(), "mean", [&] {
    cpu::reduce<scalar_t, scalar_t>(Sum<scalar_t, true>{}, x, reduced_dims, out);
  });
}

}  // namespace structops::impl
