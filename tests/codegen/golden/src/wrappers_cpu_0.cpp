// @generated from native_functions.yaml by codegen/templates/wrappers.cpp.j2 (generator 0.6.0) — DO NOT EDIT.
// Regenerate with: python -m structgen.codegen (run by the CMake build)
// CPU kernels: the functional, inplace and out= variants of each structured op,
// derived from its meta function and impl, and their registration with the dispatcher.
#include <structgen/boxed.h>
#include <structgen/structured.h>
#include <fixture/include/ops/add_Tensor.h>
#include <fixture/include/ops/aminmax.h>
#include <fixture/include/ops/scaled_act.h>
#include <fixture/include/ops/_scaled_tanh_backward_self.h>
#include <fixture/include/ops/tril.h>
#include <fixture/include/ops/my_fused.h>

#include <torch/library.h>

namespace fixture::ops {
using namespace ::structgen;  // the runtime's names, unqualified (codegen/project.py)
namespace {

at::Tensor wrapper_CPU_add_Tensor(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  const at::Device so_device = at::kCPU;
  check_devices("add.Tensor", so_device, {{"self", self}, {"other", other}}, /*cpu_scalars=*/true);
  const auto so_meta = meta::add_Tensor(self, other, alpha);
  at::Tensor out = allocate(so_meta.out, so_device);
  impl::add_out_cpu(self, other, alpha, so_meta.compute_dtype, out);
  return out;
}

at::Tensor& wrapper_CPU_add__Tensor(at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
  const at::Device so_device = at::kCPU;
  check_devices("add_.Tensor", so_device, {{"self", self}, {"other", other}}, /*cpu_scalars=*/true);
  const auto so_meta = meta::add_Tensor(self, other, alpha);
  check_inplace("add_.Tensor", self, so_meta.out, OutDtype::castable, {{"self", self}, {"other", other}});
  OutputTarget so_target(self, so_meta.out, /*must_not_alias_inputs=*/false, {{"self", self}, {"other", other}}, /*any_strides=*/false);
  impl::add_out_cpu(self, other, alpha, so_meta.compute_dtype, so_target.tensor());
  so_target.commit();
  return self;
}

at::Tensor& wrapper_CPU_add_out(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha, at::Tensor& out) {
  const at::Device so_device = at::kCPU;
  check_devices("add.out", so_device, {{"self", self}, {"other", other}}, /*cpu_scalars=*/true);
  const auto so_meta = meta::add_Tensor(self, other, alpha);
  prepare_out("add.out", "out", out, so_meta.out, so_device, /*allow_full_overlap=*/true, OutDtype::castable, {{"self", self}, {"other", other}});
  OutputTarget target_out(out, so_meta.out, /*must_not_alias_inputs=*/false, {}, /*any_strides=*/false);
  impl::add_out_cpu(self, other, alpha, so_meta.compute_dtype, target_out.tensor());
  target_out.commit();
  return out;
}

std::tuple<at::Tensor,at::Tensor> wrapper_CPU_aminmax(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  const at::Device so_device = at::kCPU;
  check_devices("aminmax", so_device, {{"self", self}}, /*cpu_scalars=*/false);
  const auto so_meta = meta::aminmax(self, dim, keepdim);
  at::Tensor min = allocate(so_meta.min, so_device);
  at::Tensor max = allocate(so_meta.max, so_device);
  impl::aminmax_out_cpu(self, dim, keepdim, min, max);
  return std::make_tuple(min, max);
}

std::tuple<at::Tensor&,at::Tensor&> wrapper_CPU_aminmax_out(const at::Tensor& self, std::optional<int64_t> dim, bool keepdim, at::Tensor& min, at::Tensor& max) {
  const at::Device so_device = at::kCPU;
  check_devices("aminmax.out", so_device, {{"self", self}}, /*cpu_scalars=*/false);
  const auto so_meta = meta::aminmax(self, dim, keepdim);
  prepare_out("aminmax.out", "min", min, so_meta.min, so_device, /*allow_full_overlap=*/false, OutDtype::exact, {{"self", self}});
  prepare_out("aminmax.out", "max", max, so_meta.max, so_device, /*allow_full_overlap=*/false, OutDtype::exact, {{"self", self}});
  OutputTarget target_min(min, so_meta.min, /*must_not_alias_inputs=*/false, {}, /*any_strides=*/false);
  OutputTarget target_max(max, so_meta.max, /*must_not_alias_inputs=*/false, {}, /*any_strides=*/false);
  impl::aminmax_out_cpu(self, dim, keepdim, target_min.tensor(), target_max.tensor());
  target_min.commit();
  target_max.commit();
  return std::forward_as_tuple(min, max);
}

at::Tensor wrapper_CPU_scaled_act(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha, c10::string_view mode) {
  const at::Device so_device = at::kCPU;
  check_devices("scaled_act", so_device, {{"self", self}, {"other", other}}, /*cpu_scalars=*/true);
  const auto so_meta = meta::scaled_act(self, other, alpha, mode);
  at::Tensor out = allocate(so_meta.out, so_device);
  impl::scaled_act_out_cpu(self, other, alpha, mode, so_meta.common_dtype, out);
  return out;
}

at::Tensor& wrapper_CPU_scaled_act_out(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha, c10::string_view mode, at::Tensor& out) {
  const at::Device so_device = at::kCPU;
  check_devices("scaled_act.out", so_device, {{"self", self}, {"other", other}}, /*cpu_scalars=*/true);
  const auto so_meta = meta::scaled_act(self, other, alpha, mode);
  prepare_out("scaled_act.out", "out", out, so_meta.out, so_device, /*allow_full_overlap=*/true, OutDtype::castable, {{"self", self}, {"other", other}});
  OutputTarget target_out(out, so_meta.out, /*must_not_alias_inputs=*/false, {}, /*any_strides=*/true);
  impl::scaled_act_out_cpu(self, other, alpha, mode, so_meta.common_dtype, target_out.tensor());
  target_out.commit();
  return out;
}

at::Tensor wrapper_CPU__scaled_tanh_backward_self(const at::Tensor& grad, const at::Tensor& self, const at::Scalar& alpha) {
  const at::Device so_device = at::kCPU;
  check_devices("_scaled_tanh_backward_self", so_device, {{"grad", grad}, {"self", self}}, /*cpu_scalars=*/true);
  const auto so_meta = meta::_scaled_tanh_backward_self(grad, self, alpha);
  at::Tensor out = allocate(so_meta.out, so_device);
  impl::_scaled_tanh_backward_self_out_cpu(grad, self, alpha, so_meta.common_dtype, out);
  return out;
}

at::Tensor& wrapper_CPU__scaled_tanh_backward_self_out(const at::Tensor& grad, const at::Tensor& self, const at::Scalar& alpha, at::Tensor& out) {
  const at::Device so_device = at::kCPU;
  check_devices("_scaled_tanh_backward_self.out", so_device, {{"grad", grad}, {"self", self}}, /*cpu_scalars=*/true);
  const auto so_meta = meta::_scaled_tanh_backward_self(grad, self, alpha);
  prepare_out("_scaled_tanh_backward_self.out", "out", out, so_meta.out, so_device, /*allow_full_overlap=*/true, OutDtype::castable, {{"grad", grad}, {"self", self}});
  OutputTarget target_out(out, so_meta.out, /*must_not_alias_inputs=*/false, {}, /*any_strides=*/true);
  impl::_scaled_tanh_backward_self_out_cpu(grad, self, alpha, so_meta.common_dtype, target_out.tensor());
  target_out.commit();
  return out;
}

at::Tensor wrapper_CPU_tril(const at::Tensor& self, c10::SymInt diagonal) {
  const at::Device so_device = at::kCPU;
  check_devices("tril", so_device, {{"self", self}}, /*cpu_scalars=*/false);
  const auto so_meta = meta::tril(self, diagonal);
  at::Tensor out = allocate(so_meta.out, so_device);
  impl::tril_out_cpu(self, diagonal, so_meta.compute_dtype, out);
  return out;
}

at::Tensor& wrapper_CPU_tril_out(const at::Tensor& self, c10::SymInt diagonal, at::Tensor& out) {
  const at::Device so_device = at::kCPU;
  check_devices("tril.out", so_device, {{"self", self}}, /*cpu_scalars=*/false);
  const auto so_meta = meta::tril(self, diagonal);
  prepare_out("tril.out", "out", out, so_meta.out, so_device, /*allow_full_overlap=*/false, OutDtype::exact, {{"self", self}});
  OutputTarget target_out(out, so_meta.out, /*must_not_alias_inputs=*/false, {}, /*any_strides=*/false);
  impl::tril_out_cpu(self, diagonal, so_meta.compute_dtype, target_out.tensor());
  target_out.commit();
  return out;
}

void boxed_wrapper_CPU_add_Tensor(const c10::OperatorHandle&, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 3);
  at::Tensor so_result = wrapper_CPU_add_Tensor(so_args[0].toTensor(), so_args[1].toTensor(), so_args[2].toScalar());
  torch::jit::drop(*so_stack, 3);
  so_stack->emplace_back(std::move(so_result));
}

void boxed_wrapper_CPU_add__Tensor(const c10::OperatorHandle&, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 3);
  at::Tensor so_result = wrapper_CPU_add__Tensor(so_args[0].toTensor(), so_args[1].toTensor(), so_args[2].toScalar());
  torch::jit::drop(*so_stack, 3);
  so_stack->emplace_back(std::move(so_result));
}

