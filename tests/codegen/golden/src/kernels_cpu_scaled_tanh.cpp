// @generated from native_functions.yaml by codegen/templates/kernels_cpu.cpp.j2 — DO NOT EDIT.
// Regenerate with: python -m codegen (run by the CMake build)
// CPU kernels of one pointwise op and of its generated backward ops, from their formulas (a file
// per op: editing a formula recompiles that op alone). An impl brings promoted inputs to the
// common dtype and runs the formula through cpu::run (csrc/include/structops/cpu/pointwise.h)
// for the dtype it dispatches to.
#include <structops/cpu/pointwise.h>
#include <structops/ops/scaled_tanh.h>
#include <structops/ops/_scaled_tanh_backward_self.h>

#include <ATen/OpMathType.h>
#include <c10/util/Exception.h>


namespace structops {
namespace {

// scaled_tanh: the formula, over the compute type T.
template <typename T>
struct scaled_tanh_out_formula {
  T alpha;
  SO_HD auto operator()(T self) const { return T(alpha * pw::tanh(self)); }
};


// _scaled_tanh_backward_self: the formula, over the compute type T.
template <typename T>
struct _scaled_tanh_backward_self_out_formula {
  T alpha;
  SO_HD auto operator()(T grad, T self) const { return T(grad * pw::conj(T(alpha * T(T(1) - T(pw::tanh(self) * pw::tanh(self)))))); }
};


}  // namespace

namespace impl {

void scaled_tanh_out_cpu(const at::Tensor& self, const at::Scalar& alpha, at::ScalarType common_dtype, const at::Tensor& out) {
  const std::array<at::Tensor, 1> so_inputs{
      cpu::operand(self, common_dtype, out.device()),
  };
  auto run = [&]<typename scalar_t>() {
    using T = at::opmath_type<scalar_t>;
    const scaled_tanh_out_formula<T> f{alpha.to<T>()};
    cpu::run<scalar_t, scalar_t>(f, out, so_inputs, /*grain=*/32768);
  };
  switch (common_dtype) {
    case at::ScalarType::Half: run.template operator()<at::Half>(); break;
    case at::ScalarType::BFloat16: run.template operator()<at::BFloat16>(); break;
    case at::ScalarType::Float: run.template operator()<float>(); break;
    case at::ScalarType::Double: run.template operator()<double>(); break;
    default: TORCH_CHECK(false, "scaled_tanh: no CPU kernel for dtype ", common_dtype);
  }
}

void _scaled_tanh_backward_self_out_cpu(const at::Tensor& grad, const at::Tensor& self, const at::Scalar& alpha, at::ScalarType common_dtype, const at::Tensor& out) {
  const std::array<at::Tensor, 2> so_inputs{
      cpu::operand(grad, common_dtype, out.device()),
      cpu::operand(self, common_dtype, out.device()),
  };
  auto run = [&]<typename scalar_t>() {
    using T = at::opmath_type<scalar_t>;
    const _scaled_tanh_backward_self_out_formula<T> f{alpha.to<T>()};
    cpu::run<scalar_t, scalar_t, scalar_t>(f, out, so_inputs, /*grain=*/32768);
  };
  switch (common_dtype) {
    case at::ScalarType::Half: run.template operator()<at::Half>(); break;
    case at::ScalarType::BFloat16: run.template operator()<at::BFloat16>(); break;
    case at::ScalarType::Float: run.template operator()<float>(); break;
    case at::ScalarType::Double: run.template operator()<double>(); break;
    default: TORCH_CHECK(false, "_scaled_tanh_backward_self: no CPU kernel for dtype ", common_dtype);
  }
}

}  // namespace impl
}  // namespace structops
