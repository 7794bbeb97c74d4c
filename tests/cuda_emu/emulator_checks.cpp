// torch.ops.structops_emu_checks: the emulator's own checks (emulator_checks.cu) for
// tests/cuda_emu/test_emulator.py.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAGraphsC10Utils.h>
#include <torch/library.h>

#include <string>

namespace structops::emu {
// structops_emu/cuda.h (a device-code header: not included here)
void set_reverse_schedule(bool reverse);
void set_wide_indices(bool wide);
}  // namespace structops::emu

namespace structops::emu_checks {

std::string run(const std::string& name, void* buffer);
void half_bits(const float* in, int16_t* out, int64_t n);
void half_bits_from_double(const double* in, int16_t* out, int64_t n);
void bfloat16_bits(const float* in, int16_t* out, int64_t n);
void half_values(const int16_t* in, float* out, int64_t n);
void bfloat16_values(const int16_t* in, float* out, int64_t n);

namespace {

std::string run_case(const std::string& name, const at::Tensor& buffer) {
  TORCH_CHECK(buffer.is_contiguous() && buffer.nbytes() >= 64 * 1024, "a contiguous buffer of 64 KiB");
  return run(name, buffer.data_ptr());
}

at::Tensor bits(const at::Tensor& x, bool bfloat16) {
  TORCH_CHECK(x.is_contiguous() && (x.scalar_type() == at::kFloat || (x.scalar_type() == at::kDouble && !bfloat16)));
  at::Tensor out = at::empty(x.sizes(), x.options().dtype(at::kShort));
  if (x.scalar_type() == at::kDouble) half_bits_from_double(x.const_data_ptr<double>(), out.data_ptr<int16_t>(), x.numel());
  else if (bfloat16) bfloat16_bits(x.const_data_ptr<float>(), out.data_ptr<int16_t>(), x.numel());
  else half_bits(x.const_data_ptr<float>(), out.data_ptr<int16_t>(), x.numel());
  return out;
}

at::Tensor values(const at::Tensor& b, bool bfloat16) {
  TORCH_CHECK(b.is_contiguous() && b.scalar_type() == at::kShort);
  at::Tensor out = at::empty(b.sizes(), b.options().dtype(at::kFloat));
  (bfloat16 ? bfloat16_values : half_values)(b.const_data_ptr<int16_t>(), out.data_ptr<float>(), b.numel());
  return out;
}

void set_capturing(bool capturing) {
  c10::cuda::emulated_capture_status() = capturing ? c10::cuda::CaptureStatus::Active : c10::cuda::CaptureStatus::None;
}

}  // namespace

TORCH_LIBRARY(structops_emu_checks, m) {
  m.def("set_capturing(bool capturing) -> ()", &set_capturing);
  m.def("set_reverse_schedule(bool reverse) -> ()", &::structops::emu::set_reverse_schedule);
  m.def("set_wide_indices(bool wide) -> ()", &::structops::emu::set_wide_indices);
  m.def("run(str name, Tensor(a!) buffer) -> str", &run_case);
  m.def("bits(Tensor x, bool bfloat16) -> Tensor", &bits);
  m.def("values(Tensor bits, bool bfloat16) -> Tensor", &values);
}

}  // namespace structops::emu_checks
