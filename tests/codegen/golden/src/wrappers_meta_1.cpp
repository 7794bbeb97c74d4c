// @generated from native_functions.yaml by codegen/templates/wrappers.cpp.j2 (generator 0.6.0) — DO NOT EDIT.
// Regenerate with: python -m structgen.codegen (run by the CMake build)
// Meta kernels: the functional, inplace and out= variants of each structured op,
// derived from its meta function and impl, and their registration with the dispatcher.
#include <structgen/boxed.h>
#include <structgen/structured.h>
#include <fixture/include/ops/bmm_out.h>
#include <fixture/include/ops/amax.h>
#include <fixture/include/ops/scaled_tanh.h>
#include <fixture/include/ops/cumprod.h>

#include <torch/library.h>

namespace fixture::ops {
using namespace ::structgen;  // the runtime's names, unqualified (codegen/project.py)
namespace {

at::Tensor& wrapper_Meta_bmm_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  const at::Device so_device = at::kMeta;
  check_devices("bmm.out", so_device, {{"self", self}, {"mat2", mat2}}, /*cpu_scalars=*/false);
  const auto so_meta = meta::bmm_out(self, mat2);
  prepare_out("bmm.out", "out", out, so_meta.out, so_device, /*allow_full_overlap=*/false, OutDtype::exact, {{"self", self}, {"mat2", mat2}});
  return out;
}

at::Tensor wrapper_Meta_amax(const at::Tensor& self, at::IntArrayRef dim, bool keepdim) {
  const at::Device so_device = at::kMeta;
  check_devices("amax", so_device, {{"self", self}}, /*cpu_scalars=*/false);
  const auto so_meta = meta::amax(self, dim, keepdim);
  at::Tensor out = allocate(so_meta.out, so_device);
  return out;
}

at::Tensor& wrapper_Meta_amax_out(const at::Tensor& self, at::IntArrayRef dim, bool keepdim, at::Tensor& out) {
  const at::Device so_device = at::kMeta;
  check_devices("amax.out", so_device, {{"self", self}}, /*cpu_scalars=*/false);
  const auto so_meta = meta::amax(self, dim, keepdim);
  prepare_out("amax.out", "out", out, so_meta.out, so_device, /*allow_full_overlap=*/false, OutDtype::castable, {{"self", self}});
  return out;
}

at::Tensor wrapper_Meta_scaled_tanh(const at::Tensor& self, const at::Scalar& alpha) {
  const at::Device so_device = at::kMeta;
  check_devices("scaled_tanh", so_device, {{"self", self}}, /*cpu_scalars=*/true);
  const auto so_meta = meta::scaled_tanh(self, alpha);
  at::Tensor out = allocate(so_meta.out, so_device);
  return out;
}

at::Tensor& wrapper_Meta_scaled_tanh_out(const at::Tensor& self, const at::Scalar& alpha, at::Tensor& out) {
  const at::Device so_device = at::kMeta;
  check_devices("scaled_tanh.out", so_device, {{"self", self}}, /*cpu_scalars=*/true);
  const auto so_meta = meta::scaled_tanh(self, alpha);
  prepare_out("scaled_tanh.out", "out", out, so_meta.out, so_device, /*allow_full_overlap=*/true, OutDtype::castable, {{"self", self}});
  return out;
}

at::Tensor wrapper_Meta_cumprod(const at::Tensor& self, int64_t dim) {
  const at::Device so_device = at::kMeta;
  check_devices("cumprod", so_device, {{"self", self}}, /*cpu_scalars=*/false);
  const auto so_meta = meta::cumprod(self, dim);
  at::Tensor out = allocate(so_meta.out, so_device);
  return out;
}

at::Tensor& wrapper_Meta_cumprod_out(const at::Tensor& self, int64_t dim, at::Tensor& out) {
  const at::Device so_device = at::kMeta;
  check_devices("cumprod.out", so_device, {{"self", self}}, /*cpu_scalars=*/false);
  const auto so_meta = meta::cumprod(self, dim);
  prepare_out("cumprod.out", "out", out, so_meta.out, so_device, /*allow_full_overlap=*/false, OutDtype::exact, {{"self", self}});
  return out;
}

void boxed_wrapper_Meta_bmm_out(const c10::OperatorHandle&, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 3);
  at::Tensor so_result = wrapper_Meta_bmm_out(so_args[0].toTensor(), so_args[1].toTensor(), so_args[2].toTensor());
  torch::jit::drop(*so_stack, 3);
  so_stack->emplace_back(std::move(so_result));
}

void boxed_wrapper_Meta_amax(const c10::OperatorHandle&, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 3);
  at::Tensor so_result = wrapper_Meta_amax(so_args[0].toTensor(), so_args[1].toDimVector(), so_args[2].toBool());
  torch::jit::drop(*so_stack, 3);
  so_stack->emplace_back(std::move(so_result));
}

void boxed_wrapper_Meta_amax_out(const c10::OperatorHandle&, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 4);
  at::Tensor so_result = wrapper_Meta_amax_out(so_args[0].toTensor(), so_args[1].toDimVector(), so_args[2].toBool(), so_args[3].toTensor());
  torch::jit::drop(*so_stack, 4);
  so_stack->emplace_back(std::move(so_result));
}

void boxed_wrapper_Meta_scaled_tanh(const c10::OperatorHandle&, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 2);
  at::Tensor so_result = wrapper_Meta_scaled_tanh(so_args[0].toTensor(), so_args[1].toScalar());
  torch::jit::drop(*so_stack, 2);
  so_stack->emplace_back(std::move(so_result));
}

void boxed_wrapper_Meta_scaled_tanh_out(const c10::OperatorHandle&, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 3);
  at::Tensor so_result = wrapper_Meta_scaled_tanh_out(so_args[0].toTensor(), so_args[1].toScalar(), so_args[2].toTensor());
  torch::jit::drop(*so_stack, 3);
  so_stack->emplace_back(std::move(so_result));
}

void boxed_wrapper_Meta_cumprod(const c10::OperatorHandle&, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 2);
  at::Tensor so_result = wrapper_Meta_cumprod(so_args[0].toTensor(), so_args[1].toInt());
  torch::jit::drop(*so_stack, 2);
  so_stack->emplace_back(std::move(so_result));
}

void boxed_wrapper_Meta_cumprod_out(const c10::OperatorHandle&, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 3);
  at::Tensor so_result = wrapper_Meta_cumprod_out(so_args[0].toTensor(), so_args[1].toInt(), so_args[2].toTensor());
  torch::jit::drop(*so_stack, 3);
  so_stack->emplace_back(std::move(so_result));
}

}  // namespace

TORCH_LIBRARY_IMPL(fixture_ops, Meta, m) {
  m.impl("bmm.out", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_wrapper_Meta_bmm_out>());
  m.impl("amax", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_wrapper_Meta_amax>());
  m.impl("amax.out", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_wrapper_Meta_amax_out>());
  m.impl("scaled_tanh", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_wrapper_Meta_scaled_tanh>());
  m.impl("scaled_tanh.out", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_wrapper_Meta_scaled_tanh_out>());
  m.impl("cumprod", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_wrapper_Meta_cumprod>());
  m.impl("cumprod.out", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_wrapper_Meta_cumprod_out>());
}

}  // namespace fixture::ops
