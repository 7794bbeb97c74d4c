// Stand-in for c10/cuda/CUDAGraphsC10Utils.h in the CPU emulator's build (tests/cuda_emu): the
// emulated stream captures when a test says so (torch.ops.structops_emu_checks.set_capturing), so
// the host glue's graph-capture paths run too.
#pragma once

namespace c10::cuda {

enum class CaptureStatus { None, Active, Invalidated };
inline CaptureStatus& emulated_capture_status() {
  static CaptureStatus status = CaptureStatus::None;
  return status;
}
inline CaptureStatus currentStreamCaptureStatusMayInitCtx() { return emulated_capture_status(); }

}  // namespace c10::cuda
