// The CPU loop of generated pointwise kernels (codegen/pointwise/, templates/kernels_cpu.cpp.j2),
// without torch: a kernel file includes this header and c10's scalar types only, so it compiles
// in a fraction of the time a torch header costs (ATen/core/Tensor.h alone: ~2.5 s of deferred
// template work per file even precompiled). The host glue (kernels_cpu_host_N.cpp, with
// structgen/cpu/pointwise.h) turns tensors into a RowLaunch and calls the kernel file's launcher.
//
// A kernel is a functor over compute-type values; `run` walks the output and its inputs:
//   1. geometry (cpu::make_geometry, on the host): inputs seen through broadcasting (stride 0),
//      dims ordered by the output's strides (so channels_last and transposed outputs are walked
//      in memory order), size-1 dims dropped and adjacent dims merged where every operand allows;
//   2. rows along the innermost dim, with three inner loops: all operands contiguous, one
//      input broadcast (stride 0) and the rest contiguous, or any strides;
//   3. threads: structgen::parallel_for (parallel.h) over element ranges, respecting
//      torch.set_num_threads; one serial call below the grain size, where starting threads
//      costs more than it saves (the walk over rows is compiled once, runtime/pointwise.cpp).
// The contiguous loops vectorise: the kernel files are built with -O3 -fno-math-errno for the
// building CPU (STRUCTGEN_CPU_ISA=native) or, in a portable build, with the row loops cloned for
// x86-64-v4 (AVX-512, where libmvec has 16-lane exp/erf/...) and x86-64-v3 (AVX2/FMA/F16C) next
// to the baseline, picked at load time; glibc's vector math library (libmvec) provides SIMD
// exp/log/sin/tanh/erf/...
#pragma once

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <c10/util/SmallVector.h>
#include <c10/util/complex.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

#include <structgen/cpu/float16.h>
#include <structgen/cpu/tiles.h>
#include <structgen/pointwise/launch.h>
#include <structgen/pointwise/math.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#if defined(STRUCTGEN_HOST_ISA)
#define SO_CPU_CLONES
#else
#define SO_CPU_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
// glibc's <math.h> announces its vector variants only under -ffast-math, which would also
// break NaN handling; announce them here instead (same functions, same accuracy contract).
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 22)
extern "C" {
#pragma omp declare simd notinbranch
float expf(float) noexcept;
#pragma omp declare simd notinbranch
float logf(float) noexcept;
#pragma omp declare simd notinbranch
float sinf(float) noexcept;
#pragma omp declare simd notinbranch
float cosf(float) noexcept;
#pragma omp declare simd notinbranch
double exp(double) noexcept;
#pragma omp declare simd notinbranch
double log(double) noexcept;
#pragma omp declare simd notinbranch
double sin(double) noexcept;
#pragma omp declare simd notinbranch
double cos(double) noexcept;
// pow too: as scalar calls float and float64 pow ran at 0.5x torch
#pragma omp declare simd notinbranch
float powf(float, float) noexcept;
#pragma omp declare simd notinbranch
double pow(double, double) noexcept;
#if __GLIBC_PREREQ(2, 35)
#pragma omp declare simd notinbranch
float tanhf(float) noexcept;
#pragma omp declare simd notinbranch
float erff(float) noexcept;
#pragma omp declare simd notinbranch
float erfcf(float) noexcept;
#pragma omp declare simd notinbranch
float expm1f(float) noexcept;
#pragma omp declare simd notinbranch
float log1pf(float) noexcept;
#pragma omp declare simd notinbranch
float log2f(float) noexcept;
#pragma omp declare simd notinbranch
float exp2f(float) noexcept;
#pragma omp declare simd notinbranch
float tanf(float) noexcept;
// float64 too: scalar calls left float64 sin, erf and log1p at 0.2x torch (1e5, one thread:
// sin 4.4x, tanh 2.6x, erf 2.3x, log1p 0.65x torch with them)
#pragma omp declare simd notinbranch
double tanh(double) noexcept;
#pragma omp declare simd notinbranch
double erf(double) noexcept;
#pragma omp declare simd notinbranch
double erfc(double) noexcept;
#pragma omp declare simd notinbranch
double expm1(double) noexcept;
#pragma omp declare simd notinbranch
double log1p(double) noexcept;
#pragma omp declare simd notinbranch
double log2(double) noexcept;
#pragma omp declare simd notinbranch
double exp2(double) noexcept;
#pragma omp declare simd notinbranch
double tan(double) noexcept;
#endif
}
#endif
#else
#define SO_CPU_CLONES
#endif

