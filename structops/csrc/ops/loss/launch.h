// What the CUDA host glue of mse_loss, binary_cross_entropy and cross_entropy_loss
// (cuda_host.cpp) hands to the torch-free device code (cuda.cu): plain data,
// so nvcc compiles the kernels without torch (ARCHITECTURE decision 6).
#pragma once

#include <cstdint>

#include <structgen/pointwise/launch.h>  // Dtype
#include <ops/runtime_names.h>

namespace structops {

enum class LossOp : int8_t { Mse, BinaryCrossEntropy };

// Element losses of n contiguous elements (self, target and weight already broadcast), written
// (reduction 0) or summed (2) or averaged (1) into out[0].
struct LossLaunch {
  Dtype dtype;  // float32/64, float16 or bfloat16
  LossOp op;
  int64_t n = 0;
  int64_t reduction = 1;
  const void* self = nullptr;
  const void* target = nullptr;
  const void* weight = nullptr;  // binary_cross_entropy, may be null
  void* out = nullptr;
  bool trap_on_bad = false;  // capturing a graph: a bad value stops the kernel (__trap), `bad` cannot be read
  int32_t* bad = nullptr;    // binary_cross_entropy (device int, zeroed by the glue): bit 0 set if a self
                             // value, bit 1 if a target value is outside [0, 1]
  void* workspace = nullptr;  // loss_workspace_bytes(): per-block partial sums
  void* stream = nullptr;     // cudaStream_t
};

// cross_entropy_loss over a contiguous self [N, C, S]: one log-softmax over the C classes (stride S)
// per sample (n, s); targets are class indices (int64, [N, S]) or probabilities (like self).
struct CrossEntropyLaunch {
  Dtype dtype;
  int64_t N = 1, C = 0, S = 1;
  bool probabilities = false;
  int64_t ignore_index = -100;
  double label_smoothing = 0;
  int64_t reduction = 1;
  const void* self = nullptr;
  const void* target = nullptr;
  const void* weight = nullptr;  // [C] or null
  void* out = nullptr;           // [N, S] (reduction 0) or one value
  bool trap_on_bad = false;      // capturing a graph: a bad target stops the kernel (__trap)
  int64_t* first_bad = nullptr;  // class targets: lowered to the first sample whose target is not a class
                                 // or ignore_index (a device int64 the glue sets to N * S)
  void* workspace = nullptr;     // loss_workspace_bytes()
  void* stream = nullptr;        // cudaStream_t
};

namespace cuda_kernels {
// Workspace bytes of the reductions (0 for reduction none): the same for both launches.
int64_t loss_workspace_bytes(int64_t reduction);
// Launch on p.stream; return nullptr or the CUDA error string.
const char* loss(const LossLaunch& p);
const char* cross_entropy(const CrossEntropyLaunch& p);
}  // namespace cuda_kernels

}  // namespace structops
