// Stand-in for c10/cuda/CUDAGraphsC10Utils.h in the CPU emulator's build (tests/cuda_emu): the
// emulated stream captures when a test says so (torch.ops.<project>_emu_checks.set_capturing), so
// the host glue's graph-capture paths run too, and host synchronisations fail meanwhile.
#pragma once

#include <cuda_runtime.h>

namespace c10::cuda {

enum class CaptureStatus { None, Active, Invalidated };
inline CaptureStatus currentStreamCaptureStatusMayInitCtx() {
  return structgen::emu::capturing() ? CaptureStatus::Active : CaptureStatus::None;
}

}  // namespace c10::cuda
