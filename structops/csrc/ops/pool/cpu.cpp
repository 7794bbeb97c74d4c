// CPU impls of max_pool2d/3d_with_indices and avg_pool2d. The meta function (from the rule) has
// checked the ranks, the int[N] arguments' lengths and the window sizes, and sized the outputs;
// these compute.
//
// One kernel for 2 and 3 spatial dims (2-D is 3-D with a depth-1 window). Work is split over
// output rows (plane, od, oh) on structgen::parallel_for. Per row, the window's valid input rows
// are walked in torch's order (d, h, then w), and for each kernel column the output columns whose
// input lies inside the image are updated in one loop over `ow` (a strided load and a select, which
// gcc vectorises), instead of one output element at a time.
#include <structgen/cpu/pointwise.h>  // SO_CPU_CLONES, cpu::kGrainSize
#include <structops/ops/avg_pool2d.h>
#include <structops/ops/max_pool2d_with_indices.h>
#include <structops/ops/max_pool3d_with_indices.h>
#include <structgen/parallel.h>

#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>

#include <algorithm>
#include <limits>
#include <vector>
#include <ops/runtime_names.h>

namespace structops::impl {
namespace {

struct Dim {
  int64_t in, out, k, s, p, d;
};

// One spatial dim's window from the int[N] arguments (one value for all dims, or one per dim).
struct Geometry {
  int64_t planes = 1;
  Dim dim[3];  // d, h, w (d is 1 x 1 for 2-D pooling)
};

int64_t pick(at::IntArrayRef v, size_t i) { return v.size() == 1 ? v[0] : v[i]; }

Geometry geometry(const at::Tensor& self, const at::Tensor& out, int spatial, at::IntArrayRef kernel,
                  at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation) {
  Geometry g;
  const int64_t nd = self.dim();
  for (int64_t i = 0; i < nd - spatial; ++i) g.planes *= self.size(i);
  g.dim[0] = {1, 1, 1, 1, 0, 1};
  for (int i = 0; i < spatial; ++i) {
    const int64_t k = pick(kernel, i);
    Dim& d = g.dim[3 - spatial + i];
    d = {self.size(nd - spatial + i),
         out.size(nd - spatial + i),
         k,
         stride.empty() ? k : pick(stride, i),
         pick(padding, i),
         dilation.empty() ? 1 : pick(dilation, i)};
  }
  return g;
}

// The input positions of a window along one dim that lie inside the input.
struct Span {
  int64_t pos[64];
  int64_t n = 0;
  std::vector<int64_t> more;  // kernels wider than 64
  const int64_t* data() const { return more.empty() ? pos : more.data(); }
};

void valid_positions(const Dim& d, int64_t o, Span& span) {
  span.n = 0;
  span.more.clear();
  const int64_t start = o * d.s - d.p;
  if (d.k > 64) span.more.reserve(d.k);
  for (int64_t i = 0; i < d.k; ++i) {
    const int64_t x = start + i * d.d;
    if (x < 0 || x >= d.in) continue;
    if (d.k > 64)
      span.more.push_back(x);
    else
      span.pos[span.n] = x;
    ++span.n;
  }
}

// Output columns [lo, hi) whose input column ow * s + offset is inside [0, in).
void column_range(const Dim& w, int64_t offset, int64_t& lo, int64_t& hi) {
  lo = offset >= 0 ? 0 : (-offset + w.s - 1) / w.s;
  hi = w.in - 1 - offset >= 0 ? std::min(w.out, (w.in - 1 - offset) / w.s + 1) : 0;
  lo = std::min(lo, hi);
}

template <typename scalar_t>
SO_CPU_CLONES void max_columns(const scalar_t* __restrict row, int64_t s, int64_t n, int64_t base,
                               scalar_t* __restrict best, int64_t* __restrict index) {
  using acc_t = at::opmath_type<scalar_t>;
  for (int64_t ow = 0; ow < n; ++ow) {
    const acc_t v = static_cast<acc_t>(row[ow * s]);
    const acc_t b = static_cast<acc_t>(best[ow]);
    const bool take = v > b || v != v;  // torch: a NaN replaces the max (the last NaN wins)
    best[ow] = take ? row[ow * s] : best[ow];
    index[ow] = take ? base + ow * s : index[ow];
  }
}

// Output rows per chunk of parallel work: torch's grain counts window elements, but a row costs
// more than its elements (the row's spans, a strided select per kernel column): ~1.4 ns per window
// element over [1, 16, 32, 32] with k = 2, so that 256 rows stayed on one thread (23.6 us, 0.83x
// torch on 2 threads). A quarter of the grain splits work of ~10 us and more.
int64_t rows_per_chunk(int64_t row_elements) {
  return std::max<int64_t>(1, cpu::kGrainSize / 4 / std::max<int64_t>(1, row_elements));
}

template <typename scalar_t>
void max_pool(const at::Tensor& self, const Geometry& g, const at::Tensor& out, const at::Tensor& indices) {
  const Dim &D = g.dim[0], &H = g.dim[1], &W = g.dim[2];
  const int64_t rows = g.planes * D.out * H.out, plane_in = D.in * H.in * W.in;
  if (rows == 0 || W.out == 0) return;
  const at::Tensor x = self.contiguous();
  const scalar_t* in = x.const_data_ptr<scalar_t>();
  scalar_t* o = out.mutable_data_ptr<scalar_t>();
  int64_t* ind = indices.mutable_data_ptr<int64_t>();
  const scalar_t lowest = std::numeric_limits<scalar_t>::has_infinity
                              ? -std::numeric_limits<scalar_t>::infinity()
                              : std::numeric_limits<scalar_t>::lowest();
  const int64_t grain = rows_per_chunk(W.out * D.k * H.k * W.k);
  structgen::parallel_for(0, rows, grain, [&](int64_t rb, int64_t re) {
    Span sd, sh;
    for (int64_t r = rb; r < re; ++r) {
      const int64_t oh = r % H.out, od = (r / H.out) % D.out, plane = r / (H.out * D.out);
      const scalar_t* src = in + plane * plane_in;
      scalar_t* best = o + r * W.out;
      int64_t* index = ind + r * W.out;
      std::fill(best, best + W.out, lowest);
      std::fill(index, index + W.out, int64_t{-1});
      valid_positions(D, od, sd);
      valid_positions(H, oh, sh);
      for (int64_t a = 0; a < sd.n; ++a)
        for (int64_t b = 0; b < sh.n; ++b) {
          const int64_t row_base = (sd.data()[a] * H.in + sh.data()[b]) * W.in;
          for (int64_t j = 0; j < W.k; ++j) {
            const int64_t offset = j * W.d - W.p;
            int64_t lo, hi;
            column_range(W, offset, lo, hi);
            max_columns<scalar_t>(src + row_base + offset + lo * W.s, W.s, hi - lo,
                                  row_base + offset + lo * W.s, best + lo, index + lo);
          }
        }
      // A window whose values all equal the lowest value keeps torch's index: its first element.
      for (int64_t ow = 0; ow < W.out; ++ow) {
        if (index[ow] >= 0) continue;
        int64_t iw = ow * W.s - W.p;
        while (iw < 0) iw += W.d;
        index[ow] = (sd.data()[0] * H.in + sh.data()[0]) * W.in + iw;
      }
    }
  });
}

template <typename scalar_t, typename acc_t>
SO_CPU_CLONES void sum_columns(const scalar_t* __restrict row, int64_t s, int64_t n, acc_t* __restrict acc) {
  for (int64_t ow = 0; ow < n; ++ow) acc[ow] += static_cast<acc_t>(row[ow * s]);
}

template <typename scalar_t>
void avg_pool(const at::Tensor& self, const Geometry& g, bool count_include_pad,
              std::optional<int64_t> divisor, const at::Tensor& out) {
  using acc_t = at::opmath_type<scalar_t>;
  const Dim &D = g.dim[0], &H = g.dim[1], &W = g.dim[2];
  const int64_t rows = g.planes * D.out * H.out, plane_in = D.in * H.in * W.in;
  if (rows == 0 || W.out == 0) return;
  const at::Tensor x = self.contiguous();
  const scalar_t* in = x.const_data_ptr<scalar_t>();
  scalar_t* o = out.mutable_data_ptr<scalar_t>();
  const int64_t grain = rows_per_chunk(W.out * D.k * H.k * W.k);
  // torch's divisor: the window clipped to the padded input (count_include_pad) or to the input.
  auto clipped = [](const Dim& d, int64_t o, bool with_pad) {
    const int64_t start = o * d.s - d.p, end = std::min(start + d.k, d.in + d.p);
    return with_pad ? end - start : std::min(end, d.in) - std::max(start, int64_t{0});
  };
  structgen::parallel_for(0, rows, grain, [&](int64_t rb, int64_t re) {
    std::vector<acc_t> acc(W.out);
    Span sd, sh;
    for (int64_t r = rb; r < re; ++r) {
      const int64_t oh = r % H.out, od = (r / H.out) % D.out, plane = r / (H.out * D.out);
      const scalar_t* src = in + plane * plane_in;
      std::fill(acc.begin(), acc.end(), acc_t(0));
      valid_positions(D, od, sd);
      valid_positions(H, oh, sh);
      for (int64_t a = 0; a < sd.n; ++a)
        for (int64_t b = 0; b < sh.n; ++b) {
          const int64_t row_base = (sd.data()[a] * H.in + sh.data()[b]) * W.in;
          for (int64_t j = 0; j < W.k; ++j) {
            const int64_t offset = j * W.d - W.p;
            int64_t lo, hi;
            column_range(W, offset, lo, hi);
            sum_columns<scalar_t, acc_t>(src + row_base + offset + lo * W.s, W.s, hi - lo, acc.data() + lo);
          }
        }
      const int64_t rows_pad = clipped(D, od, true) * clipped(H, oh, true);
      const int64_t rows_in = clipped(D, od, false) * clipped(H, oh, false);
      scalar_t* dst = o + r * W.out;
      for (int64_t ow = 0; ow < W.out; ++ow) {
        const int64_t factor = divisor             ? *divisor
                               : count_include_pad ? rows_pad * clipped(W, ow, true)
                                                   : rows_in * clipped(W, ow, false);
        dst[ow] = static_cast<scalar_t>(acc[ow] / static_cast<acc_t>(factor));
      }
    }
  });
}

}  // namespace

void max_pool2d_with_indices_out_cpu(const at::Tensor& self, at::IntArrayRef kernel_size,
                                     at::IntArrayRef stride, at::IntArrayRef padding,
                                     at::IntArrayRef dilation, bool /*ceil_mode*/,
                                     at::ScalarType /*compute_dtype*/, const at::Tensor& out,
                                     const at::Tensor& indices) {
  const Geometry g = geometry(self, out, 2, kernel_size, stride, padding, dilation);
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, self.scalar_type(), "max_pool2d_with_indices",
                             [&] { max_pool<scalar_t>(self, g, out, indices); });
}

