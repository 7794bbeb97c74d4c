// @generated from native_functions.yaml by codegen/templates/wrappers.cpp.j2 — DO NOT EDIT.
// Regenerate with: python -m codegen (run by the CMake build)
// CPU kernels: the functional, inplace and out= variants of each structured op,
// derived from its meta function and impl, and their registration with the dispatcher.
#include <structops/structured.h>
#include <structops/ops/bmm_out.h>
#include <structops/ops/amax.h>
#include <structops/ops/scaled_tanh.h>

#include <torch/library.h>

namespace structops {
namespace {

at::Tensor& wrapper_CPU_bmm_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  const at::Device so_device = at::kCPU;
  check_devices("bmm.out", so_device, {{"self", self}, {"mat2", mat2}}, /*cpu_scalars=*/false);
  const auto so_meta = meta::bmm_out(self, mat2);
  prepare_out("bmm.out", "out", out, so_meta.out, so_device, /*allow_full_overlap=*/false, OutDtype::exact, {{"self", self}, {"mat2", mat2}});
  OutputTarget target_out(out, so_meta.out, /*must_not_alias_inputs=*/false, {});
  impl::bmm_out_cpu(self, mat2, so_meta.compute_dtype, target_out.tensor());
  target_out.commit();
  return out;
}

at::Tensor wrapper_CPU_amax(const at::Tensor& self, at::IntArrayRef dim, bool keepdim) {
  const at::Device so_device = at::kCPU;
  check_devices("amax", so_device, {{"self", self}}, /*cpu_scalars=*/false);
  const auto so_meta = meta::amax(self, dim, keepdim);
  at::Tensor out = allocate(so_meta.out, so_device);
  impl::amax_out(self, so_meta.reduced_dims, keepdim, so_meta.all_dims, so_meta.compute_dtype, out);
  return out;
}

at::Tensor& wrapper_CPU_amax_out(const at::Tensor& self, at::IntArrayRef dim, bool keepdim, at::Tensor& out) {
  const at::Device so_device = at::kCPU;
  check_devices("amax.out", so_device, {{"self", self}}, /*cpu_scalars=*/false);
  const auto so_meta = meta::amax(self, dim, keepdim);
  prepare_out("amax.out", "out", out, so_meta.out, so_device, /*allow_full_overlap=*/false, OutDtype::castable, {{"self", self}});
  OutputTarget target_out(out, so_meta.out, /*must_not_alias_inputs=*/false, {});
  impl::amax_out(self, so_meta.reduced_dims, keepdim, so_meta.all_dims, so_meta.compute_dtype, target_out.tensor());
  target_out.commit();
  return out;
}

at::Tensor wrapper_CPU_scaled_tanh(const at::Tensor& self, const at::Scalar& alpha) {
  const at::Device so_device = at::kCPU;
  check_devices("scaled_tanh", so_device, {{"self", self}}, /*cpu_scalars=*/true);
  const auto so_meta = meta::scaled_tanh(self, alpha);
  at::Tensor out = allocate(so_meta.out, so_device);
  impl::scaled_tanh_out_cpu(self, alpha, so_meta.common_dtype, out);
  return out;
}

at::Tensor& wrapper_CPU_scaled_tanh_out(const at::Tensor& self, const at::Scalar& alpha, at::Tensor& out) {
  const at::Device so_device = at::kCPU;
  check_devices("scaled_tanh.out", so_device, {{"self", self}}, /*cpu_scalars=*/true);
  const auto so_meta = meta::scaled_tanh(self, alpha);
  prepare_out("scaled_tanh.out", "out", out, so_meta.out, so_device, /*allow_full_overlap=*/true, OutDtype::castable, {{"self", self}});
  OutputTarget target_out(out, so_meta.out, /*must_not_alias_inputs=*/false, {});
  impl::scaled_tanh_out_cpu(self, alpha, so_meta.common_dtype, target_out.tensor());
  target_out.commit();
  return out;
}

}  // namespace

TORCH_LIBRARY_IMPL(structops, CPU, m) {
  m.impl("bmm.out", TORCH_FN(wrapper_CPU_bmm_out));
  m.impl("amax", TORCH_FN(wrapper_CPU_amax));
  m.impl("amax.out", TORCH_FN(wrapper_CPU_amax_out));
  m.impl("scaled_tanh", TORCH_FN(wrapper_CPU_scaled_tanh));
  m.impl("scaled_tanh.out", TORCH_FN(wrapper_CPU_scaled_tanh_out));
}

}  // namespace structops
