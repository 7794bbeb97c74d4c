// What the CUDA host glue of the row ops (softmax, log_softmax, layer_norm, rms_norm, logsumexp, var, std)
// and batch_norm (cuda_host.cpp) hands to the torch-free device code (cuda.cu): plain data, so
// nvcc compiles the kernels without torch (ARCHITECTURE decision 6).
#pragma once

#include <cstdint>

#include <structgen/pointwise/launch.h>  // Dtype
#include <ops/runtime_names.h>

namespace structops {

enum class RowOp : int8_t { Softmax, LogSoftmax, LayerNorm, LogSumExp, Var, Std, RmsNorm };

// Row-wise work over `rows` contiguous rows of `n` elements: softmax along the last dim and
// layer_norm over the normalised dims write rows (weight/bias may be null, mean/rstd are per
// row); rms_norm writes rows and rstd in the compute dtype (float for half/bfloat16; no mean, no
// bias); logsumexp, var and std write one value per row into `out`.
struct RowLaunch {
  Dtype dtype;
  RowOp op;
  int64_t rows = 0, n = 0;
  const void* in = nullptr;
  void* out = nullptr;
  const void* weight = nullptr;
  const void* bias = nullptr;
  void* mean = nullptr;
  void* rstd = nullptr;
  double eps = 0;
  double correction = 1;      // var/std: divide by max(0, n - correction)
  void* workspace = nullptr;  // row_workspace_bytes() bytes: the multi-block path's partials
  void* stream = nullptr;     // cudaStream_t
};

// Batch normalisation of a contiguous [N, C, S] input (S: the trailing dims flattened) per channel
// c: out = (x - mean[c]) * invstd[c] * weight[c] + bias[c]. Training: mean and the biased variance
// from the batch, written to save_mean / save_invstd, and running_mean / running_var (if given)
// updated in place with momentum (the variance unbiased). Evaluation: the running statistics.
// Every pointer but in/out/workspace may be null (weight 1, bias 0); all hold `dtype`, contiguous.
struct BatchNormLaunch {
  Dtype dtype;
  int64_t N = 0, C = 0, S = 1;
  bool training = true;
  double momentum = 0.1, eps = 1e-5;
  const void* in = nullptr;
  void* out = nullptr;
  const void* weight = nullptr;
  const void* bias = nullptr;
  void* running_mean = nullptr;
  void* running_var = nullptr;
  void* save_mean = nullptr;
  void* save_invstd = nullptr;
  void* workspace = nullptr;  // batch_norm_workspace_bytes() bytes on the current device
  void* stream = nullptr;     // cudaStream_t
};

namespace cuda_kernels {
int64_t row_workspace_bytes(const RowLaunch& p);
const char* rows(const RowLaunch& p);
int64_t batch_norm_workspace_bytes(const BatchNormLaunch& p);
// Launches on p.stream; returns nullptr or the CUDA error string.
const char* batch_norm(const BatchNormLaunch& p);
}  // namespace cuda_kernels

}  // namespace structops
