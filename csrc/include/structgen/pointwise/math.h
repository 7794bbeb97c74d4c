// The functions a pointwise formula (codegen/pointwise/) lowers to, for host and device alike.
//
// Torch-free on purpose (ARCHITECTURE decision 6): generated CUDA kernels include this header
// and nothing of torch. Each function takes values of the op's compute type T (PyTorch's
// opmath: float for half/bfloat16) and matches torch's semantics, e.g. maximum propagates NaN,
// floor division of integers rounds toward -inf, integer division by zero raises on the CPU.
// The generic forms call `exp(x)` etc. unqualified after `using std::exp`, so c10::complex's
// overloads are found on the host; device code gets CUDA's math functions.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#if defined(__CUDACC__)
#define SO_HD __host__ __device__ __forceinline__
#else
// Always inlined on the host as on the device (and the host-only helpers below likewise): past a
// kernel file's inlining budget (gelu's file, with its backward's and every dtype's row loops) gcc
// called the formula and normcdf per element and the float loop lost its vectorisation (float32
// gelu at 1e5: 0.17x torch).
#define SO_HD inline __attribute__((always_inline))
#endif

namespace structgen::pw {

// Integer division by zero: a RuntimeError on the CPU (as torch's ZeroDivisionError); on a GPU,
// where a kernel cannot raise, the quotient is 0 (torch's CUDA result is unspecified). The CPU
// loop does not throw from inside the element loop (its vectorised clones cannot unwind): the
// element sets this thread's flag and the row loop raises after the row (cpu::run).
[[noreturn]] void throw_zero_division();
inline thread_local bool zero_division_flag = false;

template <typename T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <typename T>
inline constexpr bool is_float_v = std::is_floating_point_v<T>;

template <typename T>
SO_HD T zero_division() {
#if !defined(__CUDA_ARCH__)
  zero_division_flag = true;
#endif
  return T(0);
}

template <typename T>
SO_HD bool truth(T x) {
  return x != T(0);
}

// A complex type (c10::complex on the host; device code has none): one with an imaginary part.
template <typename T, typename = void>
struct is_complex : std::false_type {};
template <typename T>
struct is_complex<T, std::void_t<decltype(std::declval<T>().imag())>> : std::true_type {};
template <typename T>
inline constexpr bool is_complex_v = is_complex<T>::value;

// A complex value's real and imaginary parts as T (imaginary part 0); a real value is its own
// real part, with imaginary part 0. real_of: the real part in its own type, for ordering.
template <typename T>
SO_HD T real(T x) {
  if constexpr (is_complex_v<T>)
    return T(x.real());
  else
    return x;
}

template <typename T>
SO_HD T imag(T x) {
  if constexpr (is_complex_v<T>)
    return T(x.imag());
  else
    return T(0);
}

template <typename T>
SO_HD auto real_of(T x) {
  if constexpr (is_complex_v<T>)
    return x.real();
  else
    return x;
}

// NaN of x's type: NaN in both parts of a complex value (logaddexp's "infectious" NaN, as torch's).
template <typename T>
SO_HD T nan_of(T) {
  if constexpr (is_complex_v<T>) {
    using R = decltype(T().real());
    return T(std::numeric_limits<R>::quiet_NaN(), std::numeric_limits<R>::quiet_NaN());
  } else {
    return std::numeric_limits<T>::quiet_NaN();
  }
}

// The complex conjugate; a real value as it is (derived gradients: grad * conj(f'(z))).
template <typename T>
SO_HD T conj(T x) {
  if constexpr (std::is_arithmetic_v<T>) {
    return x;
  } else {
    return T(x.real(), -x.imag());
  }
}

// x >= 0; a complex x: real and >= 0 (pow's exponent gradient).
template <typename T>
SO_HD bool nonneg_real(T x) {
  if constexpr (std::is_arithmetic_v<T>) {
    return x >= T(0);
  } else {
    return x.imag() == 0 && x.real() >= 0;
  }
}

template <typename T>
SO_HD bool isnan_(T x) {
  if constexpr (is_float_v<T>)
    return x != x;
  else if constexpr (is_complex_v<T>)  // either part, as torch.isnan
    return isnan_(x.real()) || isnan_(x.imag());
  else
    return false;
}

template <typename T>
SO_HD bool isinf_(T x) {
  if constexpr (is_float_v<T>)
    return x == std::numeric_limits<T>::infinity() || x == -std::numeric_limits<T>::infinity();
  else if constexpr (is_complex_v<T>)  // either part, as torch.isinf
    return isinf_(x.real()) || isinf_(x.imag());
  else
    return false;
}

// NaN-propagating max / min, as torch.maximum / torch.minimum (and clamp). Where a and b are equal
// the result is a: relu(-0.0) and clamp(-0.0, min=0) are -0.0, as torch's (torch.maximum of -0.0
// and +0.0 gives either zero, by its loop).
template <typename T>
SO_HD T maximum(T a, T b) {
  if constexpr (std::is_same_v<T, bool>)
    return a || b;
  else
    return (a < b || b != b) ? b : a;
}
template <typename T>
SO_HD T minimum(T a, T b) {
  if constexpr (std::is_same_v<T, bool>)
    return a && b;
  else
    return (a > b || b != b) ? b : a;
}

// torch.clamp: NaN in x stays NaN; a bound given as NaN makes the result NaN.
template <typename T>
SO_HD T clamp(T x, bool has_lo, T lo, bool has_hi, T hi) {
  T r = x;
  if (has_lo) r = maximum(r, lo);
  if (has_hi) r = minimum(r, hi);
  return r;
}

// torch's floor division of floats (c10::div_floor_floating's steps) without a call to fmod,
// which does not vectorise (a scalar fmodf per element ran at 0.07x torch, whose fmod is SLEEF's
// vector one). The remainder comes from double arithmetic: while |a / b| < 2^26, trunc(a / b) in
// double is the exact integer part (the quotient of 24-bit mantissas is farther than double's
// rounding from the next integer) and a - q b is exact. From 2^26 on torch's steps give the
// rounded a / b (a - fmod(a, b) rounds to a). Bit-identical to torch's steps on 6e7 pairs
// (random bit patterns, scaled normals, infinities, NaN, zeros); tests/runtime/test_ops.py checks
// 4e6 against torch.
[[gnu::always_inline]] inline float floor_div_float(float a, float b) {
  const double ad = a, bd = b;
  const double q = std::trunc(ad / bd);
  const float mod = static_cast<float>(q == 0 ? ad : ad - q * bd);  // q == 0: a (0 * inf is NaN)
  float div = (a - mod) / b;
  div = mod != 0 && ((b < 0) != (mod < 0)) ? div - 1 : div;
  const float down = std::floor(div);
  const float rounded = div - down > 0.5f ? down + 1 : down;
  const float result = div != 0 ? rounded : std::copysign(0.0f, a / b);
  const bool big = std::fabs(ad) >= 67108864.0 * std::fabs(bd) && std::fabs(ad) <= 3.5e38;  // a finite
  return b == 0 || big ? a / b : result;
}

template <typename T>
SO_HD T floor_div(T a, T b) {
  if constexpr (is_int_v<T>) {
    if (b == 0) return zero_division<T>();
    if constexpr (std::is_signed_v<T>) {
      // Avoid the overflow trap of min / -1: the wrapped result is torch's.
      if (b == T(-1)) return T(-static_cast<std::make_unsigned_t<T>>(a));
      const T q = a / b;
      const T r = a % b;
      return (r != 0 && ((r < 0) != (b < 0))) ? T(q - 1) : q;
    } else {
      return a / b;
    }
  } else {
#if !defined(__CUDA_ARCH__)
    if constexpr (std::is_same_v<T, float>) return floor_div_float(a, b);
#endif
    using std::floor;
    using std::fmod;
    if (b == T(0)) return a / b;
    // As torch: quotient from the remainder, so floor(a / b) is exact where a / b rounds.
    const T mod = fmod(a, b);
    T div = (a - mod) / b;
    if (mod != T(0) && ((b < T(0)) != (mod < T(0)))) div -= T(1);
    if (div != T(0)) {
      T fl = floor(div);
      if (div - fl > T(0.5)) fl += T(1);
      return fl;
    }
    return std::copysign(T(0), a / b);
  }
}

template <typename T>
SO_HD T trunc_div(T a, T b) {
  if constexpr (is_int_v<T>) {
    if (b == 0) return zero_division<T>();
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return T(-static_cast<std::make_unsigned_t<T>>(a));
    }
    return a / b;
  } else {
    using std::trunc;
    return trunc(a / b);
  }
}

