// @generated from native_functions.yaml by codegen/templates/multi_kernel.cpp.j2 — DO NOT EDIT.
// Regenerate with: python -m codegen (run by the CMake build)
// CPU impls of the ops in this shard that list several CPU kernels (`kernels:` in the
// manifest): each computes its tuning key and which variants are eligible, and runs the variant
// structops::autotune::choose picks (csrc/include/structops/autotune.h).
#include <structops/autotune.h>
#include <structops/rules.h>
#include <structops/ops/bmm_out.h>

#include <array>
#include <string_view>

// Each variant's source hash, defined by the build (cmake/autotune_build.cmake hashes the files the
// manifest's `kernels: sources:` name), so editing a kernel recompiles that one file, not this one.
namespace structops::autotune::source_hash {
extern const char bmm_out_cpu__loop[];
extern const char bmm_out_cpu__blas[];
}  // namespace structops::autotune::source_hash

namespace structops::impl {

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
  // self: [b, n, k]
  c10::SymInt d_b;
  rules::Site d_b_site;
  c10::SymInt d_n;
  rules::Site d_n_site;
  c10::SymInt d_k;
  rules::Site d_k_site;
  {
    const auto so_sizes = self.sym_sizes();
    const int64_t so_rank = so_sizes.size();
    rules::check_rank(op, "self", -1, "[b, n, k]", so_rank, 3, /*at_least=*/false);
    int64_t at = 0;
    d_b = so_sizes[at];
    d_b_site = rules::Site{"self", -1, at};
    at += 1;
    d_n = so_sizes[at];
    d_n_site = rules::Site{"self", -1, at};
    at += 1;
    d_k = so_sizes[at];
    d_k_site = rules::Site{"self", -1, at};
    at += 1;
  }
  // mat2: [b, k, m]
  c10::SymInt d_m;
  rules::Site d_m_site;
  {
    const auto so_sizes = mat2.sym_sizes();
    const int64_t so_rank = so_sizes.size();
    rules::check_rank(op, "mat2", -1, "[b, k, m]", so_rank, 3, /*at_least=*/false);
    int64_t at = 0;
    rules::check_same(op, d_b_site, d_b, rules::Site{"mat2", -1, at}, so_sizes[at], "b");
    at += 1;
    rules::check_same(op, d_k_site, d_k, rules::Site{"mat2", -1, at}, so_sizes[at], "k");
    at += 1;
    d_m = so_sizes[at];
    d_m_site = rules::Site{"mat2", -1, at};
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

}  // namespace structops::impl
