// The combines a scan op runs (its rule's meta.combine; manifest `scan: true`), written once for
// the CPU loops (structgen/cpu/scan.h) and the CUDA kernels (structgen/cuda/scan.cuh): each one's
// identity and step over the accumulator type A. Torch-free, host and device.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include <structgen/pointwise/math.h>  // SO_HD, pw::exp, pw::log1p

namespace structgen {

enum class ScanCombine { Add, Mul, LogAddExp };

template <ScanCombine C, typename A>
SO_HD A scan_identity() {
  if constexpr (C == ScanCombine::Add) {
    return A(0);
  } else if constexpr (C == ScanCombine::Mul) {
    return A(1);
  } else {
    return -std::numeric_limits<A>::infinity();
  }
}

// log(exp(a) + exp(b)), logcumsumexp's step: a NaN propagates, and equal infinities stay what
// they are (-inf with -inf is -inf, not inf - inf).
template <typename A>
SO_HD A log_add_exp(A a, A b) {
  const A lo = b != b ? b : (b < a ? b : a);
  const A hi = b != b ? b : (b < a ? a : b);
  if (lo != hi || lo - lo == A(0)) return hi + pw::log1p(pw::exp(lo - hi));  // lo - lo == 0: lo is finite
  return a;
}

// A product of integers wraps, as the type's own multiply does (a signed overflow would be
// undefined in C++).
template <ScanCombine C, typename A>
SO_HD A scan_step(A acc, A x) {
  if constexpr (C == ScanCombine::Add) {
    return acc + x;
  } else if constexpr (C == ScanCombine::Mul && std::is_integral_v<A>) {
    return static_cast<A>(static_cast<uint64_t>(acc) * static_cast<uint64_t>(x));
  } else if constexpr (C == ScanCombine::Mul) {
    return acc * x;
  } else {
    return log_add_exp(acc, x);
  }
}

}  // namespace structgen
