// CPU impls of amax and amin (NaN-propagating, on structgen/cpu/reduce.h's loops) and of argmax
// and argmin (which need the element's index: a loop of their own over reduced rows).
#include "cpu_reducers.h"

#include <structgen/cpu/reduce.h>
#include <structops/ops/amax.h>
#include <structops/ops/amin.h>
#include <structops/ops/argmax.h>
#include <structops/ops/argmin.h>

#include <ATen/Dispatch.h>

#include <algorithm>
#include <ops/runtime_names.h>

namespace structops::impl {
using namespace reducers;
namespace {

// Index of the first maximum (kMax) or minimum over the last `n` elements of each row; a NaN
// counts as the extreme, and the first NaN wins (torch.argmax/argmin).
template <typename scalar_t, bool kMax>
int64_t arg_extremum_row(const scalar_t* x, int64_t n) {
  using acc_t = at::opmath_type<scalar_t>;
  acc_t best = static_cast<acc_t>(x[0]);
  int64_t at = 0;
  if (best != best) return 0;
  for (int64_t i = 1; i < n; ++i) {
    const acc_t v = static_cast<acc_t>(x[i]);
    if (v != v) return i;
    if (kMax ? v > best : v < best) best = v, at = i;
  }
  return at;
}

template <bool kMax>
void arg_extremum(const at::Tensor& self, at::IntArrayRef reduced_dims, const at::Tensor& out) {
  const auto [x, n] = cpu::reduced_rows(self, reduced_dims);
  const int64_t rows = out.numel();
  if (rows == 0) return;
  int64_t* o = out.data_ptr<int64_t>();
  AT_DISPATCH_ALL_TYPES_AND3(
      at::kHalf, at::kBFloat16, at::kBool, x.scalar_type(), kMax ? "argmax" : "argmin", [&] {
        const scalar_t* in = x.const_data_ptr<scalar_t>();
        structgen::parallel_for(0, rows, std::max<int64_t>(1, cpu::kGrainSize / std::max<int64_t>(n, 1)),
                                [&](int64_t begin, int64_t end) {
                                  for (int64_t r = begin; r < end; ++r)
                                    o[r] = arg_extremum_row<scalar_t, kMax>(in + r * n, n);
                                });
      });
}

template <bool kMax>
void extremum(const at::Tensor& self, at::IntArrayRef reduced_dims, const at::Tensor& out) {
  AT_DISPATCH_ALL_TYPES_AND3(
      at::kHalf, at::kBFloat16, at::kBool, out.scalar_type(), kMax ? "amax" : "amin",
      [&] { cpu::reduce<scalar_t, scalar_t>(Extremum<scalar_t, kMax>{}, self, reduced_dims, out); });
}

}  // namespace

void amax_out_cpu(const at::Tensor& self, at::IntArrayRef reduced_dims, bool /*keepdim*/,
                  at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  extremum<true>(self, reduced_dims, out);
}

void amin_out_cpu(const at::Tensor& self, at::IntArrayRef reduced_dims, bool /*keepdim*/,
                  at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  extremum<false>(self, reduced_dims, out);
}

void argmax_out_cpu(const at::Tensor& self, at::IntArrayRef reduced_dims, bool /*keepdim*/,
                    at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  arg_extremum<true>(self, reduced_dims, out);
}

void argmin_out_cpu(const at::Tensor& self, at::IntArrayRef reduced_dims, bool /*keepdim*/,
                    at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  arg_extremum<false>(self, reduced_dims, out);
}

}  // namespace structops::impl