namespace structgen::cpu {

constexpr int64_t kGrainSize = 32768;  // torch's at::internal::GRAIN_SIZE
constexpr int kMaxOperands = 4;        // out + three inputs (where, lerp, addcmul, mul_add)

// Sizes and element strides of every operand (0 = out), innermost dim first, after merging.
struct Geometry {
  int ndim = 0;
  int operands = 0;
  int64_t numel = 0;
  c10::SmallVector<int64_t, 8> sizes;
  std::array<c10::SmallVector<int64_t, 8>, kMaxOperands> strides;
};

// What the host glue hands a CPU kernel file's launcher (the CPU twin of PointwiseLaunch, with
// no limit on the number of dims): the common dtype, the geometry, each operand's data, the
// formula's scalars and conditions, and the grain (elements per thread's chunk at least).
struct RowLaunch {
  Dtype dtype;
  Geometry geometry;
  std::array<void*, kMaxOperands> data{};
  std::array<pw::ScalarArg, kMaxOperands> scalars{};
  std::array<bool, kMaxOperands> conditions{};
  int64_t grain = kGrainSize;
  // By input (0: the first): an input given as a 0-dim CPU tensor (a Python number, a 0-dim
  // tensor) to a float16 or bfloat16 formula computing in float is read here, in float, as torch
  // reads a CPU scalar (its opmath value), not from its operand rounded to the storage type:
  // 65536 as float16 is inf, and x / inf is 0 where x / 65536 is not.
  std::array<bool, kMaxOperands> is_value{};
  std::array<float, kMaxOperands> values{};
};

// The compute type of an element type: float for half and bfloat16 (as at::opmath_type).
template <typename T>
struct OpMath {
  using type = T;
};
template <>
struct OpMath<c10::Half> {
  using type = float;
};
template <>
struct OpMath<c10::BFloat16> {
  using type = float;
};
template <typename T>
using opmath_t = typename OpMath<T>::type;

namespace detail {

// Whether a float result stored as out_t is rounded over blocks by an instruction (cpu/float16.h).
template <typename out_t>
constexpr bool kRoundsBlocks = (SO_BF16_ROUND_BY_INSTRUCTION && std::is_same_v<out_t, c10::BFloat16>) ||
                               (SO_F16_CONVERT_BY_INSTRUCTION && std::is_same_v<out_t, c10::Half>);

template <typename out_t>
inline void round_block(const float* x, out_t* o, int64_t m) {
  if constexpr (std::is_same_v<out_t, c10::BFloat16>) round_to_bfloat16(x, o, m);
  if constexpr (std::is_same_v<out_t, c10::Half>) round_to_float16(x, o, m);
}

// o[i] = elem(i) for i < n, converted to out_t. A float rounded to bfloat16 or float16 goes
// through a block of 64 floats and the instruction where the CPU has it: c10's rounding per
// element was a quarter of bfloat16 gelu's time.
// The loops of n - c elements are not unrolled: with a row loop's block of 16, gcc unrolled them
// whole and then rebuilt vectors element by element, where it now vectorises one loop of one
// vector, kept in a register from the widened inputs to the rounded store.
template <typename out_t, typename E>
inline void store_row(out_t* __restrict o, int64_t n, const E& elem) {
  if constexpr (kRoundsBlocks<out_t> && std::is_same_v<decltype(elem(int64_t{})), float>) {
    alignas(64) float block[64];
    int64_t c = 0;
    for (; c + 64 <= n; c += 64) {  // a constant trip count: one vector loop, no remainder
      for (int64_t i = 0; i < 64; ++i) block[i] = elem(c + i);
      round_block(block, o + c, 64);
    }
#pragma GCC unroll 0
    for (int64_t i = 0; i < n - c; ++i) block[i] = elem(c + i);
    round_block(block, o + c, n - c);
  } else {
#pragma GCC unroll 0
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<out_t>(elem(i));
  }
}

// x[i] for the vector loops of a formula computing in compute_t. A bool is read as its byte (the
// formula's bool parameter takes it as byte != 0): gcc vectorises byte loads but not bool ones,
// and where(condition, a, b) ran a mispredicted branch per element (0.75x torch on strided
// float32). A float16 operand of a float computation is widened by its bits (to_acc).
template <typename compute_t, typename T>
inline auto element(const T* __restrict x, int64_t i) {
  if constexpr (std::is_same_v<T, bool>) {
    return reinterpret_cast<const uint8_t*>(x)[i];
  } else if constexpr (std::is_same_v<T, c10::Half> && std::is_same_v<compute_t, float>) {
    return to_acc<float>(x[i]);
  } else {
    return x[i];
  }
}

// Whether an input of type T to a formula computing in compute_t is widened a block at a time by
// the instruction (cpu::widen) before the formula runs.
template <typename compute_t, typename T>
constexpr bool kWidensBlocks =
    SO_F16_CONVERT_BY_INSTRUCTION && std::is_same_v<T, c10::Half> && std::is_same_v<compute_t, float>;

// Input k's element c + i of a row in blocks: its widened block's i-th, read in place, or
// `held` (the broadcast input's one value, read once).
template <typename compute_t, bool kBroadcast, typename T, typename Held>
[[gnu::always_inline]] inline auto block_element(const T* __restrict x, const float* wide, int64_t c,
                                                 int64_t i, Held held) {
  if constexpr (kBroadcast)
    return held;
  else if constexpr (kWidensBlocks<compute_t, T>)
    return wide[i];
  else
    return element<compute_t>(x, c + i);
}

// The row loop: every input contiguous, except input B (0-based) when B < the number of inputs,
// which has stride 0 and is loaded once. `f` returns the compute type; the store converts it to
// out_t. Float16 inputs of a float formula are first widened 16 at a time (one vector) into a
// stack block where the CPU converts vectors, which gcc then keeps in a register: float16 `add`
// at 1e5 ran at 0.50x torch with the bit arithmetic, 0.8x with blocks of 64 through memory.
template <size_t B, typename F, typename out_t, typename... in_t, size_t... I>
[[gnu::always_inline]] inline void row_loop(const F& f, int64_t n, out_t* __restrict o,
                                            std::index_sequence<I...>, const in_t* __restrict... in) {
  using compute_t = typename F::compute_type;
  if constexpr (((I != B && kWidensBlocks<compute_t, in_t>) || ...)) {
    if (n <= 0) return;
    const auto held = [&] {
      if constexpr (B < sizeof...(in_t))
        return element<compute_t>(std::get<B>(std::forward_as_tuple(in...)), 0);
      else
        return 0;
    }();
    auto block = [&](int64_t c, int64_t m) {
      alignas(64) float wide[sizeof...(in_t)][16];
      (
          [&] {
            if constexpr (I != B && kWidensBlocks<compute_t, in_t>) widen(in + c, wide[I], m);
          }(),
          ...);
      store_row(o + c, m,
                [&](int64_t i) { return f(block_element<compute_t, I == B>(in, wide[I], c, i, held)...); });
    };
    int64_t c = 0;
    for (; c + 16 <= n; c += 16) block(c, 16);  // a constant size: no masks, no remainder loops
    if (c < n) block(c, n - c);
  } else {
    store_row(o, n, [&](int64_t i) { return f(element<compute_t>(in, I == B ? 0 : i)...); });
  }
}

template <typename F, typename out_t, typename... in_t>
SO_CPU_CLONES void row_contiguous(const F& f, int64_t n, out_t* __restrict o, const in_t* __restrict... in) {
  row_loop<sizeof...(in_t)>(f, n, o, std::index_sequence_for<in_t...>{}, in...);
}

template <size_t B, typename F, typename out_t, typename... in_t>
SO_CPU_CLONES void row_broadcast_impl(const F& f, int64_t n, out_t* __restrict o,
                                      const in_t* __restrict... in) {
  row_loop<B>(f, n, o, std::index_sequence_for<in_t...>{}, in...);
}

// The broadcast loop for input `which`, chosen at run time among the compile-time variants.
template <size_t B, typename F, typename out_t, typename... in_t>
void row_broadcast(size_t which, const F& f, int64_t n, out_t* o, const in_t*... in) {
  if constexpr (B < sizeof...(in_t)) {
    if (which == B) {
      row_broadcast_impl<B>(f, n, o, in...);
    } else {
      row_broadcast<B + 1>(which, f, n, o, in...);
    }
  }
}

// The scalar loop over strided operands.
template <typename F, typename out_t, typename... in_t>
void row_strided_scalar(const F& f, int64_t n, out_t* o, int64_t so,
                        const std::array<int64_t, sizeof...(in_t)>& si, const in_t*... in) {
  auto call = [&]<size_t... I>(int64_t i, std::index_sequence<I...>) {
    o[i * so] = static_cast<out_t>(f(in[i * si[I]]...));
  };
  for (int64_t i = 0; i < n; ++i) call(i, std::index_sequence_for<in_t...>{});
}

// dst[i] = x[i * stride] for i < n; stride 2 (a [:, ::2] slice) by its own loop, which gcc
// vectorises with shuffles (pointwise rows and reductions both gather through this).
template <typename T>
inline void gather_strided(T* __restrict dst, const T* x, int64_t stride, int64_t n) {
  if (stride == 2) {
    for (int64_t i = 0; i < n; ++i) dst[i] = x[2 * i];
  } else {
    for (int64_t i = 0; i < n; ++i) dst[i] = x[i * stride];
  }
}

// Whether chunks of these element types can be staged in stack buffers: not complex, whose
// constructor would fill them.
template <typename out_t, typename... in_t>
constexpr bool kStageable = std::is_trivially_default_constructible_v<out_t> &&
                            (std::is_trivially_default_constructible_v<in_t> && ...);

// Rows shorter than this are too short for the vector loops alone (a loop setup and a scalar
// remainder per row): a strided one takes the scalar loop, a block of them runs as one.
constexpr int64_t kShortRow = 16;

// Elements of a strided row staged at a time (row_strided; band_of_rows' passes without tiles).
constexpr int64_t kStridedChunk = 64;

// A stack buffer of K elements left uninitialised (a std::tuple of std::arrays is zeroed on
// every call: 512 bytes of stores per 64-element chunk of a float32 row with two inputs).
template <typename T, size_t K>
struct Staged {
  Staged() {}
  alignas(64) T v[K];
  T* data() { return v; }
  const T* data() const { return v; }
  T& operator[](int64_t i) { return v[i]; }
  const T& operator[](int64_t i) const { return v[i]; }
};

// x[c:c+m] as a contiguous pointer: x itself when its stride is 1, else gathered into `buffer`.
template <typename T, size_t K>
const T* contiguous_chunk(Staged<T, K>& buffer, const T* x, int64_t stride, int64_t c, int64_t m) {
  if (stride == 1) return x + c;
  gather_strided(buffer.data(), x + c * stride, stride, m);
  return buffer.data();
}

// A row with a strided operand, in chunks: each strided input gathered into a contiguous stack
// buffer, then the contiguous loop (vectorised: the formula's cost, an erf or an exp, dominates a
// strided row), then the output scattered back when strided. Each position is read before it is
// written, so an inplace op whose output is also an input stays exact. Short rows, and types
// whose buffers a constructor would fill (complex), keep the scalar loop. Chunks of 64: with 256,
// float32 `mul_add` over two inputs strided 2000 apart ran at 0.77-0.80x torch (1.07-1.09 with 64,
// 1.11-1.15 scalar), while bfloat16 and costly formulas gain as much either way.
template <typename F, typename out_t, typename... in_t>
void row_strided(const F& f, int64_t n, out_t* o, int64_t so, const std::array<int64_t, sizeof...(in_t)>& si,
                 const in_t*... in) {
  constexpr int64_t kChunk = kStridedChunk;
  if constexpr (!kStageable<out_t, in_t...>) {
    row_strided_scalar(f, n, o, so, si, in...);
  } else {
    if (n < kShortRow) {
      row_strided_scalar(f, n, o, so, si, in...);
      return;
    }
    std::tuple<Staged<in_t, kChunk>...> staged;
    Staged<out_t, kChunk> staged_out;
    for (int64_t c = 0; c < n; c += kChunk) {
      const int64_t m = std::min(kChunk, n - c);
      out_t* po = so == 1 ? o + c : staged_out.data();
      [&]<size_t... I>(std::index_sequence<I...>) {
        row_contiguous(f, m, po, contiguous_chunk(std::get<I>(staged), in, si[I], c, m)...);
      }(std::index_sequence_for<in_t...>{});
      if (so != 1) {
        for (int64_t i = 0; i < m; ++i) o[(c + i) * so] = staged_out[i];
      }
    }
  }
}

// dst = the row x[0], x[stride], ..., x[(n - 1) * stride] `rows` times over, in doubling copies
// (a broadcast row: element by element, [10000, 3] + [3] ran at 0.79x torch, 2.4x this way).
template <typename T>
[[gnu::noinline]] void repeat_row(T* __restrict dst, const T* x, int64_t stride, int64_t n, int64_t rows) {
  for (int64_t i = 0; i < n; ++i) dst[i] = x[i * stride];
  for (int64_t filled = n; filled < rows * n; filled *= 2) {
    std::memcpy(dst + filled, dst, sizeof(T) * std::min(filled, rows * n - filled));
  }
}

// Rows r < rows of x (row r at x + r * step, its elements `stride` apart), each n elements, as one
// contiguous run of rows * n: x itself where its rows follow each other, else gathered into `buffer`.
template <typename T, size_t K>
const T* contiguous_rows(Staged<T, K>& buffer, const T* x, int64_t stride, int64_t step, int64_t n,
                         int64_t rows) {
  if (stride == 1 && step == n) return x;
  if (step == 0) {
    repeat_row(buffer.data(), x, stride, n, rows);
  } else {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t i = 0; i < n; ++i) buffer[r * n + i] = x[r * step + i * stride];
    }
  }
  return buffer.data();
}

