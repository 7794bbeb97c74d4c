// CPU impls of prod, all and any on the loops of structgen/cpu/reduce.h.
#include "cpu_reducers.h"

#include <structgen/cpu/reduce.h>
#include <structops/ops/all_dims.h>
#include <structops/ops/any_dims.h>
#include <structops/ops/prod_dims.h>

#include <ATen/Dispatch.h>

#include <cstdint>
#include <ops/runtime_names.h>

namespace structops::impl {
using namespace reducers;
namespace {

// all/any read the elements' bits (TruthBits): the loops are instantiated once per element size
// rather than once per dtype (12 dtypes took 24 instantiations, a third of this file's compile).
template <bool kAll>
void truth(const at::Tensor& self, at::IntArrayRef reduced_dims, const at::Tensor& out) {
  const at::ScalarType t = self.scalar_type();
  const bool floating = at::isFloatingType(t) || at::isComplexType(t);
  switch (t) {
    case at::kBool:
    case at::kByte:
    case at::kChar:
      return cpu::reduce_storage<uint8_t, uint8_t>(TruthBits<uint8_t, kAll>{0xff}, self, reduced_dims, out);
    case at::kShort:
    case at::kHalf:
    case at::kBFloat16: {
      const uint16_t mask = floating ? 0x7fff : 0xffff;
      return cpu::reduce_storage<uint16_t, uint8_t>(TruthBits<uint16_t, kAll>{mask}, self, reduced_dims, out);
    }
    case at::kInt:
    case at::kFloat: {
      const uint32_t mask = floating ? 0x7fffffffu : 0xffffffffu;
      return cpu::reduce_storage<uint32_t, uint8_t>(TruthBits<uint32_t, kAll>{mask}, self, reduced_dims, out);
    }
    case at::kLong:
    case at::kDouble:
    case at::kComplexFloat: {
      const uint64_t mask = t == at::kComplexFloat ? 0x7fffffff7fffffffull  // either part nonzero
                            : floating             ? 0x7fffffffffffffffull
                                                   : ~0ull;
      return cpu::reduce_storage<uint64_t, uint8_t>(TruthBits<uint64_t, kAll>{mask}, self, reduced_dims, out);
    }
    case at::kComplexDouble:
      return cpu::reduce<c10::complex<double>, bool>(Truth<c10::complex<double>, bool, kAll>{}, self,
                                                     reduced_dims, out);
    default:
      TORCH_CHECK_NOT_IMPLEMENTED(false, '"', kAll ? "all" : "any", "\" not implemented for '", t, "'");
  }
}

}  // namespace

void prod_dims_out_cpu(const at::Tensor& self, at::IntArrayRef reduced_dims, bool /*keepdim*/,
                       std::optional<at::ScalarType> /*dtype*/, at::ScalarType /*compute_dtype*/,
                       const at::Tensor& out) {
  if (out.scalar_type() == at::kBool)
    return truth<true>(self, reduced_dims, out);  // cast to bool first, as torch
  if (is_int64_foldable(self.scalar_type()) &&
      is_int64_foldable(out.scalar_type())) {  // prod(int): read in place
    const at::Tensor result =
        out.scalar_type() == at::kLong ? out : out.new_empty(out.sizes(), out.options().dtype(at::kLong));
    fold_in_int64(self, reduced_dims, result, cpu::ReduceLayout::automatic,
                  [](auto in) { return Prod<int64_t, decltype(in)>{}; });
    if (!result.is_same(out)) out.copy_(result);  // narrowed: dtype=
    return;
  }
  // A floating result of an integer input (dtype=) multiplies in that dtype, as torch: a cast copy.
  const at::Tensor x = cpu::operand(self, out.scalar_type(), self.device());
  if (is_narrow_integral(out.scalar_type())) {
    return in_wider(at::kLong, x, out, [&](const at::Tensor& x64, const at::Tensor& out64) {
      cpu::reduce<int64_t, int64_t>(Prod<int64_t>{}, x64, reduced_dims, out64);
    });
  }
  AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES_AND3(
      at::kHalf, at::kBFloat16, at::kLong, out.scalar_type(), "prod",
      [&] { cpu::reduce<scalar_t, scalar_t>(Prod<scalar_t>{}, x, reduced_dims, out); });
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
