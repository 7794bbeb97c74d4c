// CPU impls of prod, all and any on the loops of structops/cpu/reduce.h.
#include "cpu_reducers.h"

#include <structops/cpu/reduce.h>
#include <structops/ops/all_dims.h>
#include <structops/ops/any_dims.h>
#include <structops/ops/prod_dim.h>

#include <ATen/Dispatch.h>

namespace structops::impl {
using namespace reducers;
namespace {

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

}  // namespace

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

}  // namespace structops::impl