void boxed_wrapper_CPU_add_out(const c10::OperatorHandle&, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 4);
  at::Tensor so_result = wrapper_CPU_add_out(so_args[0].toTensor(), so_args[1].toTensor(), so_args[2].toScalar(), so_args[3].toTensor());
  torch::jit::drop(*so_stack, 4);
  so_stack->emplace_back(std::move(so_result));
}

void boxed_wrapper_CPU_aminmax(const c10::OperatorHandle&, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 3);
  std::tuple<at::Tensor, at::Tensor> so_result = wrapper_CPU_aminmax(so_args[0].toTensor(), (so_args[1].isNone() ? std::optional<int64_t>() : std::optional<int64_t>(so_args[1].toInt())), so_args[2].toBool());
  torch::jit::drop(*so_stack, 3);
  so_stack->emplace_back(std::move(std::get<0>(so_result)));
  so_stack->emplace_back(std::move(std::get<1>(so_result)));
}

void boxed_wrapper_CPU_aminmax_out(const c10::OperatorHandle&, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 5);
  std::tuple<at::Tensor, at::Tensor> so_result = wrapper_CPU_aminmax_out(so_args[0].toTensor(), (so_args[1].isNone() ? std::optional<int64_t>() : std::optional<int64_t>(so_args[1].toInt())), so_args[2].toBool(), so_args[3].toTensor(), so_args[4].toTensor());
  torch::jit::drop(*so_stack, 5);
  so_stack->emplace_back(std::move(std::get<0>(so_result)));
  so_stack->emplace_back(std::move(std::get<1>(so_result)));
}