// torch.remainder: the result takes the divisor's sign.
template <typename T>
SO_HD T remainder(T a, T b) {
  if constexpr (is_int_v<T>) {
    if (b == 0) return zero_division<T>();
    if constexpr (std::is_signed_v<T>) {
      if (b == T(-1)) return T(0);
      const T r = a % b;
      return (r != 0 && ((r < 0) != (b < 0))) ? T(r + b) : r;
    } else {
      return a % b;
    }
  } else {
    using std::fmod;
    T r = fmod(a, b);
    if (r != T(0) && ((b < T(0)) != (r < T(0)))) r += b;
    return r;
  }
}

// Integer powers by squaring; a negative exponent gives 0 except for bases 1 and -1 (torch).
template <typename T>
SO_HD T int_pow(T base, T exp) {
  if constexpr (std::is_signed_v<T>) {
    if (exp < 0) {
      if (base == 1) return T(1);
      if (base == -1) return (exp % 2 == 0) ? T(1) : T(-1);
      return T(0);
    }
  }
  T result = 1;
  while (exp) {
    if (exp & 1) result = T(result * base);
    exp = T(exp >> 1);
    base = T(base * base);
  }
  return result;
}

template <typename T>
SO_HD T pow(T a, T b) {
  if constexpr (std::is_same_v<T, bool>)
    return a || !b;
  else if constexpr (is_int_v<T>)
    return int_pow(a, b);
  else {
    using std::pow;
    return pow(a, b);
  }
}

