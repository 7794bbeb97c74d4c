// Stand-in for c10/cuda/CUDAGuard.h in the CPU emulator's build (tests/cuda_emu): the emulated
// device is the CPU, whose tensors stand in for device memory.
#pragma once

#include <c10/core/Device.h>
#include <c10/util/Exception.h>

namespace c10::cuda {

struct CUDAGuard {
  explicit CUDAGuard(c10::Device device) {
    TORCH_CHECK(device.is_cpu(), "cuda emulator: the CUDA path got a tensor on ", device,
                " (CPU tensors stand in for the GPU)");
  }
  explicit CUDAGuard(c10::DeviceIndex) {}
};

}  // namespace c10::cuda
