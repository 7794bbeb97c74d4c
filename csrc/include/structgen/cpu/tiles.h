// The tiles of cpu/rows.h's bands of rows: a transposed input's band read into rows through
// L x L blocks of lanes transposed in registers (band_of_rows uses them). Torch-free, as rows.h.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

namespace structgen::cpu::detail {

// A band of kBand rows of an input whose rows interleave in memory (a transposed input: row r,
// element i at x[r * step + i * stride], step 1 or 2 while the stride is large) is read into a
// tile [kBand][pass] in blocks of 16 x 16 (8 x 8 for 8-byte elements): each column's 16 (8)
// elements of the band are one vector load (two, even lanes kept, for step 2), and 16 (8) such
// vectors are transposed in registers into row vectors. Element by element, a float32 add of a
// sliced operand with 2 cache lines per column of a band spent 40 % of its time in scalar loads
// and inserts. The elements move as
// unsigned integers of their size: only their bits are copied.
constexpr int64_t kBand = 16;

template <typename T>
using Bits = std::conditional_t<
    sizeof(T) == 1, uint8_t,
    std::conditional_t<sizeof(T) == 2, uint16_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;

template <typename T>
constexpr bool kTileable = std::is_trivially_default_constructible_v<T> && std::is_trivially_copyable_v<T> &&
                           sizeof(T) <= 8 && (sizeof(T) & (sizeof(T) - 1)) == 0;

// Lanes per vector of a tile: 16, or 8 for 8-byte elements, so that a vector is at most 64 bytes
// (one AVX-512 register). With 16 lanes of 8 bytes gcc lowered the transpose's shuffles to
// scalar moves through the stack: float64 transposed inputs ran at 0.23-0.39x torch.
template <typename T>
constexpr int kTileLanes = sizeof(T) == 8 ? 8 : 16;

// L lanes of U (a class member: gcc ignores vector_size on an alias template's dependent type).
template <typename U, int L>
struct TileLanesOf {
  typedef U type __attribute__((vector_size(L * sizeof(U))));
};
template <typename U, int L>
using TileLanes = typename TileLanesOf<U, L>::type;

// Lane j of the pair of vectors (a, b) of L lanes that swapping bit K of the row index with bit
// K of the lane index puts at lane j of the lower (`upper` false) or the upper row of the pair;
// lanes of b count from L.
constexpr int swapped_lane(int L, int K, bool upper, int j) {
  if (!upper) return (j & K) ? L + j - K : j;
  return (j & K) ? L + j : j + K;
}

// v[0..L) transposed in place as an L x L matrix of lanes: log2(L) butterfly stages, each
// swapping one bit of the row and lane indices (L / 2 pairs of two-vector shuffles each).
template <int L, typename V>
[[gnu::always_inline]] inline void transpose(V (&v)[L]) {
  auto stage = [&]<int K>(std::integral_constant<int, K>) {
    for (int i = 0; i < L; ++i) {
      if (i & K) continue;
      const V a = v[i], b = v[i + K];
      [&]<int... J>(std::integer_sequence<int, J...>) {
        v[i] = __builtin_shufflevector(a, b, swapped_lane(L, K, false, J)...);
        v[i + K] = __builtin_shufflevector(a, b, swapped_lane(L, K, true, J)...);
      }(std::make_integer_sequence<int, L>{});
    }
  };
  stage(std::integral_constant<int, 1>{});
  stage(std::integral_constant<int, 2>{});
  stage(std::integral_constant<int, 4>{});
  if constexpr (L == 16) stage(std::integral_constant<int, 8>{});
}

// Lane k of the even elements 0, 2, .., 2L - 2 of a column read as the vectors [0, L) and
// [L - 1, 2L - 1) (lanes of the second count from L): none past the column's last element.
constexpr int even_lane(int L, int k) { return k < L / 2 ? 2 * k : 2 * k + 1; }

// tile[r * pitch + i] = x[r * step + i * stride] for r < kBand, i < m: a band's chunk read into
// rows, in blocks of L x L (L = kTileLanes<T>; two row groups of 8 for 8-byte elements).
template <typename T>
void load_band(T* __restrict tile, int64_t pitch, const T* x, int64_t stride, int64_t step, int64_t m) {
  using U = Bits<T>;
  constexpr int L = kTileLanes<T>;
  using V = TileLanes<U, L>;
  int64_t i = 0;
  for (; i + L <= m; i += L) {
    for (int h = 0; h < kBand; h += L) {
      V v[L];
      for (int j = 0; j < L; ++j) {
        const T* column = x + (i + j) * stride + h * step;
        if (step == 1) {
          std::memcpy(&v[j], column, sizeof(v[j]));
        } else {
          V low, high;
          std::memcpy(&low, column, sizeof(low));
          std::memcpy(&high, column + L - 1, sizeof(high));
          v[j] = [&]<int... K>(std::integer_sequence<int, K...>) {
            return __builtin_shufflevector(low, high, even_lane(L, K)...);
          }(std::make_integer_sequence<int, L>{});
        }
      }
      transpose<L>(v);
      for (int r = 0; r < L; ++r) std::memcpy(tile + (h + r) * pitch + i, &v[r], sizeof(v[r]));
    }
  }
  for (int64_t r = 0; r < kBand; ++r) {
    for (int64_t k = i; k < m; ++k) tile[r * pitch + k] = x[r * step + k * stride];
  }
}

// Whether an input's band is read through a tile: its rows interleave (step below the stride)
// closely enough that a column of the band is one or two vectors. (The output's rows never
// interleave in a whole band: the geometry orders dims by the output's strides and swaps only an
// innermost dim shorter than kShortRow, rows.h's own limit.)
template <typename T>
inline bool tiles_band(int64_t stride, int64_t step) {
  return kTileable<T> && (step == 1 || step == 2) && stride > step;
}

}  // namespace structgen::cpu::detail
