// @generated from native_functions.yaml by codegen/templates/autograd.cpp.j2 (generator 0.6.0) — DO NOT EDIT.
// Regenerate with: python -m structgen.codegen (run by the CMake build)
// Autograd kernels of the differentiable structured ops (codegen/dest/autograd.py): a backward
// Node per functional overload, recorded as ATen's own kernels record theirs, with the formulas
// of the manifest's `derivatives:` (or derived from a pointwise formula) in apply().
#include <structgen/autograd.h>
#include <structgen/boxed.h>

#include <ATen/TensorOperators.h>
#include <ATen/ops/cumsum.h>
#include <ATen/ops/flip.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/copy.h>
#include <torch/csrc/autograd/VariableTypeUtils.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/library.h>

#include <array>
#include <memory>
#include <tuple>
#include <vector>

namespace fixture::ops {
using namespace ::structgen;  // the runtime's names, unqualified (codegen/project.py)
namespace {

using torch::autograd::variable_list;

// ---- scaled_tanh
struct scaled_tanh_backward final : torch::autograd::TraceableFunction {
  std::string name() const override { return "fixture_ops::scaled_tanh backward"; }
  void release_variables() override {
    std::lock_guard<std::mutex> lock(mutex_);
    self_.reset_data();
  }
  variable_list apply(variable_list&& grads) override {
  static const auto _scaled_tanh_backward_self_op = c10::Dispatcher::singleton()
      .findSchemaOrThrow("fixture_ops::_scaled_tanh_backward_self", "")
      .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Scalar&)>();
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
    const auto& alpha = structgen::autograd::view(alpha_);
    if (should_compute_output(0)) so_grads[0] = (at::GradMode::is_enabled() ? structgen::autograd::sum_to((grad * structgen::autograd::conj((at::Scalar(alpha) * (at::Scalar(int64_t(1)) - (at::tanh(self) * at::tanh(self)))))), self_meta) : structgen::autograd::sum_to(_scaled_tanh_backward_self_op.call(grad, self, alpha), self_meta));
    (void)grad_like;
    return so_grads;
  }
  torch::autograd::SavedVariable self_;
  structgen::autograd::TensorMeta self_meta;
  structgen::autograd::kept_t<const at::Scalar&> alpha_;
};

at::Tensor scaled_tanh_autograd(c10::DispatchKeySet so_ks, const at::Tensor& self, const at::Scalar& alpha) {
  static const auto scaled_tanh_op = c10::Dispatcher::singleton()
      .findSchemaOrThrow("fixture_ops::scaled_tanh", "")
      .typed<at::Tensor(const at::Tensor&, const at::Scalar&)>();
  decltype(structgen::autograd::make_node<scaled_tanh_backward>()) so_node;
  if (torch::autograd::compute_requires_grad(self)) {
    so_node = structgen::autograd::make_node<scaled_tanh_backward>();
    so_node->set_next_edges(torch::autograd::collect_next_edges(self));
    so_node->self_ = torch::autograd::SavedVariable(self, false);
    so_node->self_meta = structgen::autograd::TensorMeta(self);
    so_node->alpha_ = structgen::autograd::keep(alpha);
  }
  // Below autograd, also for the ops the kernels call inside (ATen's VariableType does the same).
  auto so_result = [&] {
    at::AutoDispatchBelowADInplaceOrView so_below;
    return scaled_tanh_op.redispatch(so_ks & c10::after_autograd_keyset, self, alpha);
  }();
  if (so_node) {
    if (torch::autograd::isDifferentiableType(so_result.scalar_type())) {
      torch::autograd::set_history(so_result, so_node);
    } else {
      so_node->add_input_metadata(torch::autograd::Node::undefined_input());
    }
  }
  // Forward mode (torch.func.jvp, torch.autograd.forward_ad): the output's tangent.
  if (structgen::autograd::any_tangent(self)) {
    const auto self_p = structgen::autograd::primal(self);
    const auto self_t = structgen::autograd::tangent(self);
    const at::Tensor& result = so_result;
    (void)result;
    const at::Tensor& grad_like = so_result;  // the dtype and device of constants
    (void)grad_like;
    structgen::autograd::set_tangent(so_result, ((at::Scalar(alpha) * (at::Scalar(int64_t(1)) - (at::tanh(self_p) * at::tanh(self_p)))) * self_t));
  }
  return so_result;
}

// ---- cumprod
struct cumprod_backward final : torch::autograd::TraceableFunction {
  std::string name() const override { return "fixture_ops::cumprod backward"; }
  void release_variables() override {
    std::lock_guard<std::mutex> lock(mutex_);
    self_.reset_data();
    result_.reset_data();
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
    const auto& dim = structgen::autograd::view(dim_);
    const auto result = result_.unpack(getptr());
    if (should_compute_output(0)) so_grads[0] = at::where(at::eq(self, at::Scalar(int64_t(0))), at::zeros_like(grad), (at::flip(at::cumsum(at::flip((grad * result), c10::IntArrayRef(dim)), structgen::autograd::as_int(dim)), c10::IntArrayRef(dim)) / self));
    (void)grad_like;
    return so_grads;
  }
  torch::autograd::SavedVariable self_;
  structgen::autograd::kept_t<int64_t> dim_;
  torch::autograd::SavedVariable result_;
};

at::Tensor cumprod_autograd(c10::DispatchKeySet so_ks, const at::Tensor& self, int64_t dim) {
  static const auto cumprod_op = c10::Dispatcher::singleton()
      .findSchemaOrThrow("fixture_ops::cumprod", "")
      .typed<at::Tensor(const at::Tensor&, int64_t)>();
  decltype(structgen::autograd::make_node<cumprod_backward>()) so_node;
  if (torch::autograd::compute_requires_grad(self)) {
    so_node = structgen::autograd::make_node<cumprod_backward>();
    so_node->set_next_edges(torch::autograd::collect_next_edges(self));
    so_node->self_ = torch::autograd::SavedVariable(self, false);
    so_node->dim_ = structgen::autograd::keep(dim);
  }
  // Below autograd, also for the ops the kernels call inside (ATen's VariableType does the same).
  auto so_result = [&] {
    at::AutoDispatchBelowADInplaceOrView so_below;
    return cumprod_op.redispatch(so_ks & c10::after_autograd_keyset, self, dim);
  }();
  if (so_node) {
    if (torch::autograd::isDifferentiableType(so_result.scalar_type())) {
      torch::autograd::set_history(so_result, so_node);
    } else {
      so_node->add_input_metadata(torch::autograd::Node::undefined_input());
    }
    so_node->result_ = torch::autograd::SavedVariable(so_result, true);
  }
  // Forward mode (torch.func.jvp, torch.autograd.forward_ad): the output's tangent.
  if (structgen::autograd::any_tangent(self)) {
    structgen::autograd::forward_not_implemented("fixture_ops::cumprod");
  }
  return so_result;
}

// ---- scaled_tanh.out
at::Tensor& scaled_tanh_out_autograd(c10::DispatchKeySet so_ks, const at::Tensor& self, const at::Scalar& alpha, at::Tensor& out) {
  static const auto scaled_tanh_out_op = c10::Dispatcher::singleton()
      .findSchemaOrThrow("fixture_ops::scaled_tanh", "out")
      .typed<at::Tensor&(const at::Tensor&, const at::Scalar&, at::Tensor&)>();
  structgen::autograd::check_out_not_differentiable(
      "scaled_tanh", torch::autograd::compute_requires_grad(self));
  decltype(auto) so_result = [&]() -> decltype(auto) {
    at::AutoDispatchBelowADInplaceOrView so_below;
    return scaled_tanh_out_op.redispatch(so_ks & c10::after_autograd_keyset, self, alpha, out);
  }();
  structgen::autograd::bump_version(out);
  return so_result;
}

// ---- cumprod.out
at::Tensor& cumprod_out_autograd(c10::DispatchKeySet so_ks, const at::Tensor& self, int64_t dim, at::Tensor& out) {
  static const auto cumprod_out_op = c10::Dispatcher::singleton()
      .findSchemaOrThrow("fixture_ops::cumprod", "out")
      .typed<at::Tensor&(const at::Tensor&, int64_t, at::Tensor&)>();
  structgen::autograd::check_out_not_differentiable(
      "cumprod", torch::autograd::compute_requires_grad(self));
  decltype(auto) so_result = [&]() -> decltype(auto) {
    at::AutoDispatchBelowADInplaceOrView so_below;
    return cumprod_out_op.redispatch(so_ks & c10::after_autograd_keyset, self, dim, out);
  }();
  structgen::autograd::bump_version(out);
  return so_result;
}

void boxed_scaled_tanh_autograd(const c10::OperatorHandle&, c10::DispatchKeySet so_ks, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 2);
  at::Tensor so_result = scaled_tanh_autograd(so_ks, so_args[0].toTensor(), so_args[1].toScalar());
  torch::jit::drop(*so_stack, 2);
  so_stack->emplace_back(std::move(so_result));
}

