// float16 and bfloat16 <-> float without c10::Half's scalar conversions, for the vector loops of
// the pointwise rows (cpu/rows.h), the reductions (cpu/reduce.h, ops/reduce/cpu_reducers.h) and
// the normalizations (ops/normalization/cpu.cpp): one place for every widening and rounding.
#pragma once

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <bit>
#include <cstdint>
#include <type_traits>

// With F16C c10::Half's conversions are vcvtph2ps and vcvtps2ph on one element
// (torch/headeronly/util/Half.h): the vector forms below give the same bits.
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__F16C__)
#include <immintrin.h>
#define SO_F16_CONVERT_BY_INSTRUCTION 1
#else
#define SO_F16_CONVERT_BY_INSTRUCTION 0
#endif
#if defined(__AVX512BF16__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#include <immintrin.h>
#define SO_BF16_ROUND_BY_INSTRUCTION 1
#else
#define SO_BF16_ROUND_BY_INSTRUCTION 0
#endif

namespace structgen::cpu {

// A float16 value from its bits, exactly (every float16 is a float), by integer arithmetic and
// selects that gcc vectorises: c10::Half's conversion is a scalar vcvtph2ps per element (float16
// ops ran at 0.02-0.15x torch, float16 sums at 0.35x). Normal numbers, inf and NaN (payload kept)
// move their exponent and mantissa into place; zeros and denormals are their integer mantissa
// times 2^-24.
inline float float16_to_float(uint16_t h) {
  const uint32_t magnitude = h & 0x7fffu;
  uint32_t bits = (magnitude << 13) + (112u << 23);          // rebias the exponent: 127 - 15
  bits = magnitude >= 0x7c00u ? bits + (112u << 23) : bits;  // inf and NaN: exponent 255
  float value = std::bit_cast<float>(bits);
  value = magnitude < 0x0400u ? static_cast<float>(magnitude) * 5.9604644775390625e-8f : value;
  return std::bit_cast<float>(std::bit_cast<uint32_t>(value) | static_cast<uint32_t>(h & 0x8000u) << 16);
}

// x as acc_t in a loop that should vectorise: float16 by the bit arithmetic above, bfloat16 by
// its shift (the upper half of a float), anything else (or another acc_t) by conversion.
template <typename acc_t, typename T>
inline acc_t to_acc(T x) {
  if constexpr (std::is_same_v<acc_t, float> && std::is_same_v<T, c10::Half>) {
    return float16_to_float(x.x);
  } else if constexpr (std::is_same_v<acc_t, float> && std::is_same_v<T, c10::BFloat16>) {
    return std::bit_cast<float>(static_cast<uint32_t>(x.x) << 16);
  } else {
    return static_cast<acc_t>(x);
  }
}

// o[0:n] = x[0:n] as float. Float16 16 at a time by vcvtph2ps where the CPU has it: gcc 12
// vectorises no float16 conversion, and the bit arithmetic costs a dozen instructions per vector
// (float16 `add` at 1e5: 0.50x torch with it, 0.8x with the instruction).
inline void widen(const c10::Half* x, float* o, int64_t n) {
#if SO_F16_CONVERT_BY_INSTRUCTION
  // Whole vectors are loaded and stored unmasked: a block of 16 widened into a stack array and
  // read back whole is then kept in a register by gcc (the stack round trip disappears). The
  // conversions are the zero-masking forms: the plain ones' undefined vector trips gcc 12's
  // -Wmaybe-uninitialized (with all lanes set they are the same instruction).
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    _mm512_storeu_ps(o + i, _mm512_maskz_cvtph_ps(0xFFFF, _mm256_loadu_si256((const __m256i*)&x[i].x)));
  }
  if (i < n) {
    const __mmask16 lanes = __mmask16((1u << (n - i)) - 1);
    _mm512_mask_storeu_ps(o + i, lanes,
                          _mm512_maskz_cvtph_ps(lanes, _mm256_maskz_loadu_epi16(lanes, &x[i].x)));
  }
#else
  for (int64_t i = 0; i < n; ++i) o[i] = float16_to_float(x[i].x);
#endif
}

// o[0:n] = x[0:n] as acc_t, element by element (to_acc): bfloat16 and the other types.
template <typename T, typename acc_t>
inline void widen(const T* x, acc_t* o, int64_t n) {
  for (int64_t i = 0; i < n; ++i) o[i] = to_acc<acc_t>(x[i]);
}

// o[0:n] = x[0:n] rounded to float16 (to nearest even, as c10::Half(float)), 16 at a time by
// vcvtps2ph where the CPU has it, else element by element.
inline void round_to_float16(const float* x, c10::Half* o, int64_t n) {
#if SO_F16_CONVERT_BY_INSTRUCTION
  constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {  // unmasked, as in widen
    _mm256_storeu_si256((__m256i*)&o[i].x, _mm512_maskz_cvtps_ph(0xFFFF, _mm512_loadu_ps(x + i), kNearest));
  }
  if (i < n) {
    const __mmask16 lanes = __mmask16((1u << (n - i)) - 1);
    const __m256i h = _mm512_maskz_cvtps_ph(lanes, _mm512_maskz_loadu_ps(lanes, x + i), kNearest);
    _mm256_mask_storeu_epi16(&o[i].x, lanes, h);
  }
#else
  for (int64_t i = 0; i < n; ++i) o[i] = c10::Half(x[i]);
#endif
}

// o[0:n] = x[0:n] rounded to bfloat16 exactly as c10::BFloat16(float) rounds, by vcvtneps2bf16
// where the CPU has it. Where the instruction departs from c10 (a NaN keeps its sign and payload,
// c10 writes 0x7FC0; a denormal flushes to zero, c10 rounds it) the block is rounded again by
// c10, element by element: a check per block, as fixing lanes in the loop cost a fifth of
// bfloat16 gelu.
inline void round_to_bfloat16(const float* x, c10::BFloat16* o, int64_t n) {
#if SO_BF16_ROUND_BY_INSTRUCTION
  __mmask16 departs = 0;
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 lanes = n - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - i)) - 1);
    const __m512 v = _mm512_maskz_loadu_ps(lanes, x + i);
    departs |= _mm512_fpclass_ps_mask(v, 0xA1);  // quiet NaN, signalling NaN, denormal
    _mm256_mask_storeu_epi16(&o[i].x, lanes, (__m256i)_mm512_cvtneps_pbh(v));
  }
  if (!departs) return;
#endif
  for (int64_t i = 0; i < n; ++i) o[i] = c10::BFloat16(x[i]);
}

}  // namespace structgen::cpu
