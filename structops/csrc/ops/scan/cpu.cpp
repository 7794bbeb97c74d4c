// CPU impl of cumsum: a running sum along one dim, contiguous rows side by side in groups or
// blocks of columns, on torch's intra-op threads. The meta function has applied dtype to out.
#include <structgen/cpu/pointwise.h>  // cpu::operand, cpu::kGrainSize, SO_CPU_CLONES
#include <structops/ops/cumsum.h>
#include <structgen/parallel.h>

#include <ATen/AccumulateType.h>
#include <ATen/Dispatch_v2.h>

#include <algorithm>
#include <array>
#include <type_traits>
#include <ops/runtime_names.h>

namespace structops::impl {
namespace {

// A scan cannot cascade: its running sums accumulate in double for floats and complex<double> for
// complex (at::acc_type, as torch's cumsum), int64 for integers.
// Unsigned types (bool, uint8..uint64) run in uint64_t, so their sums wrap as the type's do.
template <typename scalar_t, bool = std::is_integral_v<scalar_t>>
struct ScanAcc {
  using type = at::acc_type<scalar_t, false>;
};
template <typename scalar_t>
struct ScanAcc<scalar_t, true> {
  using type = std::conditional_t<std::is_unsigned_v<scalar_t>, uint64_t, int64_t>;
};
template <typename scalar_t>
using scan_acc_t = typename ScanAcc<scalar_t>::type;

// out = running sum of x along the middle dim of [outer, n, inner] (both contiguous). in_t: what
// x holds where it is not the result's type (an integer input summed into int64, read as it is).
template <typename scalar_t, typename in_t = scalar_t>
SO_CPU_CLONES void scan_block(const in_t* __restrict x, scalar_t* __restrict o, int64_t n, int64_t inner,
                              int64_t width, scan_acc_t<scalar_t>* __restrict acc) {
  for (int64_t k = 0; k < width; ++k) acc[k] = scan_acc_t<scalar_t>(0);
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t k = 0; k < width; ++k) {
      acc[k] += static_cast<scan_acc_t<scalar_t>>(x[j * inner + k]);
      o[j * inner + k] = static_cast<scalar_t>(acc[k]);
    }
  }
}

// Scans along contiguous rows (inner == 1): kRowGroup rows side by side, so their running sums
// are independent chains (one row alone waits on each add's latency).
constexpr int64_t kRowGroup = 8;

template <typename scalar_t, typename in_t = scalar_t>
SO_CPU_CLONES void scan_rows(const in_t* __restrict x, scalar_t* __restrict o, int64_t n, int64_t rows) {
  std::array<scan_acc_t<scalar_t>, kRowGroup> acc{};
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t r = 0; r < rows; ++r) {
      acc[r] += static_cast<scan_acc_t<scalar_t>>(x[r * n + j]);
      o[r * n + j] = static_cast<scalar_t>(acc[r]);
    }
  }
}

}  // namespace

void cumsum_out_cpu(const at::Tensor& self, at::IntArrayRef scan_dim, std::optional<at::ScalarType> /*dtype*/,
                    at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  if (out.numel() == 0) return;
  if (self.dim() == 0) {  // one element, its own sum: copied, as torch (0 + -0.0 would be +0.0)
    out.copy_(self);
    return;
  }
  // An integer or bool input of an int64 result is read as it is, each element widened as it is
  // added (an int64 copy took 8 bytes per element); other dtype= casts copy.
  const at::ScalarType t = self.scalar_type();
  const bool widen = out.scalar_type() == at::kLong && (t == at::kBool || t == at::kByte || t == at::kChar ||
                                                        t == at::kShort || t == at::kInt || t == at::kLong);
  const at::Tensor x = (widen ? self : cpu::operand(self, out.scalar_type(), self.device())).contiguous();
  const int64_t dim = scan_dim.empty() ? 0 : scan_dim[0];  // a 0-dim self scans one element
  const int64_t n = x.dim() == 0 ? 1 : x.size(dim);
  int64_t inner = 1;
  for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
  const int64_t outer = x.numel() / (n * inner);
  constexpr int64_t kBlock = 256;
  const int64_t blocks = (inner + kBlock - 1) / kBlock;
  const auto scan = [&](auto input, auto output) {
    using in_t = decltype(input);
    using scalar_t = decltype(output);
    const in_t* in = static_cast<const in_t*>(x.const_data_ptr());
    scalar_t* o = static_cast<scalar_t*>(out.data_ptr());  // contiguous: the meta layout
    if (inner == 1 && n > 1) {
      const int64_t groups = (outer + kRowGroup - 1) / kRowGroup;
      structgen::parallel_for(0, groups, std::max<int64_t>(1, cpu::kGrainSize / (n * kRowGroup)),
                              [&](int64_t begin, int64_t end) {
                                for (int64_t g = begin; g < end; ++g) {
                                  const int64_t r0 = g * kRowGroup;
                                  scan_rows(in + r0 * n, o + r0 * n, n, std::min(kRowGroup, outer - r0));
                                }
                              });
      return;
    }
    structgen::parallel_for(
        0, outer * blocks, std::max<int64_t>(1, cpu::kGrainSize / (n * std::min(inner, kBlock))),
        [&](int64_t begin, int64_t end) {
          std::array<scan_acc_t<scalar_t>, kBlock> acc;
          for (int64_t t = begin; t < end; ++t) {
            const int64_t b = t / blocks, k0 = (t % blocks) * kBlock;
            const int64_t offset = b * n * inner + k0;
            scan_block(in + offset, o + offset, n, inner, std::min(kBlock, inner - k0), acc.data());
          }
        });
  };
  if (widen) {
    AT_DISPATCH_V2(x.scalar_type(), "cumsum", AT_WRAP([&] { scan(scalar_t{}, int64_t{}); }),
                   AT_EXPAND(AT_INTEGRAL_TYPES), at::kBool);
    return;
  }
  AT_DISPATCH_V2(out.scalar_type(), "cumsum", AT_WRAP([&] { scan(scalar_t{}, scalar_t{}); }),
                 AT_EXPAND(AT_ALL_TYPES), AT_EXPAND(AT_COMPLEX_TYPES), at::kHalf, at::kBFloat16, at::kBool,
                 AT_EXPAND(AT_BAREBONES_UNSIGNED_TYPES));
}

}  // namespace structops::impl
