// @generated from native_functions.yaml by codegen/templates/wrappers.cpp.j2 (generator 0.6.0) — DO NOT EDIT.
// Regenerate with: python -m structgen.codegen (run by the CMake build)
// CUDA kernels: the functional, inplace and out= variants of each structured op,
// derived from its meta function and impl, and their registration with the dispatcher.
#include <structgen/boxed.h>
#include <structgen/structured.h>
#include <fixture/include/ops/scaled_act.h>
#include <fixture/include/ops/_scaled_tanh_backward_self.h>
#include <fixture/include/ops/tril.h>

#include <torch/library.h>

namespace fixture::ops {
using namespace ::structgen;  // the runtime's names, unqualified (codegen/project.py)
namespace {

at::Tensor wrapper_CUDA_scaled_act(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha, c10::string_view mode) {
  const at::Device so_device = device_of({{"self", self}, {"other", other}}, at::kCUDA);
  const c10::DeviceGuard so_guard(so_device);
  check_devices("scaled_act", so_device, {{"self", self}, {"other", other}}, /*cpu_scalars=*/true);
  const auto so_meta = meta::scaled_act(self, other, alpha, mode);
  at::Tensor out = allocate(so_meta.out, so_device);
  impl::scaled_act_out_cuda(self, other, alpha, mode, so_meta.common_dtype, out);
  return out;
}

at::Tensor& wrapper_CUDA_scaled_act_out(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha, c10::string_view mode, at::Tensor& out) {
  const at::Device so_device = device_of({{"self", self}, {"other", other}}, at::kCUDA);
  const c10::DeviceGuard so_guard(so_device);
  check_devices("scaled_act.out", so_device, {{"self", self}, {"other", other}}, /*cpu_scalars=*/true);
  const auto so_meta = meta::scaled_act(self, other, alpha, mode);
  prepare_out("scaled_act.out", "out", out, so_meta.out, so_device, /*allow_full_overlap=*/true, OutDtype::castable, {{"self", self}, {"other", other}});
  OutputTarget target_out(out, so_meta.out, /*must_not_alias_inputs=*/false, {}, /*any_strides=*/true);
  impl::scaled_act_out_cuda(self, other, alpha, mode, so_meta.common_dtype, target_out.tensor());
  target_out.commit();
  return out;
}

at::Tensor wrapper_CUDA__scaled_tanh_backward_self(const at::Tensor& grad, const at::Tensor& self, const at::Scalar& alpha) {
  const at::Device so_device = device_of({{"grad", grad}, {"self", self}}, at::kCUDA);
  const c10::DeviceGuard so_guard(so_device);
  check_devices("_scaled_tanh_backward_self", so_device, {{"grad", grad}, {"self", self}}, /*cpu_scalars=*/true);
  const auto so_meta = meta::_scaled_tanh_backward_self(grad, self, alpha);
  at::Tensor out = allocate(so_meta.out, so_device);
  impl::_scaled_tanh_backward_self_out_cuda(grad, self, alpha, so_meta.common_dtype, out);
  return out;
}

at::Tensor& wrapper_CUDA__scaled_tanh_backward_self_out(const at::Tensor& grad, const at::Tensor& self, const at::Scalar& alpha, at::Tensor& out) {
  const at::Device so_device = device_of({{"grad", grad}, {"self", self}}, at::kCUDA);
  const c10::DeviceGuard so_guard(so_device);
  check_devices("_scaled_tanh_backward_self.out", so_device, {{"grad", grad}, {"self", self}}, /*cpu_scalars=*/true);
  const auto so_meta = meta::_scaled_tanh_backward_self(grad, self, alpha);
  prepare_out("_scaled_tanh_backward_self.out", "out", out, so_meta.out, so_device, /*allow_full_overlap=*/true, OutDtype::castable, {{"grad", grad}, {"self", self}});
  OutputTarget target_out(out, so_meta.out, /*must_not_alias_inputs=*/false, {}, /*any_strides=*/true);
  impl::_scaled_tanh_backward_self_out_cuda(grad, self, alpha, so_meta.common_dtype, target_out.tensor());
  target_out.commit();
  return out;
}

at::Tensor wrapper_CUDA_tril(const at::Tensor& self, c10::SymInt diagonal) {
  const at::Device so_device = device_of({{"self", self}}, at::kCUDA);
  const c10::DeviceGuard so_guard(so_device);
  check_devices("tril", so_device, {{"self", self}}, /*cpu_scalars=*/false);
  const auto so_meta = meta::tril(self, diagonal);
  at::Tensor out = allocate(so_meta.out, so_device);
  impl::tril_out_cuda(self, diagonal, so_meta.compute_dtype, out);
  return out;
}

at::Tensor& wrapper_CUDA_tril_out(const at::Tensor& self, c10::SymInt diagonal, at::Tensor& out) {
  const at::Device so_device = device_of({{"self", self}}, at::kCUDA);
  const c10::DeviceGuard so_guard(so_device);
  check_devices("tril.out", so_device, {{"self", self}}, /*cpu_scalars=*/false);
  const auto so_meta = meta::tril(self, diagonal);
  prepare_out("tril.out", "out", out, so_meta.out, so_device, /*allow_full_overlap=*/false, OutDtype::exact, {{"self", self}});
  OutputTarget target_out(out, so_meta.out, /*must_not_alias_inputs=*/false, {}, /*any_strides=*/false);
  impl::tril_out_cuda(self, diagonal, so_meta.compute_dtype, target_out.tensor());
  target_out.commit();
  return out;
}

void boxed_wrapper_CUDA_scaled_act(const c10::OperatorHandle&, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 4);
  at::Tensor so_result = wrapper_CUDA_scaled_act(so_args[0].toTensor(), so_args[1].toTensor(), so_args[2].toScalar(), so_args[3].toStringView());
  torch::jit::drop(*so_stack, 4);
  so_stack->emplace_back(std::move(so_result));
}

void boxed_wrapper_CUDA_scaled_act_out(const c10::OperatorHandle&, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 5);
  at::Tensor so_result = wrapper_CUDA_scaled_act_out(so_args[0].toTensor(), so_args[1].toTensor(), so_args[2].toScalar(), so_args[3].toStringView(), so_args[4].toTensor());
  torch::jit::drop(*so_stack, 5);
  so_stack->emplace_back(std::move(so_result));
}