// A [rows, n] block of short rows (n < kShortRow) whose output rows follow each other: one run of
// rows * n elements through the vectorised contiguous loop, in chunks of whole rows, each input
// read in place where its rows follow each other too and gathered otherwise. Row by row, a row of
// 10 was a loop setup and a scalar remainder per 10 elements: a transposed [10, 1000] times a
// sliced one ran at 0.71x torch (1.19x as one run), a [10000, 3] + [3] broadcast at 0.79x (2.41x).
template <typename F, typename out_t, typename... in_t>
void block_of_short_rows(const F& f, int64_t n, int64_t rows, out_t* o,
                         const std::array<int64_t, sizeof...(in_t)>& stride,
                         const std::array<int64_t, sizeof...(in_t)>& step, const in_t*... in) {
  constexpr int64_t kChunk = 256;
  const int64_t rows_per_chunk = kChunk / n;
  std::tuple<Staged<in_t, kChunk>...> staged;
  for (int64_t r = 0; r < rows; r += rows_per_chunk) {
    const int64_t m = std::min(rows_per_chunk, rows - r);
    [&]<size_t... I>(std::index_sequence<I...>) {
      row_contiguous(f, m * n, o + r * n,
                     contiguous_rows(std::get<I>(staged), in + r * step[I], stride[I], step[I], n, m)...);
    }(std::index_sequence_for<in_t...>{});
  }
}

