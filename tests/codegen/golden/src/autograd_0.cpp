// @generated from native_functions.yaml by codegen/templates/autograd.cpp.j2 — DO NOT EDIT.
// Regenerate with: python -m codegen (run by the CMake build)
// Autograd kernels of the differentiable structured ops (codegen/dest/autograd.py): a backward
// Node per functional overload, recorded as ATen's own kernels record theirs, with the formulas
// of the manifest's `derivatives:` (or derived from a pointwise formula) in apply().
#include <structops/autograd.h>

#include <ATen/TensorOperators.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/copy.h>
#include <torch/csrc/autograd/VariableTypeUtils.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/library.h>

#include <array>
#include <memory>
#include <tuple>
#include <vector>

namespace structops {
namespace {

using torch::autograd::variable_list;

// ---- scaled_act
struct scaled_act_backward final : torch::autograd::TraceableFunction {
  std::string name() const override { return "structops::scaled_act backward"; }
  void release_variables() override {
    std::lock_guard<std::mutex> lock(mutex_);
    self_.reset_data();
    other_.reset_data();
  }
  variable_list apply(variable_list&& grads) override {
    std::lock_guard<std::mutex> lock(mutex_);
    variable_list so_grads(num_outputs());
    const at::Tensor& grad = grads[0];
    const at::Tensor* so_like = nullptr;  // a defined grad: the dtype and device of constants
    for (const auto& g : grads) {
      if (g.defined()) {
        so_like = &g;
        break;
      }
    }
    if (so_like == nullptr) return so_grads;  // no output's gradient reaches this node
    const at::Tensor& grad_like = *so_like;
    const auto self = self_.unpack();
    const auto other = other_.unpack();
    const auto& alpha = structops::autograd::view(alpha_);
    const auto& mode = structops::autograd::view(mode_);
    if (should_compute_output(0)) so_grads[0] = structops::autograd::sum_to((grad * structops::autograd::conj((structops::autograd::is(mode, "relu") ? at::where(at::gt((self + (at::Scalar(alpha) * other)), at::Scalar(int64_t(0))), at::Scalar(int64_t(1)), at::where(at::lt((self + (at::Scalar(alpha) * other)), at::Scalar(int64_t(0))), at::Scalar(int64_t(0)), at::where(at::eq((self + (at::Scalar(alpha) * other)), at::Scalar(int64_t(0))), at::Scalar(0.5), at::Scalar(int64_t(1))))) : (at::Scalar(int64_t(1)) - (at::tanh((self + (at::Scalar(alpha) * other))) * at::tanh((self + (at::Scalar(alpha) * other)))))))), self_meta);
    if (should_compute_output(1)) so_grads[1] = structops::autograd::sum_to((grad * structops::autograd::conj((structops::autograd::is(mode, "relu") ? at::where(at::gt((self + (at::Scalar(alpha) * other)), at::Scalar(int64_t(0))), at::Scalar(alpha), at::where(at::lt((self + (at::Scalar(alpha) * other)), at::Scalar(int64_t(0))), at::Scalar(int64_t(0)), at::where(at::eq((self + (at::Scalar(alpha) * other)), at::Scalar(int64_t(0))), at::Scalar(structops::autograd::scalar_mul(0.5, alpha)), at::Scalar(alpha)))) : ((at::Scalar(int64_t(1)) - (at::tanh((self + (at::Scalar(alpha) * other))) * at::tanh((self + (at::Scalar(alpha) * other))))) * at::Scalar(alpha))))), other_meta);
    (void)grad_like;
    return so_grads;
  }
  torch::autograd::SavedVariable self_;
  structops::autograd::TensorMeta self_meta;
  torch::autograd::SavedVariable other_;
  structops::autograd::TensorMeta other_meta;
  structops::autograd::kept_t<const at::Scalar&> alpha_;
  structops::autograd::kept_t<c10::string_view> mode_;
};

at::Tensor scaled_act_autograd(c10::DispatchKeySet so_ks, const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha, c10::string_view mode) {
  static const auto scaled_act_op = c10::Dispatcher::singleton()
      .findSchemaOrThrow("structops::scaled_act", "")
      .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Scalar&, c10::string_view)>();
  decltype(structops::autograd::make_node<scaled_act_backward>()) so_node;
  if (torch::autograd::compute_requires_grad(self, other)) {
    so_node = structops::autograd::make_node<scaled_act_backward>();
    so_node->set_next_edges(torch::autograd::collect_next_edges(self, other));
    so_node->self_ = torch::autograd::SavedVariable(self, false);
    so_node->self_meta = structops::autograd::TensorMeta(self);
    so_node->other_ = torch::autograd::SavedVariable(other, false);
    so_node->other_meta = structops::autograd::TensorMeta(other);
    so_node->alpha_ = structops::autograd::keep(alpha);
    so_node->mode_ = structops::autograd::keep(mode);
  }
  // Below autograd, also for the ops the kernels call inside (ATen's VariableType does the same).
  auto so_result = [&] {
    at::AutoDispatchBelowADInplaceOrView so_below;
    return scaled_act_op.redispatch(so_ks & c10::after_autograd_keyset, self, other, alpha, mode);
  }();
  if (so_node) {
    if (torch::autograd::isDifferentiableType(so_result.scalar_type())) {
      torch::autograd::set_history(so_result, so_node);
    } else {
      so_node->add_input_metadata(torch::autograd::Node::undefined_input());
    }
  }
  return so_result;
}

// ---- scaled_act.out
at::Tensor& scaled_act_out_autograd(c10::DispatchKeySet so_ks, const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha, c10::string_view mode, at::Tensor& out) {
  static const auto scaled_act_out_op = c10::Dispatcher::singleton()
      .findSchemaOrThrow("structops::scaled_act", "out")
      .typed<at::Tensor&(const at::Tensor&, const at::Tensor&, const at::Scalar&, c10::string_view, at::Tensor&)>();
  structops::autograd::check_out_not_differentiable(
      "scaled_act", torch::autograd::compute_requires_grad(self, other));
  decltype(auto) so_result = [&]() -> decltype(auto) {
    at::AutoDispatchBelowADInplaceOrView so_below;
    return scaled_act_out_op.redispatch(so_ks & c10::after_autograd_keyset, self, other, alpha, mode, out);
  }();
  structops::autograd::bump_version(out);
  return so_result;
}

}  // namespace
}  // namespace structops

TORCH_LIBRARY_IMPL(structops, Autograd, m) {
  m.impl("scaled_act", TORCH_FN(structops::scaled_act_autograd));
  m.impl("scaled_act.out", TORCH_FN(structops::scaled_act_out_autograd));
}
