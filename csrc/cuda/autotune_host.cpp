// What structops' autotune runtime (csrc/autotune.cpp) can only ask CUDA torch: whether the
// current stream is capturing a CUDA graph (no timing then), the device's name and the CUDA
// version (both part of the cache key), and a device synchronise for timing. Registered when
// the library loads. Compiled only when the installed torch has CUDA.
#include <structops/autotune.h>

#include <c10/cuda/CUDAGraphsC10Utils.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <cuda_runtime_api.h>

#include <string>

namespace structops::autotune {
namespace {

bool capturing(at::Device device) {
  const c10::cuda::CUDAGuard guard(device);
  return c10::cuda::currentStreamCaptureStatusMayInitCtx() != c10::cuda::CaptureStatus::None;
}

std::string device_name(at::Device device) {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device.index() < 0 ? 0 : device.index()) != cudaSuccess) return device.str();
  return prop.name;
}

std::string runtime_version() {
  int v = 0;
  cudaRuntimeGetVersion(&v);
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

void synchronize(at::Device device) {
  const c10::cuda::CUDAGuard guard(device);
  c10::cuda::getCurrentCUDAStream().synchronize();
}

const bool registered = [] {
  register_cuda_hooks(DeviceHooks{&capturing, &device_name, &runtime_version, &synchronize});
  return true;
}();

}  // namespace
}  // namespace structops::autotune