// A tile's row: the elements of a band's row moved per pass. Long passes keep the operands read
// in place (a contiguous input, the output) in few, long streams: float32 [10000, 1000] plus a
// transposed one took 16.5 ms in passes of 64, 9.5 ms in passes of 1024 (row by row 15.9 ms).
// (float64 too: in passes of 512, 4 KiB a row as float32's, it ran 0.80x torch against 0.92x.)
constexpr int64_t kBandWidth = 1024;

// `rows` rows of n elements walked in bands of kBand rows, each band in passes across its rows:
// the cache lines of an operand whose rows lie closer than its elements (a transposed input or
// output), each holding a band's elements of one column, are used whole before they are evicted.
// The operands tiles_band takes go through tiles, in passes of up to kBandWidth elements; the
// others are read and written in place by row_strided, and where none is tiled, or the band is
// short of kBand rows, the passes are of kStridedChunk elements, whose lines stay in L1 from the
// band's first row to its last.
template <typename F, typename out_t, typename... in_t>
void band_of_rows(const F& f, int64_t n, int64_t rows, out_t* o, int64_t so, int64_t step_o,
                  const std::array<int64_t, sizeof...(in_t)>& stride,
                  const std::array<int64_t, sizeof...(in_t)>& step, const in_t*... in) {
  constexpr size_t N = sizeof...(in_t);
  const std::array<bool, N> tile_in = [&]<size_t... I>(std::index_sequence<I...>) {
    return std::array<bool, N>{(rows >= kBand && tiles_band<in_t>(stride[I], step[I]))...};
  }(std::index_sequence_for<in_t...>{});
  const bool any_tile = std::find(tile_in.begin(), tile_in.end(), true) != tile_in.end();
  const int64_t width = std::min(n, kBandWidth);
  // new T[] leaves a trivial type's elements uninitialised (a std::vector would zero them)
  const auto tiles = [&]<size_t... I>(std::index_sequence<I...>) {
    return std::tuple<std::unique_ptr<in_t[]>...>{
        std::unique_ptr<in_t[]>(tile_in[I] ? new in_t[kBand * width] : nullptr)...};
  }(std::index_sequence_for<in_t...>{});
  for (int64_t r0 = 0; r0 < rows; r0 += kBand) {
    const int64_t band = std::min(kBand, rows - r0);
    const bool whole = band == kBand;
    const int64_t pass = whole && any_tile ? width : kStridedChunk;
    for (int64_t c = 0; c < n; c += pass) {
      const int64_t m = std::min(pass, n - c);
      [&]<size_t... I>(std::index_sequence<I...>) {
        const std::tuple<const in_t*...> at{in + r0 * step[I] + c * stride[I]...};
        const std::array<bool, N> tiled{(whole && tile_in[I])...};
        (
            [&] {
              if constexpr (kTileable<in_t>) {
                if (tiled[I])
                  load_band(std::get<I>(tiles).get(), width, std::get<I>(at), stride[I], step[I], m);
              }
            }(),
            ...);
        const std::array<int64_t, N> row_stride{(tiled[I] ? 1 : stride[I])...};
        out_t* const po = o + r0 * step_o + c * so;
        for (int64_t r = 0; r < band; ++r) {
          row_strided(f, m, po + r * step_o, so, row_stride,
                      (tiled[I] ? std::get<I>(tiles).get() + r * width : std::get<I>(at) + r * step[I])...);
        }
      }(std::index_sequence_for<in_t...>{});
    }
  }
}

