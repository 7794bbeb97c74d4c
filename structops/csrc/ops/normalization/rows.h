// The CPU row loops the normalisations share (cpu.cpp, cpu_rms_norm.cpp): lane sums in a fixed
// order and stores that round as torch does, written so gcc vectorises them.
#pragma once

#include <structgen/cpu/pointwise.h>
#include <structgen/cpu/softmax.h>

#include <array>
#include <bit>
#include <cstdint>
#include <type_traits>

#include <ops/runtime_names.h>

namespace structops::impl {

using cpu::softmax::kLanes;

// s[l] += term(i) for i = l (mod kLanes) over whole lanes, the tail into s[0]: 16 lanes merged in
// a fixed order (total()), so every row sums in the same order, in loops gcc vectorises.
template <typename acc_t, typename Term>
[[gnu::always_inline]] inline void add_lanes(std::array<acc_t, kLanes>& s, int64_t n, const Term& term) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) s[l] += term(i + l);
  }
  for (; i < n; ++i) s[0] += term(i);
}

template <typename acc_t>
acc_t total(const std::array<acc_t, kLanes>& s) {
  acc_t r = 0;
  for (int l = 0; l < kLanes; ++l) r += s[l];
  return r;
}

// float -> scalar_t as torch rounds (bfloat16: to nearest even, NaN to a quiet NaN), written as bit
// arithmetic for bfloat16 so the store loops below vectorise (c10's conversion does not).
template <typename scalar_t, typename acc_t>
inline scalar_t narrow(acc_t v) {
  if constexpr (std::is_same_v<scalar_t, c10::BFloat16>) {
    const uint32_t u = std::bit_cast<uint32_t>(v);
    const uint32_t r = v != v ? 0x7fc00000u : u + 0x7fffu + ((u >> 16) & 1u);
    return c10::BFloat16(static_cast<uint16_t>(r >> 16), c10::BFloat16::from_bits());
  } else {
    return static_cast<scalar_t>(v);
  }
}

// o[i] = y(i) narrowed to scalar_t for i < n: float16 through blocks of 64 rounded by the vector
// instruction where the CPU has it (cpu::detail::store_row; c10's rounding is scalar).
template <typename scalar_t, typename Y>
[[gnu::always_inline]] inline void store_narrowed(scalar_t* __restrict o, int64_t n, const Y& y) {
  if constexpr (std::is_same_v<scalar_t, c10::Half>) {
    cpu::detail::store_row(o, n, y);
  } else {
    for (int64_t i = 0; i < n; ++i) o[i] = narrow<scalar_t>(y(i));
  }
}

}  // namespace structops::impl
