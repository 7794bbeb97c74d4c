// Device side of the CUDA reductions (sum, mean, prod, amax, amin, all, any, vector norms,
// argmax/argmin): CUDA and our own headers only, no torch (ARCHITECTURE decision 6). The host
// glue (cuda_host.cpp) lays the input out as [outer, n, inner] (ops/reduce/launch.h); three
// kernels cover it, for every fold (an Op: its accumulator, identity, combine, how an element at
// position i along n is loaded, how a result is finished and how partials are merged):
//   warp_rows:  inner == 1, short rows (n <= kWarpRowMax): one warp per row, shuffles only; rows
//               of at most 16 take a group of lanes (the power of two >= n), several per warp;
//   block_rows: inner == 1, long rows: one block per row (or per row chunk: the two-pass path for
//               few long rows, whose per-chunk partials a second warp_rows-style pass merges);
//               256 threads, or 128/512 for sum's kernel variants (ReduceLaunch::block);
//               4 independent accumulators per thread, warp shuffles, one shared-memory step;
//   columns:    inner > 1 (the reduced dims between or outside kept ones, read in place): a block
//               takes W = min(inner, 32) adjacent columns and 256 / W rows at a time, so a warp
//               loads one contiguous run (32 columns of a row, or whole narrow rows); few columns
//               split n over several blocks, and a second columns pass merges the partials.
// half and bfloat16 accumulate in float, float in float, double in double, int64 in int64;
// argmax/argmin accumulate (value, position) pairs. The merge order depends only on the shape and
// the SM count, so results are reproducible.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include <structgen/cuda/launch.cuh>
#include <structgen/cuda/block_reduce.cuh>
#include <ops/reduce/launch.h>
#include <ops/runtime_names.h>