void boxed_wrapper_CPU_scaled_act(const c10::OperatorHandle&, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 4);
  at::Tensor so_result = wrapper_CPU_scaled_act(so_args[0].toTensor(), so_args[1].toTensor(), so_args[2].toScalar(), so_args[3].toStringView());
  torch::jit::drop(*so_stack, 4);
  so_stack->emplace_back(std::move(so_result));
}

void boxed_wrapper_CPU_scaled_act_out(const c10::OperatorHandle&, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 5);
  at::Tensor so_result = wrapper_CPU_scaled_act_out(so_args[0].toTensor(), so_args[1].toTensor(), so_args[2].toScalar(), so_args[3].toStringView(), so_args[4].toTensor());
  torch::jit::drop(*so_stack, 5);
  so_stack->emplace_back(std::move(so_result));
}

void boxed_wrapper_CPU__scaled_tanh_backward_self(const c10::OperatorHandle&, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 3);
  at::Tensor so_result = wrapper_CPU__scaled_tanh_backward_self(so_args[0].toTensor(), so_args[1].toTensor(), so_args[2].toScalar());
  torch::jit::drop(*so_stack, 3);
  so_stack->emplace_back(std::move(so_result));
}

void boxed_wrapper_CPU__scaled_tanh_backward_self_out(const c10::OperatorHandle&, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 4);
  at::Tensor so_result = wrapper_CPU__scaled_tanh_backward_self_out(so_args[0].toTensor(), so_args[1].toTensor(), so_args[2].toScalar(), so_args[3].toTensor());
  torch::jit::drop(*so_stack, 4);
  so_stack->emplace_back(std::move(so_result));
}

void boxed_wrapper_CPU_tril(const c10::OperatorHandle&, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 2);
  at::Tensor so_result = wrapper_CPU_tril(so_args[0].toTensor(), so_args[1].toSymInt());
  torch::jit::drop(*so_stack, 2);
  so_stack->emplace_back(std::move(so_result));
}

void boxed_wrapper_CPU_tril_out(const c10::OperatorHandle&, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 3);
  at::Tensor so_result = wrapper_CPU_tril_out(so_args[0].toTensor(), so_args[1].toSymInt(), so_args[2].toTensor());
  torch::jit::drop(*so_stack, 3);
  so_stack->emplace_back(std::move(so_result));
}

void boxed_wrapper_CPU_my_fused(const c10::OperatorHandle&, torch::jit::Stack* so_stack) {
  [[maybe_unused]] c10::IValue* so_args = so_stack->data() + (so_stack->size() - 4);
  at::Tensor so_result = impl::my_fused_cpu(so_args[0].toTensor(), structgen::boxed::optional_tensor(so_args[1]), so_args[2].toDouble(), so_args[3].toStringView());
  torch::jit::drop(*so_stack, 4);
  so_stack->emplace_back(std::move(so_result));
}

}  // namespace

TORCH_LIBRARY_IMPL(fixture_ops, CPU, m) {
  m.impl("add.Tensor", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_wrapper_CPU_add_Tensor>());
  m.impl("add_.Tensor", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_wrapper_CPU_add__Tensor>());
  m.impl("add.out", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_wrapper_CPU_add_out>());
  m.impl("aminmax", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_wrapper_CPU_aminmax>());
  m.impl("aminmax.out", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_wrapper_CPU_aminmax_out>());
  m.impl("scaled_act", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_wrapper_CPU_scaled_act>());
  m.impl("scaled_act.out", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_wrapper_CPU_scaled_act_out>());
  m.impl("_scaled_tanh_backward_self", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_wrapper_CPU__scaled_tanh_backward_self>());
  m.impl("_scaled_tanh_backward_self.out", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_wrapper_CPU__scaled_tanh_backward_self_out>());
  m.impl("tril", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_wrapper_CPU_tril>());
  m.impl("tril.out", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_wrapper_CPU_tril_out>());
  m.impl("my_fused", torch::CppFunction::makeFromBoxedFunction<&fixture::ops::boxed_wrapper_CPU_my_fused>());
}

}  // namespace fixture::ops
