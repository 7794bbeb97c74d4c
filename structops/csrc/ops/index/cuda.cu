// Device side of index_select, embedding, take and gather (ops/index/launch.h): CUDA and our
// own headers only, no torch (ARCHITECTURE decision 6). One thread per output element in
// grid-stride loops; adjacent threads write adjacent output elements (coalesced stores; the reads
// are gathers). Offsets into self are 64-bit always; the divisions that split an output position
// into coordinates use uint32 where every output position fits (cheaper than 64-bit division).
// Elements are moved as unsigned integers of their size (a 16-byte struct for complex128).
// masked_select: per chunk, a count (block reduction), then, after the host glue's prefix sum, an
// ordered write: warp ballots and popcounts rank each true element within its tile of kBlock.
// embedding_bag (at the end) computes: a warp per bag, the lanes over the row's d columns (coalesced
// reads of each picked row), the bag's indices walked in order per column, in acc_t.
#include <cstdint>

#include <structgen/cuda/block_reduce.cuh>  // kBlock, grid_for
#include <structgen/cuda/launch.cuh>
#include <ops/index/launch.h>
#include <ops/runtime_names.h>

namespace structops::cuda_kernels {
namespace {

struct alignas(16) Bytes16 {
  uint64_t lo, hi;
};

template <typename N>
__device__ N first_index() {
  return static_cast<N>(blockIdx.x) * blockDim.x + threadIdx.x;
}
template <typename N>
__device__ N grid_stride() {
  return static_cast<N>(gridDim.x) * blockDim.x;
}

template <typename T, typename I, typename N>
__global__ void __launch_bounds__(kBlock)
    select_kernel(const T* __restrict__ self, const I* __restrict__ index, T* __restrict__ out, N numel,
                  int64_t size, N n, N inner) {
  for (N e = first_index<N>(); e < numel; e += grid_stride<N>()) {
    const N row = e / inner, k = e - row * inner;
    const N o = row / n, i = row - o * n;
    const int64_t v = index[i];
    if (v < 0 || v >= size) __trap();  // checked by the host glue, except while capturing a graph
    out[e] = self[(static_cast<int64_t>(o) * size + v) * static_cast<int64_t>(inner) + k];
  }
}

template <typename T, typename N>
__global__ void __launch_bounds__(kBlock)
    take_kernel(const T* __restrict__ self, const int64_t* __restrict__ index, T* __restrict__ out, N numel,
                int64_t size) {
  for (N e = first_index<N>(); e < numel; e += grid_stride<N>()) {
    const int64_t v = index[e];
    if (v < -size || v >= size) __trap();  // checked by the host glue, except while capturing a graph
    out[e] = self[v < 0 ? v + size : v];
  }
}

template <typename T, typename I, typename N>
__global__ void __launch_bounds__(kBlock) gather_kernel(IndexLaunch p) {
  const T* self = static_cast<const T*>(p.self);
  const I* index = static_cast<const I*>(p.index);
  T* out = static_cast<T*>(p.out);
  for (N e = first_index<N>(); e < static_cast<N>(p.numel); e += grid_stride<N>()) {
    N rem = e;
    const int64_t v = index[e];
    if (v < 0 || v >= p.size) __trap();  // checked by the host glue, except while capturing a graph
    int64_t offset = v * p.self_strides[p.dim];
    for (int d = p.ndim - 1; d >= 0; --d) {
      const N size = static_cast<N>(p.sizes[d]);
      const N q = rem / size;
      if (d != p.dim) offset += static_cast<int64_t>(rem - q * size) * p.self_strides[d];
      rem = q;
    }
    out[e] = self[offset];
  }
}

template <typename T, typename I, typename N>
void launch_typed(const IndexLaunch& p) {
  auto stream = static_cast<cudaStream_t>(p.stream);
  const int grid = grid_for((p.numel + kBlock - 1) / kBlock, 8);
  const T* self = static_cast<const T*>(p.self);
  T* out = static_cast<T*>(p.out);
  switch (p.op) {
    case IndexOp::Select:
      SO_LAUNCH(grid, kBlock, 0, stream, select_kernel<T, I, N>)(
          self, static_cast<const I*>(p.index), out, static_cast<N>(p.numel), p.size, static_cast<N>(p.n),
          static_cast<N>(p.inner));
      break;
    case IndexOp::Take:
      SO_LAUNCH(grid, kBlock, 0, stream, take_kernel<T, N>)(self, static_cast<const int64_t*>(p.index), out,
                                                            static_cast<N>(p.numel), p.size);
      break;
    case IndexOp::Gather:
      SO_LAUNCH(grid, kBlock, 0, stream, gather_kernel<T, I, N>)(p);
      break;
  }
}

template <typename T>
void launch(const IndexLaunch& p) {
  // uint32 positions need every output position and the grid-stride step below 2^32.
  const bool narrow = index_fits(p.numel + static_cast<int64_t>(sm_count()) * 8 * kBlock, int64_t{1} << 32);
  if (p.index_int32) {
    narrow ? launch_typed<T, int32_t, uint32_t>(p) : launch_typed<T, int32_t, int64_t>(p);
  } else {
    narrow ? launch_typed<T, int64_t, uint32_t>(p) : launch_typed<T, int64_t, int64_t>(p);
  }
}

// A warp per bag (kBlock / kWarp bags per block); lane j handles columns j, j + 32, ...
template <typename T, typename I>
__global__ void __launch_bounds__(kBlock) embedding_bag_kernel(EmbeddingBagLaunch p) {
  using A = acc_t<T>;
  const T* weight = static_cast<const T*>(p.weight);
  const I* indices = static_cast<const I*>(p.indices);
  const I* offsets = static_cast<const I*>(p.offsets);
  const T* scale = static_cast<const T*>(p.per_sample_weights);
  T* out = static_cast<T*>(p.out);
  const int lane = threadIdx.x % kWarp;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (kBlock / kWarp);
  for (int64_t b = static_cast<int64_t>(blockIdx.x) * (kBlock / kWarp) + threadIdx.x / kWarp; b < p.bags;
       b += warps) {
    const int64_t begin = offsets[b], end = b + 1 < p.noff ? static_cast<int64_t>(offsets[b + 1]) : p.n;
    // the host checks these, except while capturing a graph: offsets[0] == 0, in order, in range
    if ((b == 0 && begin != 0) || begin < 0 || begin > end || end > p.n) __trap();
    for (int64_t j = lane; j < p.d; j += kWarp) {
      A acc = A(0);
      for (int64_t k = begin; k < end; ++k) {
        const int64_t row = indices[k];
        if (row < 0 || row >= p.rows) __trap();
        const A x = static_cast<A>(weight[row * p.d + j]);
        if (p.mode == 2)
          acc = k == begin || x > acc ? x : acc;  // max as torch: NaN never replaces, and stays
        else
          acc += scale ? x * static_cast<A>(scale[k]) : x;
      }
      if (p.mode == 1 && end > begin) acc /= static_cast<A>(end - begin);
      out[b * p.d + j] = static_cast<T>(acc);
    }
  }
}

template <typename T>
void launch_embedding_bag(const EmbeddingBagLaunch& p) {
  constexpr int kBagsPerBlock = kBlock / kWarp;
  const int grid = grid_for((p.bags + kBagsPerBlock - 1) / kBagsPerBlock, 8);
  auto stream = static_cast<cudaStream_t>(p.stream);
  if (p.index_int32)
    SO_LAUNCH(grid, kBlock, 0, stream, embedding_bag_kernel<T, int32_t>)(p);
  else
    SO_LAUNCH(grid, kBlock, 0, stream, embedding_bag_kernel<T, int64_t>)(p);
}

__host__ __device__ inline int64_t masked_select_chunks(int64_t numel) {
  return (numel + kMaskedSelectChunk - 1) / kMaskedSelectChunk;
}

__global__ void __launch_bounds__(kBlock) masked_count_kernel(MaskedSelectLaunch p) {
  SO_SHARED(int64_t, shared, [kWarp]);
  const int64_t chunks = masked_select_chunks(p.numel);
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {  // uniform across the block
    const int64_t lo = c * kMaskedSelectChunk, hi = min(p.numel, lo + kMaskedSelectChunk);
    int64_t count = 0;
    for (int64_t i = lo + threadIdx.x; i < hi; i += blockDim.x) count += p.mask[i] ? 1 : 0;
    count = block_reduce(count, SumOp<int64_t>{}, shared);
    if (threadIdx.x == 0) p.counts[c] = count;
  }
}

template <typename T>
__global__ void __launch_bounds__(kBlock) masked_write_kernel(MaskedSelectLaunch p) {
  SO_SHARED(int, warp_totals, [kBlock / kWarp]);
  const T* self = static_cast<const T*>(p.self);
  T* out = static_cast<T*>(p.out);
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const int64_t chunks = masked_select_chunks(p.numel);
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {  // uniform across the block
    const int64_t lo = c * kMaskedSelectChunk, hi = min(p.numel, lo + kMaskedSelectChunk);
    int64_t at = c == 0 ? 0 : p.counts[c - 1];  // inclusive prefix sums of the counts
    for (int64_t base = lo; base < hi; base += kBlock) {
      const int64_t i = base + threadIdx.x;
      const bool take = i < hi && p.mask[i];
      const unsigned ballot = __ballot_sync(0xffffffffu, take);
      if (lane == 0) warp_totals[warp] = __popc(ballot);
      __syncthreads();
      int before = 0, total = 0;
#pragma unroll
      for (int w = 0; w < kBlock / kWarp; ++w) {
        if (w == warp) before = total;
        total += warp_totals[w];
      }
      if (take) out[at + before + __popc(ballot & ((1u << lane) - 1u))] = self[i];
      at += total;
      __syncthreads();  // warp_totals is rewritten by the next tile
    }
  }
}

}  // namespace

const char* masked_select_count(const MaskedSelectLaunch& p) {
  if (p.numel == 0) return nullptr;
  SO_LAUNCH(grid_for(masked_select_chunks(p.numel), 8), kBlock, 0, static_cast<cudaStream_t>(p.stream),
            masked_count_kernel)(p);
  const cudaError_t error = cudaGetLastError();
  return error == cudaSuccess ? nullptr : cudaGetErrorString(error);
}

const char* masked_select_write(const MaskedSelectLaunch& p) {
  if (p.numel == 0) return nullptr;
  const int grid = grid_for(masked_select_chunks(p.numel), 8);
  auto stream = static_cast<cudaStream_t>(p.stream);
  switch (p.element_size) {
    case 1:
      SO_LAUNCH(grid, kBlock, 0, stream, masked_write_kernel<uint8_t>)(p);
      break;
    case 2:
      SO_LAUNCH(grid, kBlock, 0, stream, masked_write_kernel<uint16_t>)(p);
      break;
    case 4:
      SO_LAUNCH(grid, kBlock, 0, stream, masked_write_kernel<uint32_t>)(p);
      break;
    case 8:
      SO_LAUNCH(grid, kBlock, 0, stream, masked_write_kernel<uint64_t>)(p);
      break;
    case 16:
      SO_LAUNCH(grid, kBlock, 0, stream, masked_write_kernel<Bytes16>)(p);
      break;
    default:
      return "element size not supported by the CUDA masked_select kernel";
  }
  const cudaError_t error = cudaGetLastError();
  return error == cudaSuccess ? nullptr : cudaGetErrorString(error);
}

const char* embedding_bag(const EmbeddingBagLaunch& p) {
  if (p.bags == 0 || p.d == 0) return nullptr;
  return launch_for_dtype<false>(p.dtype, "dtype not supported by the CUDA embedding_bag kernel",
                                 [&](auto tag) { launch_embedding_bag<decltype(tag)>(p); });
}

const char* index(const IndexLaunch& p) {
  if (p.numel == 0) return nullptr;
  switch (p.element_size) {
    case 1:
      launch<uint8_t>(p);
      break;
    case 2:
      launch<uint16_t>(p);
      break;
    case 4:
      launch<uint32_t>(p);
      break;
    case 8:
      launch<uint64_t>(p);
      break;
    case 16:
      launch<Bytes16>(p);
      break;
    default:
      return "element size not supported by the CUDA indexing kernels";
  }
  const cudaError_t error = cudaGetLastError();
  return error == cudaSuccess ? nullptr : cudaGetErrorString(error);
}

}  // namespace structops::cuda_kernels
