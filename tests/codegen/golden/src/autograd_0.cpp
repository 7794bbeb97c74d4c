// @generated from native_functions.yaml by codegen/templates/autograd.cpp.j2 (generator 0.6.0) — DO NOT EDIT.
// Regenerate with: python -m structgen.codegen (run by the CMake build)
// Autograd kernels of the differentiable structured ops (codegen/dest/autograd.py): a backward
// Node per functional overload, recorded as ATen's own kernels record theirs, with the formulas
// of the manifest's `derivatives:` (or derived from a pointwise formula) in apply().
#include <structgen/autograd.h>
#include <structgen/boxed.h>

#include <ATen/TensorOperators.h>
#include <ATen/ops/tril.h>
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

// ---- add.Tensor
struct add_Tensor_backward final : torch::autograd::TraceableFunction {
  std::string name() const override { return "fixture_ops::add.Tensor backward"; }
  void release_variables() override {
    std::lock_guard<std::mutex> lock(mutex_);
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
    const auto& alpha = structgen::autograd::view(alpha_);
    if (should_compute_output(0)) so_grads[0] = structgen::autograd::sum_to(grad, self_meta);
    if (should_compute_output(1)) so_grads[1] = structgen::autograd::sum_to((grad * at::Scalar(structgen::autograd::conj(alpha))), other_meta);
    (void)grad_like;
    return so_grads;
  }
  structgen::autograd::TensorMeta self_meta;
  structgen::autograd::TensorMeta other_meta;
  structgen::autograd::kept_t<const at::Scalar&> alpha_;
};

at::Tensor add_Tensor_autograd(c10::DispatchKeySet so_ks, const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  static const auto add_Tensor_op = c10::Dispatcher::singleton()
      .findSchemaOrThrow("fixture_ops::add", "Tensor")
      .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Scalar&)>();
  decltype(structgen::autograd::make_node<add_Tensor_backward>()) so_node;
  if (torch::autograd::compute_requires_grad(self, other)) {
    so_node = structgen::autograd::make_node<add_Tensor_backward>();
    so_node->set_next_edges(torch::autograd::collect_next_edges(self, other));
    so_node->self_meta = structgen::autograd::TensorMeta(self);
    so_node->other_meta = structgen::autograd::TensorMeta(other);
    so_node->alpha_ = structgen::autograd::keep(alpha);
  }
  // Below autograd, also for the ops the kernels call inside (ATen's VariableType does the same).
  auto so_result = [&] {
    at::AutoDispatchBelowADInplaceOrView so_below;
    return add_Tensor_op.redispatch(so_ks & c10::after_autograd_keyset, self, other, alpha);
  }();
  if (so_node) {
    if (torch::autograd::isDifferentiableType(so_result.scalar_type())) {
      torch::autograd::set_history(so_result, so_node);
    } else {
      so_node->add_input_metadata(torch::autograd::Node::undefined_input());
    }
  }
  // Forward mode (torch.func.jvp, torch.autograd.forward_ad): the output's tangent.
  if (structgen::autograd::any_tangent(self, other)) {
    structgen::autograd::forward_not_implemented("fixture_ops::add.Tensor");
  }
  return so_result;
}

// ---- tril
struct tril_backward final : torch::autograd::TraceableFunction {
  std::string name() const override { return "fixture_ops::tril backward"; }
  void release_variables() override {
    std::lock_guard<std::mutex> lock(mutex_);
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
    const auto& diagonal = structgen::autograd::view(diagonal_);
    if (should_compute_output(0)) so_grads[0] = at::tril_symint(grad, diagonal);
    (void)grad_like;
    return so_grads;
  }
  structgen::autograd::kept_t<c10::SymInt> diagonal_;
};

at::Tensor tril_autograd(c10::DispatchKeySet so_ks, const at::Tensor& self, c10::SymInt diagonal) {
  static const auto tril_op = c10::Dispatcher::singleton()
      .findSchemaOrThrow("fixture_ops::tril", "")
      .typed<at::Tensor(const at::Tensor&, c10::SymInt)>();
  decltype(structgen::autograd::make_node<tril_backward>()) so_node;
  if (torch::autograd::compute_requires_grad(self)) {
    so_node = structgen::autograd::make_node<tril_backward>();
    so_node->set_next_edges(torch::autograd::collect_next_edges(self));
    so_node->diagonal_ = structgen::autograd::keep(diagonal);
  }
  // Below autograd, also for the ops the kernels call inside (ATen's VariableType does the same).
  auto so_result = [&] {
    at::AutoDispatchBelowADInplaceOrView so_below;
    return tril_op.redispatch(so_ks & c10::after_autograd_keyset, self, diagonal);
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
    const auto self_t = structgen::autograd::tangent(self);
    const at::Tensor& result = so_result;
    (void)result;
    const at::Tensor& grad_like = so_result;  // the dtype and device of constants
    (void)grad_like;
    structgen::autograd::set_tangent(so_result, tril_op.call(self_t, diagonal));
  }
  return so_result;
}

