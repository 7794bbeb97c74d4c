// @generated from native_functions.yaml by codegen/templates/meta.cpp.j2 (generator 0.6.0) — DO NOT EDIT.
// Regenerate with: python -m structgen.codegen (run by the CMake build)
// Meta functions generated from the `meta:` rules of the manifest (docs/rules.md): shape,
// dtype and layout of every output, all on SymInt. Both the Meta kernel and the real kernels
// call them, so shapes cannot drift between fake and real tensors.
#include <structgen/elementwise.h>
#include <structgen/rules.h>
#include <fixture/include/ops/bmm_out.h>
#include <fixture/include/ops/amax.h>
#include <fixture/include/ops/scaled_tanh.h>
#include <fixture/include/ops/cumprod.h>

namespace fixture::ops::meta {
using namespace ::structgen;  // the runtime's names, unqualified (codegen/project.py)

// bmm.out
bmm_out_meta bmm_out(const at::Tensor& self, const at::Tensor& mat2) {
  static constexpr std::string_view op = "bmm";
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
  rules::Dims out_shape = rules::join({rules::Dims{d_b}, rules::Dims{d_n}, rules::Dims{d_m}});
  const rules::Dtypes out_dtypes = rules::promote(op, {{"self", self}, {"mat2", mat2}}, {}, {}, rules::Promotion::DEFAULT);
  TORCH_CHECK(((d_k > c10::SymInt(0)) || (d_n == c10::SymInt(0))), op, ": rule '(k > 0) or (n == 0)' does not hold", " k=", d_k, " n=", d_n);
  rules::Dims out_strides;
  return {TensorSpec{std::move(out_shape), std::move(out_strides), out_dtypes.result}, out_dtypes.compute, out_dtypes.common};
}

// amax, amax.out
amax_meta amax(const at::Tensor& self, at::IntArrayRef dim, bool keepdim) {
  static constexpr std::string_view op = "amax";
  rules::Dims out_shape = rules::reduce(op, "self", self.sym_sizes(), rules::concrete(dim), keepdim);
  const rules::Dtypes out_dtypes = rules::reduction(op, "self", self.scalar_type(), std::nullopt, rules::Reduction::SAME);
  rules::Dims out_strides;
  auto reduced_dims_value = rules::reduced_dims(op, "self", self.dim(), rules::concrete(dim));
  auto all_dims_value = (c10::SymInt(static_cast<int64_t>(rules::sym(dim).size())) == c10::SymInt(0));
  return {TensorSpec{std::move(out_shape), std::move(out_strides), out_dtypes.result}, std::move(reduced_dims_value), std::move(all_dims_value), out_dtypes.compute, out_dtypes.common};
}

// scaled_tanh, scaled_tanh.out
scaled_tanh_meta scaled_tanh(const at::Tensor& self, const at::Scalar& alpha) {
  static constexpr std::string_view op = "scaled_tanh";
  rules::Dims out_shape = rules::join({rules::Dims(rules::sizes(self))});
  const rules::Dtypes out_dtypes = rules::promote(op, {{"self", self}}, {}, {}, rules::Promotion::DEFAULT);
  rules::check_allowed_promoted(op, {{"self", self}}, out_dtypes.promoted, rules::bit(at::kHalf) | rules::bit(at::kBFloat16) | rules::bit(at::kFloat) | rules::bit(at::kDouble), "float16, bfloat16, float32, float64");
  rules::Dims out_strides = elementwise_strides(out_shape, {{"self", self}});
  return {TensorSpec{std::move(out_shape), std::move(out_strides), out_dtypes.result}, out_dtypes.compute, out_dtypes.common};
}

// cumprod, cumprod.out
cumprod_meta cumprod(const at::Tensor& self, int64_t dim) {
  static constexpr std::string_view op = "cumprod";
  rules::Dims out_shape = rules::join({rules::Dims(rules::sizes(self))});
  const rules::Dtypes out_dtypes = rules::promote(op, {{"self", self}}, {}, {}, rules::Promotion::DEFAULT);
  rules::Dims out_strides;
  auto scan_dim_value = rules::reduced_dims(op, "self", self.dim(), rules::one_dim(c10::SymInt(dim)));
  return {TensorSpec{std::move(out_shape), std::move(out_strides), out_dtypes.result}, std::move(scan_dim_value), out_dtypes.compute, out_dtypes.common};
}

}  // namespace fixture::ops::meta
