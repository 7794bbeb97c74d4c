// @generated from native_functions.yaml by codegen/templates/wrappers.cpp.j2 — DO NOT EDIT.
// Regenerate with: python -m codegen (run by the CMake build)
// CUDA kernels: the functional, inplace and out= variants of each structured op,
// derived from its meta function and impl, and their registration with the dispatcher.
#include <structops/structured.h>
#include <structops/ops/scaled_act.h>
#include <structops/ops/_scaled_tanh_backward_self.h>

#include <torch/library.h>

namespace structops {
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
  OutputTarget target_out(out, so_meta.out, /*must_not_alias_inputs=*/false, {});
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
  OutputTarget target_out(out, so_meta.out, /*must_not_alias_inputs=*/false, {});
  impl::_scaled_tanh_backward_self_out_cuda(grad, self, alpha, so_meta.common_dtype, target_out.tensor());
  target_out.commit();
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(STRUCTOPS_CUDA_LIBRARY, STRUCTOPS_CUDA_KEY, m) {
  m.impl("scaled_act", TORCH_FN(wrapper_CUDA_scaled_act));
  m.impl("scaled_act.out", TORCH_FN(wrapper_CUDA_scaled_act_out));
  m.impl("_scaled_tanh_backward_self", TORCH_FN(wrapper_CUDA__scaled_tanh_backward_self));
  m.impl("_scaled_tanh_backward_self.out", TORCH_FN(wrapper_CUDA__scaled_tanh_backward_self_out));
}

}  // namespace structops