// Calls row(ctx, n, rows, offset, step) for runs of n elements along the innermost dim of the
// merged iteration space: `rows` of them (whole rows, one after another along the next dim: a
// [rows, n] block in one call, so a broadcast's short rows cost no indirect call each), row r of
// operand k starting at offset[k] + r * step[k]; split across threads above `grain`. After each
// call, raises the integer-division error a formula flagged (structgen/pointwise/math.h).
using Offsets = std::array<int64_t, kMaxOperands>;
using RowFn = void (*)(const void* ctx, int64_t n, int64_t rows, const Offsets& offset, const Offsets& step);
void walk_rows(const Geometry& g, int64_t grain, RowFn row, const void* ctx);

// Whether one of the first `operands` operands (output first) steps from row to row by less than
// from element to element: its rows interleave in memory (a transposed operand).
inline bool crosses_rows(size_t operands, const Geometry& g, const Offsets& step) {
  for (size_t k = 0; k < operands; ++k) {
    if (step[k] != 0 && std::abs(step[k]) < std::abs(g.strides[k][0])) return true;
  }
  return false;
}

template <typename T>
constexpr bool kReducedFloat = std::is_same_v<T, c10::Half> || std::is_same_v<T, c10::BFloat16>;

// A formula computing in float over float16/bfloat16 inputs, with the inputs the launch gives as
// values (RowLaunch::is_value) read from there. Every float16/bfloat16 launch goes through it, so
// it adds no kernel instantiation (a second one per input that may be a value would have doubled
// them). The pick is bitwise, (bits & keep) | fill, fixed for the call: a select on a flag per
// input was hoisted for one input, but with two gcc kept a branch per element and the loop
// scalar (bfloat16 bias_gelu and logaddexp at 1e5: 0.2x and 0.05x torch).
template <typename F, typename... in_t>
struct WithValues {
  using compute_type = typename F::compute_type;
  F f;
  std::array<uint32_t, sizeof...(in_t)> keep;  // all ones for a tensor input, 0 for a value
  std::array<uint32_t, sizeof...(in_t)> fill;  // 0 for a tensor input, the value's bits

