// @generated from native_functions.yaml by codegen/templates/kernels_cuda.cu.j2 (generator 0.6.0) — DO NOT EDIT.
// Regenerate with: python -m structgen.codegen (run by the CMake build)
// CUDA kernels of one pointwise op and of its generated backward ops, from their formulas (a
// file per op, so nvcc's compile check redoes only an edited op). Device code only: no torch
// header (ARCHITECTURE decision 6); the host glue (kernels_cuda_host_<op>.cpp) fills a
// PointwiseLaunch and calls the launcher here.
#include <structgen/cuda/pointwise.cuh>

namespace fixture::ops::cuda_kernels {
using namespace ::structgen;  // the runtime's names, unqualified (codegen/project.py)
using namespace ::structgen::cuda_kernels;  // its launchers

// scaled_act: the formula, over the compute type T.
template <typename T, int case_>
struct scaled_act_out_formula {
  using compute_type = T;  // the loops widen float16 operands to it in vectors (cpu/rows.h)
  static constexpr bool mode_is_relu = case_ / 1 % 3 == 0;
  static constexpr bool mode_is_tanh = case_ / 1 % 3 == 1;
  T alpha;
  SO_HD auto operator()(T self, T other) const { return (mode_is_relu ? pw::maximum(T(self + T(alpha * other)), T(0)) : pw::tanh(T(self + T(alpha * other)))); }
};

const char* scaled_act_out__wide(const PointwiseLaunch& p) {
  auto run = [&]<typename scalar_t>() -> const char* {
    using T = opmath_t<scalar_t>;
    return pw::with_case<3>((p.conditions[0] ? 0 : p.conditions[1] ? 1 : 2) * 1, [&]<int case_>() -> const char* {
      const scaled_act_out_formula<T, case_> f{pw::scalar_as<T>(p.scalars[0])};
      return launch<512, 1, scalar_t, scalar_t, scalar_t>(f, p);
    });
  };
  switch (p.dtype) {
    case Dtype::Float16: return run.template operator()<__half>();
    case Dtype::BFloat16: return run.template operator()<__nv_bfloat16>();
    case Dtype::Float32: return run.template operator()<float>();
    case Dtype::Float64: return run.template operator()<double>();
    default: return "no CUDA kernel for this dtype";
  }
}
const char* scaled_act_out__narrow(const PointwiseLaunch& p) {
  auto run = [&]<typename scalar_t>() -> const char* {
    using T = opmath_t<scalar_t>;
    return pw::with_case<3>((p.conditions[0] ? 0 : p.conditions[1] ? 1 : 2) * 1, [&]<int case_>() -> const char* {
      const scaled_act_out_formula<T, case_> f{pw::scalar_as<T>(p.scalars[0])};
      return launch<128, 4, scalar_t, scalar_t, scalar_t>(f, p);
    });
  };
  switch (p.dtype) {
    case Dtype::Float16: return run.template operator()<__half>();
    case Dtype::BFloat16: return run.template operator()<__nv_bfloat16>();
    case Dtype::Float32: return run.template operator()<float>();
    case Dtype::Float64: return run.template operator()<double>();
    default: return "no CUDA kernel for this dtype";
  }
}

}  // namespace fixture::ops::cuda_kernels
