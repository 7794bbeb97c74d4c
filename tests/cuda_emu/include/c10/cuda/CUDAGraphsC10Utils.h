// Stand-in for c10/cuda/CUDAGraphsC10Utils.h in the CPU emulator's build (tests/cuda_emu): the
// emulated stream never captures.
#pragma once

namespace c10::cuda {

enum class CaptureStatus { None, Active, Invalidated };
inline CaptureStatus currentStreamCaptureStatusMayInitCtx() { return CaptureStatus::None; }

}  // namespace c10::cuda
