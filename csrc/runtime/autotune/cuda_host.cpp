// What the autotune runtime can only ask CUDA torch (device.h): whether the current stream
// is capturing a CUDA graph (no timing then), the device's name and the CUDA version (both part of
// the cache key), and timing with CUDA events. Registered when the library loads. Compiled only
// when the installed torch has CUDA.
#include <runtime/autotune/device.h>

#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGraphsC10Utils.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <cuda_runtime_api.h>

#include <string>

namespace structgen::autotune {
namespace {

bool capturing(at::Device device) {
  const c10::cuda::CUDAGuard guard(device);
  return c10::cuda::currentStreamCaptureStatusMayInitCtx() != c10::cuda::CaptureStatus::None;
}

std::string device_name(at::Device device) {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device.index() < 0 ? 0 : device.index()) != cudaSuccess)
    return device.str();
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

double time_once(at::Device device, c10::function_ref<void()> run) {
  const c10::cuda::CUDAGuard guard(device);
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream().stream();
  cudaEvent_t start = nullptr, stop = nullptr;
  C10_CUDA_CHECK(cudaEventCreate(&start));
  C10_CUDA_CHECK(cudaEventCreate(&stop));
  float ms = 0;
  try {
    C10_CUDA_CHECK(cudaEventRecord(start, stream));
    run();
    C10_CUDA_CHECK(cudaEventRecord(stop, stream));
    C10_CUDA_CHECK(cudaEventSynchronize(stop));
    C10_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  } catch (...) {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    throw;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return static_cast<double>(ms) * 1000.0;
}

[[maybe_unused]] const bool registered = [] {
  register_cuda_hooks(DeviceHooks{&capturing, &device_name, &runtime_version, &synchronize, &time_once});
  return true;
}();

}  // namespace
}  // namespace structgen::autotune