// pow with a Python-number exponent, as torch's CPU pow(Tensor, Scalar) on float32, float64,
// bfloat16 and complex: the exponents 0.5 and -0.5 are sqrt and its reciprocal, so pow(-inf, 0.5)
// is NaN, pow(-0., 0.5) is -0. and a complex -inf gives (0, inf) (std::pow: +inf, +0., (inf, NaN));
// 2, 3, -1 and -2 are products (a complex std::pow goes through exp(b log a): (1e4 + 7i)^2 was 9
// ulps off in complex64, a * a is exact to a rounding).
template <typename T>
SO_HD T pow_scalar(T a, T b) {
  if constexpr (!is_int_v<T> && !std::is_same_v<T, bool>) {
    using std::sqrt;
    if (b == T(0.5)) return sqrt(a);
    if (b == T(-0.5)) return T(1) / sqrt(a);
    if (b == T(2)) return a * a;
    if (b == T(3)) return a * a * a;
    if (b == T(-1)) return T(1) / a;
    if (b == T(-2)) return T(1) / (a * a);
  }
  return pow(a, b);
}

// A 16-bit floating type (float16 or bfloat16, c10's or CUDA's), whose sign is bit 15: a formula
// that only negates or takes the absolute value computes in it (codegen Lowered.in_storage), by
// the sign bit alone. Through float each element took two conversions (float16 `neg` 0.45x torch).
template <typename T>
inline constexpr bool is_float16_storage_v = sizeof(T) == 2 && !std::is_integral_v<T>;

template <typename T>
SO_HD T with_sign_bits(T x, uint16_t flip, uint16_t keep) {
  uint16_t bits;
  std::memcpy(&bits, &x, 2);
  bits = static_cast<uint16_t>((bits & keep) ^ flip);
  std::memcpy(&x, &bits, 2);
  return x;
}

// -x, wrapping at T's width for integers (T(-x): int8 -128 stays -128, as torch).
template <typename T>
SO_HD T neg(T x) {
  if constexpr (is_float16_storage_v<T>)
    return with_sign_bits(x, 0x8000, 0xFFFF);
  else
    return T(-x);
}

template <typename T>
SO_HD T abs(T x) {
  if constexpr (std::is_unsigned_v<T> || std::is_same_v<T, bool>)
    return x;
  else if constexpr (is_int_v<T>)
    return x < 0 ? T(-x) : x;
  else if constexpr (is_float16_storage_v<T>)
    return with_sign_bits(x, 0, 0x7FFF);
  else if constexpr (is_complex_v<T>) {  // |z| as T: imaginary part 0
    using std::abs;
    return T(abs(x));
  } else {
    using std::fabs;
    return fabs(x);
  }
}

template <typename T>
SO_HD T sign(T x) {
  if constexpr (std::is_same_v<T, bool>)
    return x;
  else if constexpr (std::is_unsigned_v<T>)
    return T(x > 0);
  else
    return T((T(0) < x) - (x < T(0)));
}

// Rounding: identities on integers (torch.floor of an int tensor returns it unchanged).
#define SO_ROUNDING(name, fn)       \
  template <typename T>             \
  SO_HD T name(T x) {               \
    if constexpr (!is_float_v<T>) { \
      return x;                     \
    } else {                        \
      using std::fn;                \
      return fn(x);                 \
    }                               \
  }
SO_ROUNDING(floor, floor)
SO_ROUNDING(ceil, ceil)
SO_ROUNDING(trunc, trunc)
SO_ROUNDING(round, nearbyint)  // round half to even, as torch.round
#undef SO_ROUNDING