  template <size_t I, typename X>
  [[gnu::always_inline]] auto input(X x) const {
    if constexpr (kReducedFloat<std::tuple_element_t<I, std::tuple<in_t...>>>) {
      return std::bit_cast<float>((std::bit_cast<uint32_t>(static_cast<float>(x)) & keep[I]) | fill[I]);
    } else {
      return x;
    }
  }

  // A member, not a lambda: always_inline reaches it, so the formula inlines into the row loop
  // (as a lambda gcc kept it out of line for some bf16/f16 gradient formulas: a call per element).
  template <size_t... I, typename... X>
  [[gnu::always_inline]] auto call(std::index_sequence<I...>, X... x) const {
    return f(input<I>(x)...);
  }

  template <typename... X>
  [[gnu::always_inline]] auto operator()(X... x) const {
    return call(std::index_sequence_for<X...>{}, x...);
  }
};

template <typename out_t, typename... in_t, typename F>
void run_rows(const F& f, const RowLaunch& p);

}  // namespace detail

// out = f(inputs...) elementwise over the launch's geometry. in_t... are the element types of
// the inputs (the op's common dtype, or an input's own fixed dtype such as where's bool condition).
// A formula computing in float over float16/bfloat16 inputs reads the inputs given as values
// (RowLaunch::is_value) in float.
template <typename out_t, typename... in_t, typename F>
void run(const F& f, const RowLaunch& p) {
  if constexpr (std::is_same_v<typename F::compute_type, float> && (detail::kReducedFloat<in_t> || ...)) {
    detail::WithValues<F, in_t...> valued{f, {}, {}};
    for (size_t k = 0; k < sizeof...(in_t); ++k) {
      valued.keep[k] = p.is_value[k] ? 0u : ~0u;
      valued.fill[k] = p.is_value[k] ? std::bit_cast<uint32_t>(p.values[k]) : 0u;
    }
    detail::run_rows<out_t, in_t...>(valued, p);
  } else {
    detail::run_rows<out_t, in_t...>(f, p);
  }
}

