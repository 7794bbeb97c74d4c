// What the CUDA host glue of scaled_dot_product_attention (cuda_host.cpp) hands the torch-free
// device code (cuda.cu): plain data, so nvcc compiles the kernel without torch (ARCHITECTURE
// decision 6).
#pragma once

#include <cstdint>

#include <structgen/pointwise/launch.h>  // Dtype
#include <ops/runtime_names.h>

namespace structops {

enum class MaskKind : int8_t { None, Keep, Add };  // no mask; bool (keep where true); added to the scores

// Attention over `heads` (batch, query head) pairs: query [heads, l, e], key [heads / group, s, e],
// value [heads / group, s, ev], out [heads, l, ev] and logsumexp [heads, l], all contiguous and of
// `dtype`; query head h reads key/value head h / group. The mask of head h starts at
// mask + mask_offsets[h] (elements) with strides mask_stride_l, mask_stride_s (0 where it
// broadcasts); Add masks hold the compute type (float for half/bfloat16), Keep masks bool.
struct AttentionLaunch {
  Dtype dtype;
  int64_t heads = 0, group = 1, l = 0, s = 0, e = 0, ev = 0;
  const void* query = nullptr;
  const void* key = nullptr;
  const void* value = nullptr;
  MaskKind mask_kind = MaskKind::None;
  const void* mask = nullptr;
  const int64_t* mask_offsets = nullptr;  // device memory, one per head
  int64_t mask_stride_l = 0, mask_stride_s = 0;
  bool causal = false;  // key j <= query i
  double scale = 1;
  void* out = nullptr;
  void* logsumexp = nullptr;
  void* workspace = nullptr;  // attention_workspace_bytes(): the running outputs in the compute type
  void* stream = nullptr;     // cudaStream_t
};

namespace cuda_kernels {
int64_t attention_workspace_bytes(const AttentionLaunch& p);
// Launches on p.stream; returns nullptr or the CUDA error string.
const char* attention(const AttentionLaunch& p);
}  // namespace cuda_kernels

}  // namespace structops
