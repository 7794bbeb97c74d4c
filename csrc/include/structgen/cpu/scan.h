// The CPU impl of a scan op (manifest `scan: true`): out = the running combine (add, mul,
// logaddexp: the rule's meta.combine) of self along one dim, contiguous rows side by side in
// groups or blocks of columns, on the intra-op threads. Included by the generated runtime_kernels_cpu.cpp
// only, so a project without scans compiles none of it.
#pragma once

#include <ATen/AccumulateType.h>
#include <ATen/Dispatch_v2.h>
#include <ATen/core/Tensor.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include <structgen/cpu/pointwise.h>  // cpu::operand, cpu::kGrainSize, SO_CPU_CLONES
#include <structgen/parallel.h>
#include <structgen/scan_combine.h>  // ScanCombine, scan_identity, scan_step

namespace structgen::cpu {

// A scan cannot cascade: its running value lives in double for floats and complex<double> for
// complex (at::acc_type, as torch's CPU scans), int64 for integer sums. Products of integers and
// unsigned sums run in uint64_t, so they wrap as the type's own arithmetic does (a signed
// overflow in C++ would be undefined).
template <typename scalar_t, ScanCombine C, bool = std::is_integral_v<scalar_t>>
struct ScanAcc {
  using type = at::acc_type<scalar_t, false>;
};
template <typename scalar_t, ScanCombine C>
struct ScanAcc<scalar_t, C, true> {
  using type = std::conditional_t<std::is_unsigned_v<scalar_t> || C == ScanCombine::Mul, uint64_t, int64_t>;
};

namespace scan_detail {

// out = running combine of x along the middle dim of [outer, n, inner] (both contiguous), for
// `width` columns from x. in_t: what x holds where it is not the result's type (an integer input
// scanned into int64, read as it is).
template <ScanCombine C, typename scalar_t, typename in_t, typename A>
SO_CPU_CLONES void scan_block(const in_t* __restrict x, scalar_t* __restrict o, int64_t n, int64_t inner,
                              int64_t width, A* __restrict acc) {
  for (int64_t k = 0; k < width; ++k) acc[k] = scan_identity<C, A>();
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t k = 0; k < width; ++k) {
      acc[k] = scan_step<C>(acc[k], static_cast<A>(x[j * inner + k]));
      o[j * inner + k] = static_cast<scalar_t>(acc[k]);
    }
  }
}

// Contiguous rows (inner == 1): kRowGroup rows side by side, so their running values are
// independent chains (one row alone waits on each step's latency).
constexpr int64_t kRowGroup = 8;

template <ScanCombine C, typename scalar_t, typename in_t, typename A>
SO_CPU_CLONES void scan_rows(const in_t* __restrict x, scalar_t* __restrict o, int64_t n, int64_t rows) {
  std::array<A, kRowGroup> acc;
  acc.fill(scan_identity<C, A>());
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t r = 0; r < rows; ++r) {
      acc[r] = scan_step<C>(acc[r], static_cast<A>(x[r * n + j]));
      o[r * n + j] = static_cast<scalar_t>(acc[r]);
    }
  }
}

template <ScanCombine C, typename in_t, typename scalar_t>
void scan_contiguous(const at::Tensor& x, const at::Tensor& out, int64_t dim) {
  using A = typename ScanAcc<scalar_t, C>::type;
  const int64_t n = x.dim() == 0 ? 1 : x.size(dim);
  int64_t inner = 1;
  for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
  const int64_t outer = x.numel() / (n * inner);
  const in_t* in = static_cast<const in_t*>(x.const_data_ptr());
  scalar_t* o = static_cast<scalar_t*>(out.data_ptr());  // contiguous: the meta layout
  if (inner == 1 && n > 1) {
    const int64_t groups = (outer + kRowGroup - 1) / kRowGroup;
    parallel_for(
        0, groups, std::max<int64_t>(1, kGrainSize / (n * kRowGroup)), [&](int64_t begin, int64_t end) {
          for (int64_t g = begin; g < end; ++g) {
            const int64_t r0 = g * kRowGroup;
            scan_rows<C, scalar_t, in_t, A>(in + r0 * n, o + r0 * n, n, std::min(kRowGroup, outer - r0));
          }
        });
    return;
  }
  constexpr int64_t kBlock = 256;
  const int64_t blocks = (inner + kBlock - 1) / kBlock;
  parallel_for(0, outer * blocks, std::max<int64_t>(1, kGrainSize / (n * std::min(inner, kBlock))),
               [&](int64_t begin, int64_t end) {
                 std::array<A, kBlock> acc;
                 for (int64_t t = begin; t < end; ++t) {
                   const int64_t b = t / blocks, k0 = (t % blocks) * kBlock;
                   const int64_t offset = b * n * inner + k0;
                   scan_block<C, scalar_t, in_t, A>(in + offset, o + offset, n, inner,
                                                    std::min(kBlock, inner - k0), acc.data());
                 }
               });
}

}  // namespace scan_detail

// The meta function has given out its shape, dtype and (contiguous) layout; scan_dim holds the
// wrapped dim (empty for a 0-dim self).
template <ScanCombine C>
void scan_out(const at::Tensor& self, at::IntArrayRef scan_dim, const at::Tensor& out) {
  if (out.numel() == 0) return;
  if (self.dim() == 0) {  // one element, its own result: copied, as torch (0 + -0.0 would be +0.0)
    out.copy_(self);
    return;
  }
  const int64_t dim = scan_dim.empty() ? 0 : scan_dim[0];
  // An integer or bool input of an int64 result is read as it is, each element widened as it is
  // combined (an int64 copy took 8 bytes per element); other dtype= casts copy.
  const at::ScalarType t = self.scalar_type();
  const bool widen = out.scalar_type() == at::kLong && (t == at::kBool || t == at::kByte || t == at::kChar ||
                                                        t == at::kShort || t == at::kInt || t == at::kLong);
  const at::Tensor x = (widen ? self : operand(self, out.scalar_type(), self.device())).contiguous();
  if constexpr (C == ScanCombine::LogAddExp) {
    AT_DISPATCH_V2(out.scalar_type(), "scan",
                   AT_WRAP([&] { scan_detail::scan_contiguous<C, scalar_t, scalar_t>(x, out, dim); }),
                   AT_EXPAND(AT_FLOATING_TYPES), at::kHalf, at::kBFloat16);
  } else {
    if (widen) {
      AT_DISPATCH_V2(x.scalar_type(), "scan",
                     AT_WRAP([&] { scan_detail::scan_contiguous<C, scalar_t, int64_t>(x, out, dim); }),
                     AT_EXPAND(AT_INTEGRAL_TYPES), at::kBool);
      return;
    }
    AT_DISPATCH_V2(out.scalar_type(), "scan",
                   AT_WRAP([&] { scan_detail::scan_contiguous<C, scalar_t, scalar_t>(x, out, dim); }),
                   AT_EXPAND(AT_ALL_TYPES), AT_EXPAND(AT_COMPLEX_TYPES), at::kHalf, at::kBFloat16, at::kBool,
                   AT_EXPAND(AT_BAREBONES_UNSIGNED_TYPES));
  }
}

}  // namespace structgen::cpu