namespace detail {

// run's loops over the rows, for any formula.
template <typename out_t, typename... in_t, typename F>
void run_rows(const F& f, const RowLaunch& p) {
  constexpr size_t N = sizeof...(in_t);
  const Geometry& g = p.geometry;
  if (g.numel == 0) return;
  out_t* const o = static_cast<out_t*>(p.data[0]);
  const auto bases = [&]<size_t... I>(std::index_sequence<I...>) {
    return std::tuple<const in_t*...>{static_cast<const in_t*>(p.data[I + 1])...};
  }(std::make_index_sequence<N>{});

  // Which inner loop fits the innermost dim (the same for every row).
  int broadcast_input = -1;
  bool unit = g.strides[0][0] == 1;
  for (size_t k = 0; k < N && unit; ++k) {
    const int64_t s = g.strides[k + 1][0];
    if (s == 0 && broadcast_input < 0 && g.sizes[0] > 1)
      broadcast_input = static_cast<int>(k);
    else if (s != 1)
      unit = false;
  }

  auto block = [&](int64_t n, int64_t rows, const detail::Offsets& offset, const detail::Offsets& step) {
    [&]<size_t... I>(std::index_sequence<I...>) {
      if constexpr (detail::kStageable<out_t, in_t...>) {
        if (n < detail::kShortRow && rows > 1 && g.strides[0][0] == 1 && step[0] == n) {
          detail::block_of_short_rows(
              f, n, rows, o + offset[0], std::array<int64_t, N>{g.strides[I + 1][0]...},
              std::array<int64_t, N>{step[I + 1]...}, std::get<I>(bases) + offset[I + 1]...);
          return;
        }
      }
      if (!unit && rows > 1 && detail::crosses_rows(N + 1, g, step)) {
        detail::band_of_rows(f, n, rows, o + offset[0], g.strides[0][0], step[0],
                             std::array<int64_t, N>{g.strides[I + 1][0]...},
                             std::array<int64_t, N>{step[I + 1]...}, std::get<I>(bases) + offset[I + 1]...);
        return;
      }
      for (int64_t r = 0; r < rows; ++r) {
        out_t* po = o + offset[0] + r * step[0];
        const std::tuple<const in_t*...> pi{std::get<I>(bases) + offset[I + 1] + r * step[I + 1]...};
        if (unit && broadcast_input < 0) {
          detail::row_contiguous(f, n, po, std::get<I>(pi)...);
        } else if (unit) {
          detail::row_broadcast<0>(static_cast<size_t>(broadcast_input), f, n, po, std::get<I>(pi)...);
        } else {
          detail::row_strided(f, n, po, g.strides[0][0], std::array<int64_t, N>{g.strides[I + 1][0]...},
                              std::get<I>(pi)...);
        }
      }
    }(std::make_index_sequence<N>{});
  };

  detail::walk_rows(
      g, p.grain,
      [](const void* ctx, int64_t n, int64_t rows, const detail::Offsets& offset,
         const detail::Offsets& step) { (*static_cast<const decltype(block)*>(ctx))(n, rows, offset, step); },
      &block);
}

}  // namespace detail

}  // namespace structgen::cpu
