// Stand-in for c10/cuda/CUDAStream.h in the CPU emulator's build (tests/cuda_emu): one stream, the
// current one, which is not the default stream (structgen::emu::current_stream), and on which
// every emulated launch has finished when it returns. Synchronising fails while it captures.
#pragma once

#include <c10/core/Device.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_runtime.h>

namespace c10::cuda {

struct CUDAStream {
  cudaStream_t stream() const { return structgen::emu::current_stream(); }
  void synchronize() const { C10_CUDA_CHECK(cudaStreamSynchronize(stream())); }
  operator cudaStream_t() const { return stream(); }
};

inline CUDAStream getCurrentCUDAStream(c10::DeviceIndex = -1) { return {}; }

}  // namespace c10::cuda