void boxed_cumprod_autograd(const c10::OperatorHandle&, c10::DispatchKeySet so_ks, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 2);
  at::Tensor so_result = cumprod_autograd(so_ks, so_args[0].toTensor(), so_args[1].toInt());
  torch::jit::drop(*so_stack, 2);
  so_stack->emplace_back(std::move(so_result));
}

void boxed_scaled_tanh_out_autograd(const c10::OperatorHandle&, c10::DispatchKeySet so_ks, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 3);
  at::Tensor so_result = scaled_tanh_out_autograd(so_ks, so_args[0].toTensor(), so_args[1].toScalar(), so_args[2].toTensor());
  torch::jit::drop(*so_stack, 3);
  so_stack->emplace_back(std::move(so_result));
}

void boxed_cumprod_out_autograd(const c10::OperatorHandle&, c10::DispatchKeySet so_ks, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 3);
  at::Tensor so_result = cumprod_out_autograd(so_ks, so_args[0].toTensor(), so_args[1].toInt(), so_args[2].toTensor());
  torch::jit::drop(*so_stack, 3);
  so_stack->emplace_back(std::move(so_result));
}

}  // namespace
}  // namespace fixture::ops

TORCH_LIBRARY_IMPL(fixture_ops, Autograd, m) {
  m.impl("scaled_tanh", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_scaled_tanh_autograd>());
  m.impl("cumprod", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_cumprod_autograd>());
  m.impl("scaled_tanh.out", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_scaled_tanh_out_autograd>());
  m.impl("cumprod.out", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_cumprod_out_autograd>());
}
