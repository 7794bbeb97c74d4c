// @generated from native_functions.yaml by codegen/templates/kernels_cpu.cpp.j2 (generator 0.6.0) — DO NOT EDIT.
// Regenerate with: python -m structgen.codegen (run by the CMake build)
// CPU kernels of one pointwise op and of its generated backward ops, from their formulas (a file
// per op: editing a formula recompiles that op alone). No torch header (the runtime's cpu/rows.h):
// the host glue (kernels_cpu_host_N.cpp) brings the inputs to the common dtype, fills a RowLaunch
// and calls a launcher here, which runs the formula through cpu::run for the launch's dtype.
#include <structgen/cpu/rows.h>

namespace fixture::ops::cpu_kernels {
using namespace ::structgen;  // the runtime's names, unqualified (codegen/project.py)

// scaled_act: the formula, over the compute type T.
template <typename T, int case_>
struct scaled_act_out_formula {
  using compute_type = T;  // the loops widen float16 operands to it in vectors (cpu/rows.h)
  static constexpr bool mode_is_relu = case_ / 1 % 3 == 0;
  static constexpr bool mode_is_tanh = case_ / 1 % 3 == 1;
  T alpha;
  SO_HD auto operator()(T self, T other) const { return (mode_is_relu ? pw::maximum(T(self + T(alpha * other)), T(0)) : pw::tanh(T(self + T(alpha * other)))); }
};

const char* scaled_act_out(const cpu::RowLaunch& p) {
  auto run = [&]<typename scalar_t>() -> const char* {
    using T = cpu::opmath_t<scalar_t>;
    return pw::with_case<3>((p.conditions[0] ? 0 : p.conditions[1] ? 1 : 2) * 1, [&]<int case_>() -> const char* {
      const scaled_act_out_formula<T, case_> f{pw::scalar_as<T>(p.scalars[0])};
      cpu::run<scalar_t, scalar_t, scalar_t>(f, p);
      return nullptr;
    });
  };
  switch (p.dtype) {
    case Dtype::Float16: return run.template operator()<c10::Half>();
    case Dtype::BFloat16: return run.template operator()<c10::BFloat16>();
    case Dtype::Float32: return run.template operator()<float>();
    case Dtype::Float64: return run.template operator()<double>();
    default: return "no CPU kernel for this dtype";
  }
}

}  // namespace fixture::ops::cpu_kernels