// ---- add_.Tensor
at::Tensor& add__Tensor_autograd(c10::DispatchKeySet so_ks, at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  static const auto add__Tensor_op = c10::Dispatcher::singleton()
      .findSchemaOrThrow("fixture_ops::add_", "Tensor")
      .typed<at::Tensor&(at::Tensor&, const at::Tensor&, const at::Scalar&)>();
  if (torch::autograd::compute_requires_grad(self, other)) {
    {
      // What the inplace call would refuse (a result self cannot hold), refused the same way.
      at::AutoDispatchBelowADInplaceOrView so_guard;
      auto so_meta_self = structgen::autograd::on_meta(self);
      auto so_meta_other = structgen::autograd::on_meta(other);
      add__Tensor_op.call(so_meta_self, so_meta_other, alpha);
    }
    // The functional's result copied into self: copy_ refuses a leaf that requires grad, bumps
    // self's version (a saved self modified in place is caught) and rebases its history.
    const at::Tensor so_result = add_Tensor_autograd(so_ks, self, other, alpha);
    self.copy_(so_result);
    return self;
  }
  decltype(auto) so_result = [&]() -> decltype(auto) {
    at::AutoDispatchBelowADInplaceOrView so_below;
    return add__Tensor_op.redispatch(so_ks & c10::after_autograd_keyset, self, other, alpha);
  }();
  structgen::autograd::bump_version(self);
  return so_result;
}

// ---- add.out
at::Tensor& add_out_autograd(c10::DispatchKeySet so_ks, const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha, at::Tensor& out) {
  static const auto add_out_op = c10::Dispatcher::singleton()
      .findSchemaOrThrow("fixture_ops::add", "out")
      .typed<at::Tensor&(const at::Tensor&, const at::Tensor&, const at::Scalar&, at::Tensor&)>();
  structgen::autograd::check_out_not_differentiable(
      "add", torch::autograd::compute_requires_grad(self, other));
  decltype(auto) so_result = [&]() -> decltype(auto) {
    at::AutoDispatchBelowADInplaceOrView so_below;
    return add_out_op.redispatch(so_ks & c10::after_autograd_keyset, self, other, alpha, out);
  }();
  structgen::autograd::bump_version(out);
  return so_result;
}

// ---- tril.out
at::Tensor& tril_out_autograd(c10::DispatchKeySet so_ks, const at::Tensor& self, c10::SymInt diagonal, at::Tensor& out) {
  static const auto tril_out_op = c10::Dispatcher::singleton()
      .findSchemaOrThrow("fixture_ops::tril", "out")
      .typed<at::Tensor&(const at::Tensor&, c10::SymInt, at::Tensor&)>();
  structgen::autograd::check_out_not_differentiable(
      "tril", torch::autograd::compute_requires_grad(self));
  decltype(auto) so_result = [&]() -> decltype(auto) {
    at::AutoDispatchBelowADInplaceOrView so_below;
    return tril_out_op.redispatch(so_ks & c10::after_autograd_keyset, self, diagonal, out);
  }();
  structgen::autograd::bump_version(out);
  return so_result;
}

void boxed_add_Tensor_autograd(const c10::OperatorHandle&, c10::DispatchKeySet so_ks, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 3);
  at::Tensor so_result = add_Tensor_autograd(so_ks, so_args[0].toTensor(), so_args[1].toTensor(), so_args[2].toScalar());
  torch::jit::drop(*so_stack, 3);
  so_stack->emplace_back(std::move(so_result));
}

void boxed_tril_autograd(const c10::OperatorHandle&, c10::DispatchKeySet so_ks, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 2);
  at::Tensor so_result = tril_autograd(so_ks, so_args[0].toTensor(), so_args[1].toSymInt());
  torch::jit::drop(*so_stack, 2);
  so_stack->emplace_back(std::move(so_result));
}

void boxed_add__Tensor_autograd(const c10::OperatorHandle&, c10::DispatchKeySet so_ks, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 3);
  at::Tensor so_result = add__Tensor_autograd(so_ks, so_args[0].toTensor(), so_args[1].toTensor(), so_args[2].toScalar());
  torch::jit::drop(*so_stack, 3);
  so_stack->emplace_back(std::move(so_result));
}

void boxed_add_out_autograd(const c10::OperatorHandle&, c10::DispatchKeySet so_ks, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 4);
  at::Tensor so_result = add_out_autograd(so_ks, so_args[0].toTensor(), so_args[1].toTensor(), so_args[2].toScalar(), so_args[3].toTensor());
  torch::jit::drop(*so_stack, 4);
  so_stack->emplace_back(std::move(so_result));
}

void boxed_tril_out_autograd(const c10::OperatorHandle&, c10::DispatchKeySet so_ks, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 3);
  at::Tensor so_result = tril_out_autograd(so_ks, so_args[0].toTensor(), so_args[1].toSymInt(), so_args[2].toTensor());
  torch::jit::drop(*so_stack, 3);
  so_stack->emplace_back(std::move(so_result));
}

}  // namespace
}  // namespace fixture::ops

TORCH_LIBRARY_IMPL(fixture_ops, Autograd, m) {
  m.impl("add.Tensor", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_add_Tensor_autograd>());
  m.impl("tril", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_tril_autograd>());
  m.impl("add_.Tensor", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_add__Tensor_autograd>());
  m.impl("add.out", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_add_out_autograd>());
  m.impl("tril.out", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_tril_out_autograd>());
}