void max_pool3d_with_indices_out_cpu(const at::Tensor& self, at::IntArrayRef kernel_size,
                                     at::IntArrayRef stride, at::IntArrayRef padding,
                                     at::IntArrayRef dilation, bool /*ceil_mode*/,
                                     at::ScalarType /*compute_dtype*/, const at::Tensor& out,
                                     const at::Tensor& indices) {
  const Geometry g = geometry(self, out, 3, kernel_size, stride, padding, dilation);
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, self.scalar_type(), "max_pool3d_with_indices",
                             [&] { max_pool<scalar_t>(self, g, out, indices); });
}

void avg_pool2d_out_cpu(const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
                        at::IntArrayRef padding, bool /*ceil_mode*/, bool count_include_pad,
                        std::optional<int64_t> divisor_override, at::ScalarType /*compute_dtype*/,
                        const at::Tensor& out) {
  // Not in the rule: rules cannot read an int? argument's value yet.
  TORCH_CHECK(!divisor_override.has_value() || *divisor_override != 0,
              "avg_pool2d: divisor_override must not be zero");
  const Geometry g = geometry(self, out, 2, kernel_size, stride, padding, {});
  AT_DISPATCH_ALL_TYPES_AND2(at::kHalf, at::kBFloat16, self.scalar_type(), "avg_pool2d",
                             [&] { avg_pool<scalar_t>(self, g, count_include_pad, divisor_override, out); });
}

}  // namespace structops::impl
