// What the CUDA host glue of index_select, gather, take, embedding, embedding_bag and
// masked_select (cuda_host.cpp) hands to the torch-free device code (cuda.cu): plain data, so nvcc compiles
// the kernels without torch (ARCHITECTURE decision 6). The kernels move elements and never compute with them,
// so they see an element size, not a dtype: one instantiation serves float, int32 and complex32 alike. Index
// values have been checked by the host glue before the launch.
#pragma once

#include <cstdint>

#include <structgen/pointwise/launch.h>  // kPointwiseMaxDims
#include <ops/runtime_names.h>

namespace structops {

enum class IndexOp : int8_t {
  // out[o, i, k] = self[o, index[i], k] over a contiguous self [outer, size, inner] and a contiguous
  // out [outer, n, inner]; embedding is the case outer == 1 (self = weight [size, inner]).
  Select,
  // out[e] = self[index[e] (+ size where negative)], self flat and contiguous with `size` elements.
  Take,
  // out (contiguous, `sizes`) = self at out's coordinates with coordinate `dim` replaced by
  // index[e] (index contiguous like out); self is read through `self_strides` (any layout).
  Gather,
};

struct IndexLaunch {
  IndexOp op;
  int element_size = 4;                           // bytes of one element of self and out: 1, 2, 4, 8 or 16
  bool index_int32 = false;                       // the index holds int32 (else int64)
  int64_t numel = 0;                              // elements of out
  int64_t outer = 1, size = 0, n = 0, inner = 1;  // Select, Take; Gather: size = self's size along dim
  int ndim = 0, dim = 0;                          // Gather
  int64_t sizes[kPointwiseMaxDims] = {};
  int64_t self_strides[kPointwiseMaxDims] = {};
  const void* self = nullptr;
  const void* index = nullptr;
  void* out = nullptr;
  void* stream = nullptr;  // cudaStream_t
};

// embedding_bag: bag b of a contiguous weight [rows, d] reduces the rows indices[offsets[b] :
// end_b] (end_b = offsets[b + 1], or n for the last offset) into out[b] (contiguous [bags, d]):
// mode 0 sum (each row scaled by per_sample_weights[k] if given), 1 mean, 2 max; an empty bag is
// zeros. Indices and offsets (both int32 or both int64, contiguous) have been checked by the glue.
struct EmbeddingBagLaunch {
  Dtype dtype;  // weight, per_sample_weights and out: float32/64, float16 or bfloat16
  bool index_int32 = false;
  int64_t rows = 0, d = 0, n = 0, noff = 0, bags = 0;
  int64_t mode = 0;
  const void* weight = nullptr;
  const void* indices = nullptr;
  const void* offsets = nullptr;
  const void* per_sample_weights = nullptr;
  void* out = nullptr;
  void* stream = nullptr;  // cudaStream_t
};

// masked_select over `numel` contiguous elements of self and of a bool mask (both already
// broadcast): chunks of kMaskedSelectChunk elements; pass 1 counts each chunk's true elements into
// `counts`, the host glue turns them into inclusive prefix sums (cumsum's generated scan,
// runtime_kernels_cuda.cu), pass 2 writes each chunk's selected elements from its prefix on, in order.
constexpr int64_t kMaskedSelectChunk = 4096;
struct MaskedSelectLaunch {
  int element_size = 4;
  int64_t numel = 0;
  const void* self = nullptr;
  const bool* mask = nullptr;
  void* out = nullptr;
  int64_t* counts = nullptr;  // (numel + kMaskedSelectChunk - 1) / kMaskedSelectChunk values
  void* stream = nullptr;     // cudaStream_t
};

namespace cuda_kernels {
// Launch on p.stream; return nullptr or the CUDA error string.
const char* index(const IndexLaunch& p);
const char* embedding_bag(const EmbeddingBagLaunch& p);
const char* masked_select_count(const MaskedSelectLaunch& p);
const char* masked_select_write(const MaskedSelectLaunch& p);
}  // namespace cuda_kernels

}  // namespace structops