namespace structops::cuda_kernels {
namespace {

constexpr int kWarpRowMax = 256;           // rows up to this length take one warp each
constexpr int64_t kSplitMinChunk = 32768;  // two-pass rows: at least this many elements per chunk
constexpr int64_t kColumnMinChunk = 256;   // two-pass columns: at least this many rows per chunk

// any(): a logical or of values that are 0 or 1.
template <typename A>
struct OrOp {
  __device__ A identity() const { return A(0); }
  __device__ A combine(A a, A b) const { return a > b ? a : b; }
};

// What is folded per element (load) and how rows end (finish) beyond combine: norms fold |x|,
// x^2 or |x|^p and take the root at the end; mean divides.
template <typename A, typename Op>
struct MergeOnly;

template <typename A, typename Op>
struct Folded {
  using Acc = A;
  Op op;
  int kind;  // 0: x, 1: |x|, 2: x^2, 3: |x|^p, 4: x != 0
  A p;
  __device__ A identity() const { return op.identity(); }
  __device__ A combine(A a, A b) const { return op.combine(a, b); }
  template <typename In>
  __device__ A load(In element, int64_t /*position*/) const {
    const A x = static_cast<A>(element);
    const A ax = x < A(0) ? -x : x;
    switch (kind) {
      case 1:
        return ax;
      case 2:
        return x * x;
      case 3:
        if constexpr (std::is_floating_point_v<A>) return pow(ax, p);
        return ax;
      case 4:
        return x != A(0) ? A(1) : A(0);
      default:
        return x;
    }
  }
  template <typename Out>
  __device__ Out finish(A a, ReduceOp kind, int64_t n) const {
    if (kind == ReduceOp::Mean) return static_cast<Out>(a / static_cast<A>(n));  // n == 0: NaN, as torch
    if constexpr (std::is_floating_point_v<A>) {
      if (kind == ReduceOp::Norm2) return static_cast<Out>(sqrt(a));
      if (kind == ReduceOp::NormP) return static_cast<Out>(pow(a, A(1) / p));
    }
    return static_cast<Out>(a);
  }
  __device__ __host__ MergeOnly<A, Op> merge() const { return {*this}; }
};

// The second pass of the two-pass path folds partials, which are already loaded.
template <typename A, typename Op>
struct MergeOnly {
  using Acc = A;
  Folded<A, Op> folded;  // finish still needs NormP's exponent
  __device__ A identity() const { return folded.identity(); }
  __device__ A combine(A a, A b) const { return folded.combine(a, b); }
  __device__ A load(A x, int64_t /*position*/) const { return x; }
  template <typename Out>
  __device__ Out finish(A a, ReduceOp kind, int64_t n) const {
    return folded.template finish<Out>(a, kind, n);
  }
};

// argmax/argmin: (value, position) pairs; a NaN beats every number and the first position wins
// ties, as torch.argmax/argmin, which makes combine associative and commutative: any merge order
// gives the same index.
template <typename A>
struct ValueAt {
  A value;
  int64_t at;
};

template <typename A>
__device__ ValueAt<A> shfl_down(ValueAt<A> v, int offset) {
  return {__shfl_down_sync(0xffffffffu, v.value, offset), __shfl_down_sync(0xffffffffu, v.at, offset)};
}
using cuda_kernels::shfl_down;  // the scalar one, beside this overload

template <typename A, bool kMax>
struct ArgOp {
  using Acc = ValueAt<A>;
  __device__ Acc identity() const { return {ExtremeOp<A, kMax>{}.identity(), INT64_MAX}; }
  __device__ Acc combine(Acc a, Acc b) const {
    const bool a_nan = a.value != a.value, b_nan = b.value != b.value;
    bool take_b;
    if (a_nan || b_nan) {
      take_b = b_nan && (!a_nan || b.at < a.at);
    } else {
      take_b = (kMax ? b.value > a.value : b.value < a.value) || (b.value == a.value && b.at < a.at);
    }
    return take_b ? b : a;
  }
  __device__ Acc load(Acc partial, int64_t /*position*/) const { return partial; }
  template <typename In>
  __device__ Acc load(In element, int64_t position) const {
    return {static_cast<A>(element), position};
  }
  template <typename Out>
  __device__ Out finish(Acc a, ReduceOp /*kind*/, int64_t /*n*/) const {
    return a.at;
  }
  __device__ __host__ ArgOp merge() const { return *this; }
};

// 2^shift lanes (at most a warp) per row of `n` elements of `in`: the input (In = T), or in the
// two-pass path the chunk partials (In = Op::Acc); results are finished as means of `count`
// elements. A warp's lanes take its rows together (the shuffles need every lane), so a lane past
// the last row folds nothing and writes nothing. kShift >= 0 fixes the group at compile time (a
// warp per row: constant strides and an unrolled shuffle tree); -1 takes `shift` (rows of <= 16).
// Measured on an H100: with the group a runtime divisor, rows of 100 ran 2x slower than a warp.
template <int kShift, typename Out, typename In, typename Op>
__global__ void __launch_bounds__(kBlock)
    warp_rows_kernel(const In* __restrict__ in, Out* __restrict__ out, int64_t rows, int64_t n, int64_t count,
                     int shift, ReduceOp kind, Op op) {
  using A = typename Op::Acc;
  if constexpr (kShift >= 0) shift = kShift;
  const int group = 1 << shift, lane = threadIdx.x & (group - 1), rows_per_warp = kWarp >> shift;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (kBlock / kWarp);
  const int64_t first =
      (static_cast<int64_t>(blockIdx.x) * (kBlock / kWarp) + threadIdx.x / kWarp) * rows_per_warp;
  for (int64_t base = first; base < rows; base += warps * rows_per_warp) {
    const int64_t row = base + ((threadIdx.x & (kWarp - 1)) >> shift);
    A acc = op.identity();
    if (row < rows) {
      const In* x = in + row * n;
      for (int64_t i = lane; i < n; i += group) acc = op.combine(acc, op.load(x[i], i));
    }
#pragma unroll
    for (int offset = group / 2; offset > 0; offset /= 2) acc = op.combine(acc, shfl_down(acc, offset));
    if (lane == 0 && row < rows) out[row] = op.template finish<Out>(acc, kind, count);
  }
}

constexpr int kWarpShift = 5;  // log2(kWarp)
static_assert(1 << kWarpShift == kWarp);

// log2 of the lanes per short row: the power of two >= n, at most a warp.
int lane_shift_for(int64_t n) {
  int shift = 0;
  while ((int64_t{1} << shift) < n && shift < kWarpShift) ++shift;
  return shift;
}

// One block per (row, chunk): with splits == 1 it writes the row's result, otherwise the chunk's
// partial accumulator into `partial[row * splits + chunk]`.
template <int Block, typename T, typename Out, typename Op>
__global__ void __launch_bounds__(Block)
    block_rows_kernel(const T* __restrict__ in, Out* __restrict__ out, typename Op::Acc* __restrict__ partial,
                      int64_t rows, int64_t n, int splits, ReduceOp kind, Op op) {
  using A = typename Op::Acc;
  SO_SHARED(A, shared, [kWarp]);
  const int64_t chunk = (n + splits - 1) / splits;
  for (int64_t task = blockIdx.x; task < rows * splits; task += gridDim.x) {
    const int64_t row = task / splits, lo = (task % splits) * chunk, hi = min(n, lo + chunk);
    const T* x = in + row * n;
    A a0 = op.identity(), a1 = a0, a2 = a0, a3 = a0;  // independent chains: loads overlap
    const int64_t step = blockDim.x;
    int64_t i = lo + threadIdx.x;
    for (; i + 3 * step < hi; i += 4 * step) {
      a0 = op.combine(a0, op.load(x[i], i));
      a1 = op.combine(a1, op.load(x[i + step], i + step));
      a2 = op.combine(a2, op.load(x[i + 2 * step], i + 2 * step));
      a3 = op.combine(a3, op.load(x[i + 3 * step], i + 3 * step));
    }
    for (; i < hi; i += step) a0 = op.combine(a0, op.load(x[i], i));
    const A acc = block_reduce(op.combine(op.combine(a0, a1), op.combine(a2, a3)), op, shared);
    if (threadIdx.x == 0) {
      if (splits == 1) {
        out[row] = op.template finish<Out>(acc, kind, n);
      } else {
        partial[task] = acc;
      }
    }
  }
}

// [outer, n, inner] with inner > 1, in `width`-column tiles: thread t takes column t % width of
// the tile and every (kBlock / width)-th row from t / width, so consecutive threads read
// consecutive addresses; four rows at a time, into independent accumulators, so that four loads
// are in flight per thread. Task (o, s, tile) folds rows chunk s of n; with splits == 1 it writes
// the result, else the partial accumulator at partial[(o * splits + s) * inner + column], which a
// second launch (In = Op::Acc, the merge op, n = splits) folds in chunk order. `count`: mean's n.
template <typename Out, typename In, typename Op>
__global__ void __launch_bounds__(kBlock)
    columns_kernel(const In* __restrict__ in, Out* __restrict__ out, typename Op::Acc* __restrict__ partial,
                   int64_t outer, int64_t n, int64_t inner, int width, int splits, int64_t count,
                   ReduceOp kind, Op op) {
  using A = typename Op::Acc;
  SO_SHARED(A, shared, [kBlock]);
  const int rows_per_step = kBlock / width, c = threadIdx.x % width, r = threadIdx.x / width;
  const int64_t tiles = (inner + width - 1) / width, chunk = (n + splits - 1) / splits;
  for (int64_t task = blockIdx.x; task < outer * splits * tiles; task += gridDim.x) {
    const int64_t tile = task % tiles, s = task / tiles % splits, o = task / tiles / splits;
    const int64_t col = tile * width + c, lo = s * chunk, hi = min(n, lo + chunk);
    A acc = op.identity();
    if (r < rows_per_step && col < inner) {
      const In* x = in + o * n * inner + col;
      const int64_t step = rows_per_step;
      A a1 = acc, a2 = acc, a3 = acc;
      int64_t j = lo + r;
      for (; j + 3 * step < hi; j += 4 * step) {
        acc = op.combine(acc, op.load(x[j * inner], j));
        a1 = op.combine(a1, op.load(x[(j + step) * inner], j + step));
        a2 = op.combine(a2, op.load(x[(j + 2 * step) * inner], j + 2 * step));
        a3 = op.combine(a3, op.load(x[(j + 3 * step) * inner], j + 3 * step));
      }
      for (; j < hi; j += step) acc = op.combine(acc, op.load(x[j * inner], j));
      acc = op.combine(op.combine(acc, a1), op.combine(a2, a3));
    }
    shared[threadIdx.x] = acc;
    __syncthreads();
    if (r == 0 && col < inner) {
      for (int k = 1; k < rows_per_step; ++k) acc = op.combine(acc, shared[k * width + c]);
      if (splits == 1) {
        out[o * inner + col] = op.template finish<Out>(acc, kind, count);
      } else {
        partial[(o * splits + s) * inner + col] = acc;
      }
    }
    __syncthreads();  // shared is rewritten by the next task
  }
}

int column_width(const ReduceLaunch& p) { return static_cast<int>(std::min<int64_t>(p.inner, kWarp)); }

// Few column tiles cannot fill the GPU one block each: split n into chunks (two passes).
int column_splits(const ReduceLaunch& p) {
  const int64_t sms = sm_count(), tiles = (p.inner + column_width(p) - 1) / column_width(p);
  const int64_t blocks = p.outer * tiles;
  if (blocks >= 2 * sms || p.n < 2 * kColumnMinChunk) return 1;
  const int64_t to_fill = (4 * sms + blocks - 1) / blocks, by_size = p.n / kColumnMinChunk;
  return static_cast<int>(std::clamp<int64_t>(std::min(to_fill, by_size), 1, 1024));
}

// Few long rows cannot fill the GPU one block per row: split each into chunks (two passes).
int splits_for(const ReduceLaunch& p) {
  const int64_t sms = sm_count();
  using Passes = ReduceLaunch::Passes;
  if (p.inner > 1 || p.n <= kWarpRowMax || p.passes == Passes::OnePass) return 1;
  if (p.outer >= 2 * sms && p.passes == Passes::Auto) return 1;
  const int64_t by_size = std::max<int64_t>(p.n / kSplitMinChunk, p.passes == Passes::TwoPass ? 2 : 1);
  const int64_t to_fill =
      std::max<int64_t>((4 * sms + p.outer - 1) / p.outer, p.passes == Passes::TwoPass ? 2 : 1);
  return static_cast<int>(std::clamp<int64_t>(std::min(by_size, to_fill), 1, 1024));
}

// `Out`: T for the folds, int64_t for argmax/argmin.
template <typename T, typename Out, typename Op>
void launch(const ReduceLaunch& p, Op op) {
  using A = typename Op::Acc;
  auto stream = static_cast<cudaStream_t>(p.stream);
  const T* in = static_cast<const T*>(p.in);
  Out* out = static_cast<Out*>(p.out);
  auto* partial = static_cast<A*>(p.workspace);
  if (p.inner > 1) {
    const int width = column_width(p), splits = column_splits(p);
    const int64_t tiles = (p.inner + width - 1) / width;
    SO_LAUNCH(grid_for(p.outer * splits * tiles, 8), kBlock, 0, stream, columns_kernel<Out, T, Op>)(
        in, out, partial, p.outer, p.n, p.inner, width, splits, p.n, p.op, op);
    if (splits > 1) {  // second pass: the chunks' partials, [outer, splits, inner], folded in order
      SO_LAUNCH(grid_for(p.outer * tiles, 8), kBlock, 0, stream,
                columns_kernel<Out, A, decltype(op.merge())>)(partial, out, nullptr, p.outer, splits, p.inner,
                                                              width, 1, p.n, p.op, op.merge());
    }
    return;
  }
  if (p.n <= kWarpRowMax) {
    const int shift = lane_shift_for(p.n);
    const int64_t rows_per_block = kBlock >> shift, blocks = (p.outer + rows_per_block - 1) / rows_per_block;
    if (shift == kWarpShift) {
      SO_LAUNCH(grid_for(blocks, 8), kBlock, 0, stream, warp_rows_kernel<kWarpShift, Out, T, Op>)(
          in, out, p.outer, p.n, p.n, shift, p.op, op);
    } else {
      SO_LAUNCH(grid_for(blocks, 8), kBlock, 0, stream, warp_rows_kernel<-1, Out, T, Op>)(
          in, out, p.outer, p.n, p.n, shift, p.op, op);
    }
    return;
  }
  const int splits = splits_for(p);
  auto rows = [&]<int Block>() {
    SO_LAUNCH(grid_for(p.outer * splits, 8), Block, 0, stream, block_rows_kernel<Block, T, Out, Op>)(
        in, out, partial, p.outer, p.n, splits, p.op, op);
  };
  // Other block sizes only for the sum-like folds (sum's kernel variants; mean and norms share the type).
  if constexpr (std::is_same_v<Op, Folded<A, SumOp<A>>>) {
    if (p.block == 128)
      rows.template operator()<128>();
    else if (p.block == 512)
      rows.template operator()<512>();
    else
      rows.template operator()<kBlock>();
  } else {
    rows.template operator()<kBlock>();
  }
  if (splits > 1) {  // second pass: one warp merges a row's partials in a fixed order
    const int64_t blocks = (p.outer + kBlock / kWarp - 1) / (kBlock / kWarp);
    SO_LAUNCH(grid_for(blocks, 8), kBlock, 0, stream,
              warp_rows_kernel<kWarpShift, Out, A, decltype(op.merge())>)(partial, out, p.outer, splits, p.n,
                                                                          kWarpShift, p.op, op.merge());
  }
}

template <typename T>
void run(const ReduceLaunch& p) {
  using A = acc_t<T>;
  const A power = static_cast<A>(p.p);
  switch (p.op) {
    case ReduceOp::Sum:
    case ReduceOp::Mean:
      launch<T, T>(p, Folded<A, SumOp<A>>{{}, 0, power});
      break;
    case ReduceOp::Prod:
      launch<T, T>(p, Folded<A, ProdOp<A>>{{}, 0, power});
      break;
    case ReduceOp::Max:
      launch<T, T>(p, Folded<A, ExtremeOp<A, true>>{{}, 0, power});
      break;
    case ReduceOp::Min:
      launch<T, T>(p, Folded<A, ExtremeOp<A, false>>{{}, 0, power});
      break;
    case ReduceOp::Norm0:  // the count of nonzeros
      launch<T, T>(p, Folded<A, SumOp<A>>{{}, 4, power});
      break;
    case ReduceOp::Any:  // the max of (x != 0): 0 or 1 in any dtype (a count wraps in uint8); 0 when empty
      launch<T, T>(p, Folded<A, OrOp<A>>{{}, 4, power});
      break;
    case ReduceOp::All:  // the product of (x != 0): 1 for an empty reduction
      launch<T, T>(p, Folded<A, ProdOp<A>>{{}, 4, power});
      break;
    case ReduceOp::Norm1:
      launch<T, T>(p, Folded<A, SumOp<A>>{{}, 1, power});
      break;
    case ReduceOp::Norm2:
      launch<T, T>(p, Folded<A, SumOp<A>>{{}, 2, power});
      break;
    case ReduceOp::NormP:
      launch<T, T>(p, Folded<A, SumOp<A>>{{}, 3, power});
      break;
    case ReduceOp::NormInf:
      launch<T, T>(p, Folded<A, ExtremeOp<A, true>>{{}, 1, power});
      break;
    case ReduceOp::NormNegInf:
      launch<T, T>(p, Folded<A, ExtremeOp<A, false>>{{}, 1, power});
      break;
    case ReduceOp::LogSumExp:  // complex rows only (complex_rows); never a real reduction here
      break;
  }
}

}  // namespace

const char* arg_reduce(const ReduceLaunch& p) {
  if (p.outer * p.inner == 0) return nullptr;
  return launch_for_dtype<true>(p.dtype, "dtype not supported by the CUDA argmax/argmin kernel",
                                [&](auto tag) {
                                  using T = decltype(tag);
                                  if (p.op == ReduceOp::Max) {
                                    launch<T, int64_t>(p, ArgOp<acc_t<T>, true>{});
                                  } else {
                                    launch<T, int64_t>(p, ArgOp<acc_t<T>, false>{});
                                  }
                                });
}

int64_t reduce_workspace_bytes(const ReduceLaunch& p) {
  const int splits = p.inner > 1 ? column_splits(p) : splits_for(p);
  constexpr int64_t widest = sizeof(ValueAt<double>);  // argmax's (double, int64) pairs
  return splits > 1 ? p.outer * splits * p.inner * widest : 0;
}

// Sum and prod of an integer or bool input into int64 (ReduceLaunch::widen_in): the input read in
// its own type, each element widened by Folded::load.
const char* widened_to_int64(const ReduceLaunch& p) {
  const auto fold = [&](auto in) {
    using In = decltype(in);
    if (p.op == ReduceOp::Prod) {
      launch<In, int64_t>(p, Folded<int64_t, ProdOp<int64_t>>{{}, 0, 0});
    } else {
      launch<In, int64_t>(p, Folded<int64_t, SumOp<int64_t>>{{}, 0, 0});
    }
  };
  switch (p.in_dtype) {
    case Dtype::Bool:
    case Dtype::UInt8:
      fold(uint8_t{});
      break;
    case Dtype::Int8:
      fold(int8_t{});
      break;
    case Dtype::Int16:
      fold(int16_t{});
      break;
    case Dtype::Int32:
      fold(int32_t{});
      break;
    case Dtype::Int64:
      fold(int64_t{});
      break;
    default:
      return "input dtype not supported by the CUDA integer reductions";
  }
  const cudaError_t error = cudaGetLastError();
  return error == cudaSuccess ? nullptr : cudaGetErrorString(error);
}

const char* reduce(const ReduceLaunch& p) {
  if (p.outer * p.inner == 0) return nullptr;
  if (p.widen_in) return widened_to_int64(p);
  return launch_for_dtype<true>(p.dtype, "dtype not supported by the CUDA reduction kernels",
                                [&](auto tag) { run<decltype(tag)>(p); });
}

}  // namespace structops::cuda_kernels
