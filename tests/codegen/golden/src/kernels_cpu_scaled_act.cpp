// @generated from native_functions.yaml by codegen/templates/kernels_cpu.cpp.j2 — DO NOT EDIT.
// Regenerate with: python -m codegen (run by the CMake build)
// CPU kernels of one pointwise op and of its generated backward ops, from their formulas (a file
// per op: editing a formula recompiles that op alone). An impl brings promoted inputs to the
// common dtype and runs the formula through cpu::run (csrc/include/structops/cpu/pointwise.h)
// for the dtype it dispatches to.
#include <structops/cpu/pointwise.h>
#include <structops/ops/scaled_act.h>

#include <ATen/OpMathType.h>
#include <c10/util/Exception.h>


namespace structops {
namespace {

// scaled_act: the formula, over the compute type T.
template <typename T>
struct scaled_act_out_formula {
  bool mode_is_relu;
  bool mode_is_tanh;
  T alpha;
  SO_HD auto operator()(T self, T other) const { return (mode_is_relu ? pw::maximum(T(self + T(alpha * other)), T(0)) : pw::tanh(T(self + T(alpha * other)))); }
};


}  // namespace

namespace impl {

void scaled_act_out_cpu(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha, c10::string_view mode, at::ScalarType common_dtype, const at::Tensor& out) {
  const bool mode_is_relu = mode == "relu";
  const bool mode_is_tanh = mode == "tanh";
  const std::array<at::Tensor, 2> so_inputs{
      cpu::operand(self, common_dtype, out.device()),
      cpu::operand(other, common_dtype, out.device()),
  };
  auto run = [&]<typename scalar_t>() {
    using T = at::opmath_type<scalar_t>;
    const scaled_act_out_formula<T> f{mode_is_relu, mode_is_tanh, alpha.to<T>()};
    cpu::run<scalar_t, scalar_t, scalar_t>(f, out, so_inputs, /*grain=*/32768);
  };
  switch (common_dtype) {
    case at::ScalarType::Half: run.template operator()<at::Half>(); break;
    case at::ScalarType::BFloat16: run.template operator()<at::BFloat16>(); break;
    case at::ScalarType::Float: run.template operator()<float>(); break;
    case at::ScalarType::Double: run.template operator()<double>(); break;
    default: TORCH_CHECK(false, "scaled_act: no CPU kernel for dtype ", common_dtype);
  }
}

}  // namespace impl
}  // namespace structops