void boxed_wrapper_CUDA__scaled_tanh_backward_self(const c10::OperatorHandle&, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 3);
  at::Tensor so_result = wrapper_CUDA__scaled_tanh_backward_self(so_args[0].toTensor(), so_args[1].toTensor(), so_args[2].toScalar());
  torch::jit::drop(*so_stack, 3);
  so_stack->emplace_back(std::move(so_result));
}

void boxed_wrapper_CUDA__scaled_tanh_backward_self_out(const c10::OperatorHandle&, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 4);
  at::Tensor so_result = wrapper_CUDA__scaled_tanh_backward_self_out(so_args[0].toTensor(), so_args[1].toTensor(), so_args[2].toScalar(), so_args[3].toTensor());
  torch::jit::drop(*so_stack, 4);
  so_stack->emplace_back(std::move(so_result));
}

void boxed_wrapper_CUDA_tril(const c10::OperatorHandle&, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 2);
  at::Tensor so_result = wrapper_CUDA_tril(so_args[0].toTensor(), so_args[1].toSymInt());
  torch::jit::drop(*so_stack, 2);
  so_stack->emplace_back(std::move(so_result));
}

void boxed_wrapper_CUDA_tril_out(const c10::OperatorHandle&, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 3);
  at::Tensor so_result = wrapper_CUDA_tril_out(so_args[0].toTensor(), so_args[1].toSymInt(), so_args[2].toTensor());
  torch::jit::drop(*so_stack, 3);
  so_stack->emplace_back(std::move(so_result));
}

}  // namespace

#if defined(STRUCTGEN_CUDA_EMULATION)
TORCH_LIBRARY_IMPL(fixture_ops_emu, CPU, m) {
#else
TORCH_LIBRARY_IMPL(fixture_ops, CUDA, m) {
#endif
  m.impl("scaled_act", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_wrapper_CUDA_scaled_act>());
  m.impl("scaled_act.out", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_wrapper_CUDA_scaled_act_out>());
  m.impl("_scaled_tanh_backward_self", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_wrapper_CUDA__scaled_tanh_backward_self>());
  m.impl("_scaled_tanh_backward_self.out", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_wrapper_CUDA__scaled_tanh_backward_self_out>());
  m.impl("tril", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_wrapper_CUDA_tril>());
  m.impl("tril.out", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_wrapper_CUDA_tril_out>());
}

}  // namespace fixture::ops
