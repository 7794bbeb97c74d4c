// CPU impls of the foundation's pointwise ops. The pointwise-formula issue replaces these with
// generated kernels; until then they are plain loops over cpu_loops.h.
#include <structops/cpu_loops.h>
#include <structops/ops/add_Tensor.h>
#include <structops/ops/mul_Tensor.h>
#include <structops/ops/neg.h>

#include <ATen/Dispatch.h>

namespace structops::impl {

void add_out_cpu(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha,
                 at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  AT_DISPATCH_ALL_TYPES_AND_COMPLEX_AND3(at::kHalf, at::kBFloat16, at::kBool, out.scalar_type(), "add", [&] {
    const auto a = alpha.to<scalar_t>();
    cpu::for_each<scalar_t, 2>(out, {cpu::as_operand(self, out), cpu::as_operand(other, out)},
                               [a](scalar_t x, scalar_t y) -> scalar_t {
                                 if constexpr (std::is_same_v<scalar_t, bool>) {
                                   return x || (a && y);
                                 } else {
                                   return x + a * y;
                                 }
                               });
  });
}

void mul_out_cpu(const at::Tensor& self, const at::Tensor& other, at::ScalarType /*compute_dtype*/,
                 const at::Tensor& out) {
  AT_DISPATCH_ALL_TYPES_AND_COMPLEX_AND3(at::kHalf, at::kBFloat16, at::kBool, out.scalar_type(), "mul", [&] {
    cpu::for_each<scalar_t, 2>(out, {cpu::as_operand(self, out), cpu::as_operand(other, out)},
                               [](scalar_t x, scalar_t y) -> scalar_t {
                                 if constexpr (std::is_same_v<scalar_t, bool>) {
                                   return x && y;
                                 } else {
                                   return x * y;
                                 }
                               });
  });
}

void neg_out_cpu(const at::Tensor& self, at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  AT_DISPATCH_ALL_TYPES_AND_COMPLEX_AND2(at::kHalf, at::kBFloat16, out.scalar_type(), "neg", [&] {
    cpu::for_each<scalar_t, 1>(out, {cpu::as_operand(self, out)}, [](scalar_t x) -> scalar_t { return -x; });
  });
}

}  // namespace structops::impl
