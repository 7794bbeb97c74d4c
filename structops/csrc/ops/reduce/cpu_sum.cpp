// CPU impls of sum (its two kernel variants) on the loops of structgen/cpu/reduce.h (mean is in
// cpu_mean.cpp: an edit here recompiles sum's instantiations alone). The meta function has already
// applied keepdim and dtype to out, and validated `dim` into `reduced_dims` (None and [] already
// expanded as the op defines).
#include "cpu_reducers.h"

#include <structgen/cpu/reduce.h>
#include <structops/ops/any_dims.h>
#include <structops/ops/sum_dim_IntList.h>

#include <ATen/Dispatch.h>
#include <ops/runtime_names.h>

namespace structops::impl {
using namespace reducers;

void reducers::integer_sum(const at::Tensor& self, at::IntArrayRef reduced_dims, const at::Tensor& out,
                           cpu::ReduceLayout layout, bool mean) {
  const bool in_double = self.scalar_type() == at::kLong && !is_int64_foldable(out.scalar_type());
  const at::ScalarType acc = in_double ? at::kDouble : at::kLong;
  const at::Tensor result =
      out.scalar_type() == acc && !mean ? out : out.new_empty(out.sizes(), out.options().dtype(acc));
  if (in_double) {
    cpu::reduce_storage<int64_t, double>(Sum<double, false, int64_t>{}, self, reduced_dims, result, layout);
  } else {
    fold_in_int64(self, reduced_dims, result, layout,
                  [](auto in) { return Sum<int64_t, false, decltype(in)>{}; });
  }
  if (mean) {
    const int64_t n = out.numel() == 0 ? 0 : self.numel() / out.numel();  // 0 / 0: NaN, as torch
    out.copy_(result.to(at::kDouble).div_(static_cast<double>(n)));
  } else if (!result.is_same(out)) {
    out.copy_(result);  // narrowed (sums wrap alike in any width), or rounded to a floating dtype=
  }
}

// sum's two CPU kernel variants (the manifest's `kernels:`; structgen::autotune times them per
// shape bucket): reduce along contiguous rows, or accumulate contiguous columns of outputs.
static void sum_with_layout(const at::Tensor& self, at::IntArrayRef reduced_dims, const at::Tensor& out,
                            cpu::ReduceLayout layout) {
  if (out.scalar_type() == at::kBool) {  // torch casts to bool first: whether any element is nonzero
    return any_out_cpu(self, reduced_dims, /*keepdim=*/false, at::kBool, out);
  }
  if (is_int64_foldable(self.scalar_type())) {
    return integer_sum(self, reduced_dims, out, layout, /*mean=*/false);
  }
  const at::Tensor x = cpu::operand(self, out.scalar_type(), self.device());  // dtype= of a floating input
  if (is_narrow_integral(out.scalar_type())) {
    return in_wider(at::kLong, x, out, [&](const at::Tensor& x64, const at::Tensor& out64) {
      cpu::reduce<int64_t, int64_t>(Sum<int64_t, false>{}, x64, reduced_dims, out64, layout);
    });
  }
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES_AND3(
      at::kHalf, at::kBFloat16, at::kLong, out.scalar_type(), "sum",
      [&] { cpu::reduce<scalar_t, scalar_t>(Sum<scalar_t, false>{}, x, reduced_dims, out, layout); });
}

void sum_out_cpu_rows(const at::Tensor& self, at::IntArrayRef reduced_dims, bool /*keepdim*/,
                      std::optional<at::ScalarType> /*dtype*/, at::ScalarType /*compute_dtype*/,
                      const at::Tensor& out) {
  sum_with_layout(self, reduced_dims, out, cpu::ReduceLayout::rows);
}

void sum_out_cpu_columns(const at::Tensor& self, at::IntArrayRef reduced_dims, bool /*keepdim*/,
                         std::optional<at::ScalarType> /*dtype*/, at::ScalarType /*compute_dtype*/,
                         const at::Tensor& out) {
  sum_with_layout(self, reduced_dims, out, cpu::ReduceLayout::columns);
}

}  // namespace structops::impl
