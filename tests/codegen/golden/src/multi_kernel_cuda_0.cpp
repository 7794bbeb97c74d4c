// @generated from native_functions.yaml by codegen/templates/multi_kernel.cpp.j2 (generator 0.6.0) — DO NOT EDIT.
// Regenerate with: python -m structgen.codegen (run by the CMake build)
// CUDA impls of the ops in this shard that list several CUDA kernels (`kernels:` in the
// manifest): each computes its tuning key and which variants are eligible, and runs the variant
// structgen::autotune::choose picks (structgen/autotune.h).
#include <structgen/autotune.h>
#include <structgen/rules.h>
#include <fixture/include/ops/scaled_act.h>

#include <array>
#include <string_view>

// Each variant's source hash, defined by the build (cmake/autotune_build.cmake hashes the files the
// manifest's `kernels: sources:` name), so editing a kernel recompiles that one file, not this one.
namespace structgen::autotune::source_hash {
extern const char scaled_act_out_cuda__wide[];
extern const char scaled_act_out_cuda__narrow[];
}  // namespace structgen::autotune::source_hash

namespace fixture::ops::impl {
using namespace ::structgen;  // the runtime's names, unqualified (codegen/project.py)

namespace {
const autotune::OpKernels& scaled_act_out_cuda_variants() {
  static const autotune::OpKernels kernels{"scaled_act.out", c10::DeviceType::CUDA, "[bucket_pow2(numel(out))]", {
      {"wide", autotune::source_hash::scaled_act_out_cuda__wide},
      {"narrow", autotune::source_hash::scaled_act_out_cuda__narrow},
  }};
  return kernels;
}
}  // namespace

void scaled_act_out_cuda(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha, c10::string_view mode, at::ScalarType common_dtype, const at::Tensor& out) {
  [[maybe_unused]] constexpr std::string_view op = "scaled_act";
  const autotune::Key so_key{(rules::bucket_pow2(c10::SymInt(out.numel()))).expect_int()};
  const std::array<bool, 2> eligible{
      true,  // wide
      true,  // narrow
  };
  auto run = [&](int variant, const at::Tensor& out) {
    switch (variant) {
      case 0: scaled_act_out_cuda__wide(self, other, alpha, mode, common_dtype, out); return;
      case 1: scaled_act_out_cuda__narrow(self, other, alpha, mode, common_dtype, out); return;
    }
  };
  const int pick = autotune::choose(scaled_act_out_cuda_variants(), out.device(), out.scalar_type(), so_key, eligible,
                                    [&](int variant) {
    const at::Tensor scratch_out = autotune::scratch_like(out);
    return autotune::measure(out.device(), [&] { run(variant, scratch_out); });
  });
  run(pick, out);
}

}  // namespace fixture::ops::impl