namespace detail {
// exp of a float on the host as arithmetic that gcc vectorises inline. libmvec's expf, which the
// loops called, takes a scalar path for every vector with a lane outside its fast range (a result
// that overflows or is denormal, inf, NaN): exp of -100 ran at 0.26x torch in bfloat16 and sigmoid
// of +-100 or inf at 0.06-0.3x, as masks of -inf and saturated logits give. x = n ln2 + r with |r|
// <= ln2 / 2 (ln2 split in two so n ln2 is exact), exp(r) by its degree-7 Taylor polynomial
// (truncation 5e-9 relative; 0.91 ulp at most over 2.3e7 floats, torch 0.56), 2^n applied as two
// powers of two so that results from 2^-149 to inf come out rounded once. x is clamped to [-160,
// 160] first, where exp is already 0 and inf, by comparisons that keep NaN (which the arithmetic
// then keeps).
[[gnu::always_inline]] inline float exp_float(float x) {
  x = x < -160.0f ? -160.0f : x;
  x = x > 160.0f ? 160.0f : x;
  const float rounded = x * 1.44269504f + 12582912.0f;  // 1.5 * 2^23: n = round(x log2 e) below
  const float n = rounded - 12582912.0f;
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;
  float p = 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  int32_t rounded_bits, base_bits;
  const float base = 12582912.0f;
  std::memcpy(&rounded_bits, &rounded, 4);
  std::memcpy(&base_bits, &base, 4);
  const int32_t k = rounded_bits - base_bits, half = k >> 1;  // |k| <= 231
  const int32_t low_bits = (half + 127) << 23, high_bits = (k - half + 127) << 23;
  float low, high;
  std::memcpy(&low, &low_bits, 4);
  std::memcpy(&high, &high_bits, 4);
  return p * low * high;
}

// log of a float on the host, vectorised inline for the same reason (libmvec's logf: a scalar path
// for 0, negatives, inf and NaN; bfloat16 log of a tensor with 10% zeros ran at 0.36x torch). x =
// 2^k m with m in [sqrt(1/2), sqrt(2)) read from the bits (denormals scaled by 2^23 first); log m =
// 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.172, by its series to s^9 (truncation 2e-9 relative),
// written around the exact f = m - 1 so that the division's rounding reaches a small term only
// (0.80 ulp at most over 5.8e7 positive floats, torch 0.90; 2 atanh(s) alone 1.9); k ln2 split in
// two as in exp_float. Special inputs by selects at the end.
[[gnu::always_inline]] inline float log_float(float x) {
  const bool denormal = x < 1.17549435e-38f;  // zero and negatives too: replaced below
  const float scaled = denormal ? x * 8388608.0f : x;
  uint32_t bits;
  std::memcpy(&bits, &scaled, 4);
  const int32_t e = static_cast<int32_t>(bits - 0x3f3504f3u) >> 23;  // 0x3f3504f3: sqrt(1/2)
  const uint32_t m_bits = bits - (static_cast<uint32_t>(e) << 23);
  float m;
  std::memcpy(&m, &m_bits, 4);
  const float k = static_cast<float>(e) - (denormal ? 23.0f : 0.0f);
  const float f = m - 1.0f, s = f / (2.0f + f), z = s * s, half_f2 = 0.5f * f * f;
  float r = 2.0f / 9;  // log(1 + f) = f - f^2/2 + s (f^2/2 + r), r = 2 (z/3 + z^2/5 + ...)
  r = r * z + 2.0f / 7;
  r = r * z + 2.0f / 5;
  r = r * z + 2.0f / 3;
  r = r * z;
  const float log_m = f - (half_f2 - s * (half_f2 + r));
  float y = k * 0.693359375f + (log_m - k * 2.12194440e-4f);
  y = x == 0.0f ? -std::numeric_limits<float>::infinity() : y;
  y = x < 0.0f ? std::numeric_limits<float>::quiet_NaN() : y;
  y = x == std::numeric_limits<float>::infinity() ? x : y;
  return x != x ? x : y;
}
}  // namespace detail

// Float functions: the formula checker admits them on floating (and, where listed in
// codegen/pointwise/lower.py, complex) compute types only.
#define SO_UNARY(name, fn, expr) \
  template <typename T>          \
  SO_HD T name(T x) {            \
    using std::fn;               \
    return expr;                 \
  }

template <typename T>
SO_HD T exp(T x) {
#if !defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, float>) return detail::exp_float(x);
#endif
  using std::exp;
  return exp(x);
}

