// @generated from native_functions.yaml by codegen/templates/multi_kernel.cpp.j2 (generator 0.6.0) — DO NOT EDIT.
// Regenerate with: python -m structgen.codegen (run by the CMake build)
// CPU impls of the ops in this shard that list several CPU kernels (`kernels:` in the
// manifest): each computes its tuning key and which variants are eligible, and runs the variant
// structgen::autotune::choose picks (structgen/autotune.h).
#include <structgen/autotune.h>
#include <structgen/rules.h>
#include <fixture/include/ops/bmm_out.h>

#include <array>
#include <string_view>

// Each variant's source hash, defined by the build (cmake/autotune_build.cmake hashes the files the
// manifest's `kernels: sources:` name), so editing a kernel recompiles that one file, not this one.
namespace structgen::autotune::source_hash {
extern const char bmm_out_cpu__loop[];
extern const char bmm_out_cpu__blas[];
}  // namespace structgen::autotune::source_hash

namespace fixture::ops::impl {
using namespace ::structgen;  // the runtime's names, unqualified (codegen/project.py)

namespace {
const autotune::OpKernels& bmm_out_cpu_variants() {
  static const autotune::OpKernels kernels{"bmm.out", c10::DeviceType::CPU, "[bucket_pow2(n * m), contiguous(self)]", {
      {"loop", autotune::source_hash::bmm_out_cpu__loop},
      {"blas", autotune::source_hash::bmm_out_cpu__blas},
  }};
  return kernels;
}
}  // namespace

void bmm_out_cpu(const at::Tensor& self, const at::Tensor& mat2, at::ScalarType compute_dtype, const at::Tensor& out) {
  [[maybe_unused]] constexpr std::string_view op = "bmm";
  // self: [b, n, k] (matched by the meta function)
  c10::SymInt d_b;
  c10::SymInt d_n;
  c10::SymInt d_k;
  {
    const auto so_sizes = self.sym_sizes();
    int64_t at = 0;
    d_b = so_sizes[at];
    at += 1;
    d_n = so_sizes[at];
    at += 1;
    d_k = so_sizes[at];
    at += 1;
  }
  // mat2: [b, k, m] (matched by the meta function)
  c10::SymInt d_m;
  {
    const auto so_sizes = mat2.sym_sizes();
    int64_t at = 0;
    at += 1;
    at += 1;
    d_m = so_sizes[at];
    at += 1;
  }
  const autotune::Key so_key{(rules::bucket_pow2((d_n * d_m))).expect_int(), static_cast<int64_t>(self.is_contiguous())};
  const std::array<bool, 2> eligible{
      true,  // loop
      ((d_k >= c10::SymInt(8))) && ((rules::bit(out.scalar_type()) & (rules::bit(at::kHalf) | rules::bit(at::kBFloat16) | rules::bit(at::kFloat) | rules::bit(at::kDouble))) != 0),  // blas
  };
  auto run = [&](int variant, const at::Tensor& out) {
    switch (variant) {
      case 0: bmm_out_cpu_loop(self, mat2, compute_dtype, out); return;
      case 1: bmm_out_cpu_blas(self, mat2, compute_dtype, out); return;
    }
  };
  const int pick = autotune::choose(bmm_out_cpu_variants(), out.device(), out.scalar_type(), so_key, eligible,
                                    [&](int variant) {
    const at::Tensor scratch_out = autotune::scratch_like(out);
    return autotune::measure(out.device(), [&] { run(variant, scratch_out); });
  });
  run(pick, out);
}

}  // namespace fixture::ops::impl
