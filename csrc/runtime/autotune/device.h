// What the autotune runtime asks of a device: its name (part of the cache key) and, for CUDA,
// what only CUDA torch can answer, through hooks that cuda_host.cpp registers when the library
// loads (CUDA torch only; unset otherwise).
#pragma once

#include <c10/core/Device.h>
#include <c10/util/FunctionRef.h>

#include <string>

namespace structgen::autotune {

struct DeviceHooks {
  bool (*capturing)(at::Device) = nullptr;  // the current stream records a CUDA graph
  std::string (*device_name)(at::Device) = nullptr;
  std::string (*runtime_version)() = nullptr;
  void (*synchronize)(at::Device) = nullptr;
  // One call of run, timed with CUDA events on the current stream, in microseconds.
  double (*time_once)(at::Device, c10::function_ref<void()> run) = nullptr;
};

void register_cuda_hooks(const DeviceHooks& hooks);
const DeviceHooks& cuda_hooks();

// "NVIDIA H100 80GB HBM3", the CPU's model name from /proc/cpuinfo, else the device string.
std::string device_name(at::Device device);

}  // namespace structgen::autotune
