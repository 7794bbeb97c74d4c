// @generated from native_functions.yaml by codegen/templates/meta.cpp.j2 (generator 0.6.0) — DO NOT EDIT.
// Regenerate with: python -m structgen.codegen (run by the CMake build)
// Meta functions generated from the `meta:` rules of the manifest (docs/rules.md): shape,
// dtype and layout of every output, all on SymInt. Both the Meta kernel and the real kernels
// call them, so shapes cannot drift between fake and real tensors.
#include <structgen/elementwise.h>
#include <structgen/rules.h>
#include <fixture/include/ops/add_Tensor.h>
#include <fixture/include/ops/scaled_act.h>
#include <fixture/include/ops/_scaled_tanh_backward_self.h>
#include <fixture/include/ops/tril.h>

namespace fixture::ops::meta {
using namespace ::structgen;  // the runtime's names, unqualified (codegen/project.py)

// add.Tensor, add_.Tensor, add.out
add_Tensor_meta add_Tensor(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  static constexpr std::string_view op = "add";
  rules::Dims out_shape = rules::broadcast(op, {{"self", self.sym_sizes()}, {"other", other.sym_sizes()}});
  const rules::Dtypes out_dtypes = rules::promote(op, {{"self", self}, {"other", other}}, {}, {}, rules::Promotion::DEFAULT);
  rules::check_alpha(op, out_dtypes.result, alpha);
  rules::Dims out_strides = elementwise_strides(out_shape, {{"self", self}, {"other", other}});
  return {TensorSpec{std::move(out_shape), std::move(out_strides), out_dtypes.result}, out_dtypes.compute, out_dtypes.common};
}

// scaled_act, scaled_act.out
scaled_act_meta scaled_act(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha, c10::string_view mode) {
  static constexpr std::string_view op = "scaled_act";
  rules::Dims out_shape = rules::broadcast(op, {{"self", self.sym_sizes()}, {"other", other.sym_sizes()}});
  const rules::Dtypes out_dtypes = rules::promote(op, {{"self", self}, {"other", other}}, {}, {}, rules::Promotion::INT_TO_FLOAT);
  rules::check_allowed_promoted(op, {{"self", self}, {"other", other}}, out_dtypes.promoted, rules::bit(at::kHalf) | rules::bit(at::kBFloat16) | rules::bit(at::kFloat) | rules::bit(at::kDouble) | rules::bit(at::kByte) | rules::bit(at::kChar) | rules::bit(at::kShort) | rules::bit(at::kInt) | rules::bit(at::kLong) | rules::bit(at::kBool), "float16, bfloat16, float32, float64, uint8, int8, int16, int32, int64, bool");
  rules::Dims out_strides = elementwise_strides(out_shape, {{"self", self}, {"other", other}});
  TORCH_CHECK(mode == "relu" || mode == "tanh", op, ": mode must be one of 'relu', 'tanh', got '", mode, "'");
  return {TensorSpec{std::move(out_shape), std::move(out_strides), out_dtypes.result}, out_dtypes.compute, out_dtypes.common};
}

// _scaled_tanh_backward_self, _scaled_tanh_backward_self.out
_scaled_tanh_backward_self_meta _scaled_tanh_backward_self(const at::Tensor& grad, const at::Tensor& self, const at::Scalar& alpha) {
  static constexpr std::string_view op = "_scaled_tanh_backward_self";
  rules::Dims out_shape = rules::broadcast(op, {{"grad", grad.sym_sizes()}, {"self", self.sym_sizes()}});
  const rules::Dtypes out_dtypes = rules::promote(op, {{"grad", grad}, {"self", self}}, {}, {}, rules::Promotion::DEFAULT);
  rules::check_allowed(op, "grad", grad.scalar_type(), rules::bit(at::kHalf) | rules::bit(at::kBFloat16) | rules::bit(at::kFloat) | rules::bit(at::kDouble), "float16, bfloat16, float32, float64");
  rules::check_allowed(op, "self", self.scalar_type(), rules::bit(at::kHalf) | rules::bit(at::kBFloat16) | rules::bit(at::kFloat) | rules::bit(at::kDouble), "float16, bfloat16, float32, float64");
  rules::Dims out_strides = elementwise_strides(out_shape, {{"grad", grad}, {"self", self}});
  return {TensorSpec{std::move(out_shape), std::move(out_strides), out_dtypes.result}, out_dtypes.compute, out_dtypes.common};
}

// tril, tril.out
tril_meta tril(const at::Tensor& self, c10::SymInt diagonal) {
  static constexpr std::string_view op = "tril";
  // self: [*batch, m, n]
  rules::Dims d_batch;
  rules::Site d_batch_site;
  c10::SymInt d_m;
  rules::Site d_m_site;
  c10::SymInt d_n;
  rules::Site d_n_site;
  {
    const auto so_sizes = self.sym_sizes();
    const int64_t so_rank = so_sizes.size();
    rules::check_rank(op, "self", -1, "[*batch, m, n]", so_rank, 2, /*at_least=*/true);
    const int64_t len_batch = so_rank - (2);
    int64_t at = 0;
    d_batch = rules::Dims(so_sizes.begin() + at, so_sizes.begin() + at + len_batch);
    d_batch_site = rules::Site{"self", -1, at, at + len_batch, true};
    at += len_batch;
    d_m = so_sizes[at];
    d_m_site = rules::Site{"self", -1, at - so_rank};
    at += 1;
    d_n = so_sizes[at];
    d_n_site = rules::Site{"self", -1, at - so_rank};
    at += 1;
  }
  rules::Dims out_shape = rules::join({rules::Dims(d_batch), rules::Dims{d_m}, rules::Dims{d_n}});
  const rules::Dtypes out_dtypes = rules::promote(op, {{"self", self}}, {}, {}, rules::Promotion::DEFAULT);
  rules::Dims out_strides;
  return {TensorSpec{std::move(out_shape), std::move(out_strides), out_dtypes.result}, out_dtypes.compute, out_dtypes.common};
}

}  // namespace fixture::ops::meta
