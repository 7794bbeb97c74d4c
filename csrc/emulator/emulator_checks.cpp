// torch.ops.<project>_emu_checks: the emulator's own checks (emulator_checks.cu) for
// tests/cuda_emu/test_emulator.py, and its switches (schedule, indices, shared memory poison,
// graph capture) for the tests that run the real kernels.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAStream.h>
#include <structgen/cuda/host.h>
#include <torch/library.h>

#include <string>

namespace structgen::emu_checks {

std::string run(const std::string& name, void* buffer, cudaStream_t stream);
void half_bits(const float* in, int16_t* out, int64_t n);
void half_bits_from_double(const double* in, int16_t* out, int64_t n);
void bfloat16_bits(const float* in, int16_t* out, int64_t n);
void half_values(const int16_t* in, float* out, int64_t n);
void bfloat16_values(const int16_t* in, float* out, int64_t n);

namespace {

std::string run_case(const std::string& name, const at::Tensor& buffer) {
  TORCH_CHECK(buffer.is_contiguous() && buffer.nbytes() >= 64 * 1024, "a contiguous buffer of 64 KiB");
  if (name == "c10_synchronize") {  // what torch's own host code calls
    c10::cuda::getCurrentCUDAStream().synchronize();
    return "ok";
  }
  return run(name, buffer.data_ptr(), c10::cuda::getCurrentCUDAStream().stream());
}

at::Tensor bits(const at::Tensor& x, bool bfloat16) {
  TORCH_CHECK(x.is_contiguous() &&
              (x.scalar_type() == at::kFloat || (x.scalar_type() == at::kDouble && !bfloat16)));
  at::Tensor out = at::empty(x.sizes(), x.options().dtype(at::kShort));
  if (x.scalar_type() == at::kDouble)
    half_bits_from_double(x.const_data_ptr<double>(), out.data_ptr<int16_t>(), x.numel());
  else if (bfloat16)
    bfloat16_bits(x.const_data_ptr<float>(), out.data_ptr<int16_t>(), x.numel());
  else
    half_bits(x.const_data_ptr<float>(), out.data_ptr<int16_t>(), x.numel());
  return out;
}

at::Tensor values(const at::Tensor& b, bool bfloat16) {
  TORCH_CHECK(b.is_contiguous() && b.scalar_type() == at::kShort);
  at::Tensor out = at::empty(b.sizes(), b.options().dtype(at::kFloat));
  (bfloat16 ? bfloat16_values : half_values)(b.const_data_ptr<int16_t>(), out.data_ptr<float>(), b.numel());
  return out;
}

void set_shared_poison(int64_t byte, const std::string& kernel) {
  TORCH_CHECK_VALUE(byte >= 0 && byte <= 255, "set_shared_poison: the poison is a byte (0 to 255), got ",
                    byte);
  ::structgen::emu::set_shared_poison(static_cast<unsigned char>(byte), kernel);
}

// A value of "device memory" read as the host glue reads it (structgen/cuda/host.h).
int64_t read_on_host(const at::Tensor& t) { return cuda_host::item<int64_t>(t, "read_on_host"); }

}  // namespace

// torch.ops.<project>_emu_checks (STRUCTGEN_EMU_CHECKS, from the build): each project's emulator
// has its own. The macro in between expands the name before TORCH_LIBRARY pastes it.
#define STRUCTGEN_EMU_LIBRARY(name, m) TORCH_LIBRARY(name, m)
STRUCTGEN_EMU_LIBRARY(STRUCTGEN_EMU_CHECKS, m) {
  m.def("set_capturing(bool capturing) -> ()", &::structgen::emu::set_capturing);
  m.def("set_shared_poison(int byte, str kernel=\"\") -> ()", &set_shared_poison);
  m.def("take_shared_memory_kernels() -> str[]", &::structgen::emu::take_shared_memory_kernels);
  m.def("read_on_host(Tensor t) -> int", &read_on_host);
  m.def("set_reverse_schedule(bool reverse) -> ()", &::structgen::emu::set_reverse_schedule);
  m.def("set_wide_indices(bool wide) -> ()", &::structgen::emu::set_wide_indices);
  m.def("run(str name, Tensor(a!) buffer) -> str", &run_case);
  m.def("bits(Tensor x, bool bfloat16) -> Tensor", &bits);
  m.def("values(Tensor bits, bool bfloat16) -> Tensor", &values);
}

}  // namespace structgen::emu_checks
