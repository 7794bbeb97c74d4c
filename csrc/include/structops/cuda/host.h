// What the CUDA host glue (csrc/ops/*/cuda_host.cpp) asks of the current stream. CUDA torch only; the
// CPU emulator's build (tests/cuda_emu) has stand-ins for c10/cuda.
#pragma once

#include <c10/cuda/CUDAGraphsC10Utils.h>

namespace structops::cuda_host {

// True while the current stream records a CUDA graph (torch.cuda.graph, torch.compile's
// "reduce-overhead"): no host synchronisation is allowed then, so the glue reads no device flag
// and copies nothing to the host; data checks move into the kernels, which stop with __trap() on
// a bad value, as torch's device-side asserts do.
inline bool capturing() {
  return c10::cuda::currentStreamCaptureStatusMayInitCtx() != c10::cuda::CaptureStatus::None;
}

}  // namespace structops::cuda_host
