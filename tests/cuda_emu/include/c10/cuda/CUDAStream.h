// Stand-in for c10/cuda/CUDAStream.h in the CPU emulator's build (tests/cuda_emu): one stream,
// on which every emulated launch has finished when it returns.
#pragma once

#include <c10/core/Device.h>
#include <cuda_runtime.h>

namespace c10::cuda {

struct CUDAStream {
  cudaStream_t stream() const { return nullptr; }
  void synchronize() const {}
  operator cudaStream_t() const { return nullptr; }
};

inline CUDAStream getCurrentCUDAStream(c10::DeviceIndex = -1) { return {}; }

}  // namespace c10::cuda
