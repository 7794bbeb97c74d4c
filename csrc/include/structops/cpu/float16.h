// float16 <-> float without c10::Half's scalar conversions, for the vector loops of the pointwise
// rows (cpu/rows.h) and of the reductions (cpu/reduce.h, ops/reduce/cpu_reducers.h). Values are
// their 16 bits here: no torch header.
#pragma once

#include <cstdint>
#include <cstring>

// With F16C c10::Half's conversions are vcvtph2ps and vcvtps2ph on one element
// (torch/headeronly/util/Half.h): the vector forms below give the same bits.
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__F16C__)
#include <immintrin.h>
#define SO_F16_CONVERT_BY_INSTRUCTION 1
#else
#define SO_F16_CONVERT_BY_INSTRUCTION 0
#endif

namespace structops::cpu {

// A float16 value from its bits, exactly (every float16 is a float), by integer arithmetic and
// selects that gcc vectorises: c10::Half's conversion is a scalar vcvtph2ps per element (float16
// ops ran at 0.02-0.15x torch, float16 sums at 0.35x). Normal numbers, inf and NaN (payload kept)
// move their exponent and mantissa into place; zeros and denormals are their integer mantissa
// times 2^-24. The fallback where the CPU has no vector conversion.
inline float float16_to_float(uint16_t h) {
  const uint32_t magnitude = h & 0x7fffu;
  uint32_t bits = (magnitude << 13) + (112u << 23);  // rebias the exponent: 127 - 15
  bits = magnitude >= 0x7c00u ? bits + (112u << 23) : bits;  // inf and NaN: exponent 255
  float value;
  std::memcpy(&value, &bits, 4);
  value = magnitude < 0x0400u ? static_cast<float>(magnitude) * 5.9604644775390625e-8f : value;
  uint32_t out;
  std::memcpy(&out, &value, 4);
  out |= static_cast<uint32_t>(h & 0x8000u) << 16;
  std::memcpy(&value, &out, 4);
  return value;
}

#if SO_F16_CONVERT_BY_INSTRUCTION
// o[0:m] = x[0:m] rounded to float16 (to nearest even), m <= 64, 16 at a time.
inline void round_to_float16(const float* x, uint16_t* o, int64_t m) {
  for (int64_t i = 0; i < m; i += 16) {
    const __mmask16 lanes = m - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (m - i)) - 1);
    const __m512 v = _mm512_maskz_loadu_ps(lanes, x + i);
    // the zero-masking forms here and below: the plain ones' undefined vector trips gcc 12's
    // -Wmaybe-uninitialized
    const __m256i h = _mm512_maskz_cvtps_ph(lanes, v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm256_mask_storeu_epi16(o + i, lanes, h);
  }
}

// o[0:m] = x[0:m] widened to float, m <= 64, 16 at a time: gcc 12 vectorises no float16
// conversion, and float16_to_float's bit arithmetic costs a dozen instructions per vector (float16
// `add` at 1e5: 0.50x torch with it, 0.8x with this).
inline void widen_float16(const uint16_t* x, float* o, int64_t m) {
  for (int64_t i = 0; i < m; i += 16) {
    const __mmask16 lanes = m - i >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (m - i)) - 1);
    _mm512_mask_storeu_ps(o + i, lanes, _mm512_maskz_cvtph_ps(lanes, _mm256_maskz_loadu_epi16(lanes, x + i)));
  }
}
#endif

}  // namespace structops::cpu
