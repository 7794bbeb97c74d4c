// CPU impls of prod, all and any on the loops of structops/cpu/reduce.h.
#include "cpu_reducers.h"

#include <structops/cpu/reduce.h>
#include <structops/ops/all_dims.h>
#include <structops/ops/any_dims.h>
#include <structops/ops/prod_dims.h>

#include <ATen/Dispatch.h>

#include <type_traits>

namespace structops::impl {
using namespace reducers;
namespace {

template <bool kAll>
void truth(const at::Tensor& self, at::IntArrayRef reduced_dims, const at::Tensor& out) {
  AT_DISPATCH_ALL_TYPES_AND_COMPLEX_AND3(at::kHalf, at::kBFloat16, at::kBool, self.scalar_type(), kAll ? "all" : "any", [&] {
    // The result is uint8 for uint8 input and bool otherwise (the rule's kind=BOOL, out_dtype:
    // exact), so each input dtype needs one output type's loops, not both.
    using out_t = std::conditional_t<std::is_same_v<scalar_t, uint8_t>, uint8_t, bool>;
    cpu::reduce<scalar_t, out_t>(Truth<scalar_t, out_t, kAll>{}, self, reduced_dims, out);
  });
}

}  // namespace

void prod_dims_out_cpu(const at::Tensor& self, at::IntArrayRef reduced_dims, bool /*keepdim*/,
                  std::optional<at::ScalarType> /*dtype*/, at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  const at::Tensor x = cpu::operand(self, out.scalar_type(), self.device());  // prod(int) -> int64, dtype=
  AT_DISPATCH_ALL_TYPES_AND_COMPLEX_AND3(at::kHalf, at::kBFloat16, at::kBool, out.scalar_type(), "prod", [&] {
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

}  // namespace structops::impl
