// CPU impl of cdist: pairwise p-norm distances between the rows of x1 [*, r1, m] and x2 [*, r2, m].
// The meta function (rule) has checked m, the dtypes and broadcast the batch dims into `out`.
//
// p = 2 takes torch's matrix-product form when compute_mode asks for it (None: r1 > 25 or
// r2 > 25; 1: always): d = sqrt(max(|x|^2 + |y|^2 - 2 x.y^T, 0)) with x.y^T on structops' mm
// kernels (ops/linalg/gemm.h), as torch.cdist does; it is fast but loses digits for nearby
// points. Every other case sums |x - y|^p over m directly, one output row per task, the inner
// loop along m (contiguous) vectorised.
#include <ops/linalg/gemm.h>
#include <structgen/cpu/pointwise.h>
#include <ops/cdist/common.h>
#include <ops/cdist/launch.h>  // linalg::kCdistRecompute
#include <structops/ops/cdist.h>
#include <structgen/parallel.h>

#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>

#include <algorithm>
#include <cmath>
#include <vector>
#include <ops/runtime_names.h>

namespace structops::impl {
namespace {

enum class Norm { kZero, kOne, kTwo, kInf, kGeneral };

template <Norm K, typename acc_t, typename scalar_t>
SO_CPU_CLONES acc_t distance(const scalar_t* __restrict x, const scalar_t* __restrict y, int64_t m, acc_t p) {
  acc_t acc = 0;
  for (int64_t k = 0; k < m; ++k) {
    const acc_t d = std::abs(static_cast<acc_t>(x[k]) - static_cast<acc_t>(y[k]));
    if constexpr (K == Norm::kZero)
      acc += d != d ? d : (d != acc_t(0) ? acc_t(1) : acc_t(0));  // NaN propagates
    else if constexpr (K == Norm::kOne)
      acc += d;
    else if constexpr (K == Norm::kTwo)
      acc += d * d;
    else if constexpr (K == Norm::kInf)
      acc = d > acc || d != d ? d : acc;  // NaN propagates
    else
      acc += std::pow(d, p);
  }
  if constexpr (K == Norm::kTwo)
    return std::sqrt(acc);
  else if constexpr (K == Norm::kGeneral)
    return std::pow(acc, acc_t(1) / p);
  return acc;
}

template <Norm K, typename scalar_t>
void direct(const scalar_t* x1, const scalar_t* x2, scalar_t* o, int64_t batches, int64_t r1, int64_t r2,
            int64_t m, double p) {
  using acc_t = at::opmath_type<scalar_t>;
  structgen::parallel_for(
      0, batches * r1, std::max<int64_t>(1, cpu::kGrainSize / std::max<int64_t>(r2 * m, 1)),
      [&](int64_t begin, int64_t end) {
        for (int64_t row = begin; row < end; ++row) {
          const int64_t b = row / r1;
          const scalar_t* x = x1 + row * m;
          for (int64_t j = 0; j < r2; ++j) {
            o[row * r2 + j] =
                static_cast<scalar_t>(distance<K, acc_t>(x, x2 + (b * r2 + j) * m, m, static_cast<acc_t>(p)));
          }
        }
      });
}

// sqrt(max(|x|^2 + |y|^2 - 2 x.y^T, 0)) per batch: the product on the mm kernels, in out's dtype.
void euclidean_by_mm(const at::Tensor& x1, const at::Tensor& x2, const at::Tensor& out3) {
  for (int64_t b = 0; b < x1.size(0); ++b) {
    const at::Tensor a = x1.select(0, b), c = out3.select(0, b);
    cpu::mm(a, x2.select(0, b).t(), c, /*beta=*/0, /*alpha=*/-2);
  }
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, out3.scalar_type(), "cdist", [&] {
    using acc_t = at::opmath_type<scalar_t>;
    const int64_t batches = x1.size(0), r1 = x1.size(1), r2 = x2.size(1), m = x1.size(2);
    const scalar_t* a = x1.const_data_ptr<scalar_t>();
    const scalar_t* b = x2.const_data_ptr<scalar_t>();
    std::vector<acc_t> n2(batches * r2);
    for (int64_t j = 0; j < batches * r2; ++j) {
      acc_t s = 0;
      for (int64_t k = 0; k < m; ++k)
        s += static_cast<acc_t>(b[j * m + k]) * static_cast<acc_t>(b[j * m + k]);
      n2[j] = s;
    }
    scalar_t* o = out3.data_ptr<scalar_t>();
    structgen::parallel_for(
        0, batches * r1, std::max<int64_t>(1, cpu::kGrainSize / std::max<int64_t>(r2, 1)),
        [&](int64_t begin, int64_t end) {
          for (int64_t row = begin; row < end; ++row) {
            acc_t n1 = 0;
            for (int64_t k = 0; k < m; ++k)
              n1 += static_cast<acc_t>(a[row * m + k]) * static_cast<acc_t>(a[row * m + k]);
            const acc_t* ny = n2.data() + (row / r1) * r2;
            const scalar_t* y = b + (row / r1) * r2 * m;
            for (int64_t j = 0; j < r2; ++j) {
              const acc_t d2 = n1 + ny[j] + static_cast<acc_t>(o[row * r2 + j]);
              o[row * r2 + j] =
                  d2 < static_cast<acc_t>(linalg::kCdistRecompute) * (n1 + ny[j])
                      ? static_cast<scalar_t>(distance<Norm::kTwo, acc_t>(a + row * m, y + j * m, m, 2))
                      : static_cast<scalar_t>(std::sqrt(std::max(d2, acc_t(0))));
            }
          }
        });
  });
}

}  // namespace

void cdist_out_cpu(const at::Tensor& x1, const at::Tensor& x2, double p, std::optional<int64_t> compute_mode,
                   at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  const auto operands = linalg::cdist_operands(x1, x2, p, compute_mode, out);
  if (!operands) return;
  auto [a, b, o, batches, r1, r2, m, mm_mode] = *operands;
  if (p == 2 && mm_mode) {
    euclidean_by_mm(a, b, o);
    return;
  }
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, out.scalar_type(), "cdist", [&] {
    const scalar_t* pa = a.const_data_ptr<scalar_t>();
    const scalar_t* pb = b.const_data_ptr<scalar_t>();
    scalar_t* po = o.data_ptr<scalar_t>();
    if (p == 0)
      direct<Norm::kZero>(pa, pb, po, batches, r1, r2, m, p);
    else if (p == 1)
      direct<Norm::kOne>(pa, pb, po, batches, r1, r2, m, p);
    else if (p == 2)
      direct<Norm::kTwo>(pa, pb, po, batches, r1, r2, m, p);
    else if (std::isinf(p))
      direct<Norm::kInf>(pa, pb, po, batches, r1, r2, m, p);
    else
      direct<Norm::kGeneral>(pa, pb, po, batches, r1, r2, m, p);
  });
}

}  // namespace structops::impl