template <typename T>
SO_HD T log(T x) {
#if !defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, float>) return detail::log_float(x);
#endif
  using std::log;
  return log(x);
}
SO_UNARY(exp2, exp2, exp2(x))
SO_UNARY(expm1, expm1, expm1(x))
SO_UNARY(log2, log2, log2(x))
SO_UNARY(log1p, log1p, log1p(x))
SO_UNARY(sqrt, sqrt, sqrt(x))
SO_UNARY(sin, sin, sin(x))
SO_UNARY(cos, cos, cos(x))
SO_UNARY(tan, tan, tan(x))
SO_UNARY(tanh, tanh, tanh(x))
SO_UNARY(erf, erf, erf(x))
SO_UNARY(erfc, erfc, erfc(x))
SO_UNARY(rsqrt, sqrt, T(1) / sqrt(x))
SO_UNARY(sigmoid, exp, T(1) / (T(1) + pw::exp(-x)))
#undef SO_UNARY

// f.template operator()<I>() for the runtime i in [0, N): a generated launcher passes the values
// its op's str arguments have (gelu's approximate) as a template argument, so that each row loop
// holds the one branch of the formula they select (codegen/dest/pointwise_kernels.py).
template <int N, int I = 0, typename F>
decltype(auto) with_case(int i, F&& f) {
  if constexpr (I + 1 >= N) {
    return f.template operator()<I>();
  } else {
    return i == I ? f.template operator()<I>() : with_case<N, I + 1>(i, f);
  }
}

// The standard normal CDF (torch.special.ndtr), gelu's Phi. A float on the host is a rational
// fit of erf, x P(x^2) / Q(x^2) on |x| <= 3.925 (erf is 1 in float beyond), within 3.6e-7 of
// erf relative, so Phi within 2.4e-7 absolute: the accuracy of torch's own CPU gelu (oneDNN's,
// 1.3e-6 absolute on [-5, 5]) at twice libmvec's erff speed, as it has no exp and no branch.
// Elsewhere erfc, which keeps Phi's relative accuracy in the lower tail.
template <typename T>
SO_HD T normcdf(T x) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<T, float>) {
    return ::normcdff(x);  // CUDA's
  } else {
    return ::normcdf(x);
  }
#else
  if constexpr (std::is_same_v<T, float>) {
    // erf(z) = sign(z) min(1, |z| P(u) / Q(u)), u = min(z^2, limit^2): one-sided clamps that
    // keep a NaN, which gcc vectorises to a compare and blends (two-sided clamps of z and of the
    // result took twice as many, 21% of the loop). Beyond the limit |z| P / Q > 1: erf is 1.
    constexpr float limit = 3.925f;
    const float z = x * 0.70710678118654752f;
    const float zz = z * z;
    const float u = limit * limit < zz ? limit * limit : zz;
    float p = 2.1074591e-06f;
    p = p * u + 2.8469553e-04f;
    p = p * u + 3.6449526e-03f;
    p = p * u + 5.2383956e-02f;
    p = p * u + 1.8725720e-01f;
    p = p * u + 1.1283791e+00f;
    float q = 3.8676062e-05f;
    q = q * u + 1.1379999e-03f;
    q = q * u + 1.4725211e-02f;
    q = q * u + 1.1285450e-01f;
    q = q * u + 4.9928534e-01f;
    q = q * u + 1.0f;
    const float e = std::fabs(z) * p / q;
    return 0.5f + 0.5f * std::copysign(1.0f < e ? 1.0f : e, z);
  } else {
    using std::erfc;
    return T(0.5) * erfc(-x * T(0.70710678118654752440));
  }
#endif
}

template <typename T>
SO_HD T fma(T a, T b, T c) {
  if constexpr (is_float_v<T>) {
    using std::fma;
    return fma(a, b, c);
  } else {
    return T(a * b + c);
  }
}

// A formula's Scalar argument as the compute type, from the plain fields the launchers receive
// (the host glue fills them from an at::Scalar).
struct ScalarArg {
  double real = 0;
  double imag = 0;  // a complex number's imaginary part (CPU kernels of complex dtypes)
  int64_t integral = 0;
  bool is_integral = false;
  bool present = true;  // false for a None `Scalar?`
};

template <typename T>
SO_HD T scalar_as(const ScalarArg& s) {
  if constexpr (std::is_same_v<T, bool>) {
    return s.is_integral ? s.integral != 0 : (s.real != 0 || s.imag != 0);
  } else if constexpr (std::is_arithmetic_v<T>) {
    return s.is_integral ? T(s.integral) : T(s.real);
  } else {  // complex
    using V = typename T::value_type;
    return s.is_integral ? T(V(s.integral), V(0)) : T(V(s.real), V(s.imag));
  }
}

}  // namespace structgen::pw
