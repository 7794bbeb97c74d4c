// The CPU loop of structops' reductions (sum, mean, amax, amin: csrc/cpu/reduce.cpp).
//
// A reduction is a small struct over an accumulator type:
//   acc_t identity() const;               the value of an empty reduction
//   acc_t step(acc_t a, in_t x) const;    fold one input element in
//   acc_t merge(acc_t a, acc_t b) const;  combine two partial results
//   out_t finish(acc_t a, int64_t n) const;  the result of n folded elements (mean divides)
// `reduce` views the input as [kept..., reduced...] and picks one of two loops, both free of
// copies for the layouts they cover:
//   - inner: the reduced elements of one output are contiguous (reducing the last dims of a
//     contiguous tensor): 32 independent accumulators per row, which gcc vectorises without
//     reassociating floating-point sums (so results do not depend on the vector width);
//   - outer: the kept elements are contiguous and the reduced dims lie outside them (reducing
//     dim 0 of a contiguous matrix): the accumulators run along the kept dim, one vector each.
// Anything else (transposed or sliced inputs) is first copied to the inner layout, as torch's
// TensorIterator does for reductions it cannot stride through.
// Threads: outputs are split across threads when there are enough of them; a full reduction
// (one output) splits the reduced range into size-determined chunks and merges them in order.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/SmallVector.h>

#include <algorithm>
#include <array>
#include <cstdint>

#include <structops/cpu_pointwise.h>
#include <structops/parallel.h>

namespace structops::cpu {

namespace detail {

constexpr int kLanes = 32;  // independent accumulators: two AVX-512 vectors of float in flight

// Elements per first-level partial of a row: float accumulators stay accurate over a row of any
// length because each lane sums at most kCascade / kLanes elements before partials are merged
// (a cascade, like torch's float sums).
constexpr int64_t kCascade = 4096;
constexpr int64_t kCascadeRows = 64;  // the outer loop's blocks of reduced rows

// Partials merged pairwise, in order, as they come (a binary counter: two partials of a level
// merge into the next), so a float sum's rounding error grows with log(partials), not their count
// (float32 sum of 1e8 ones: exact, was 99,999,920). Merges keep order: the earlier partial first.
template <typename R, typename acc_t>
class Cascade {
 public:
  explicit Cascade(const R& r) : r_(r) {}
  void push(acc_t v) {
    int l = 0;
    for (; (count_ >> l) & 1; ++l) v = r_.merge(level_[l], v);
    level_[l] = v;
    ++count_;
  }
  acc_t total() const {
    acc_t t = r_.identity();
    bool first = true;
    for (int l = 63; l >= 0; --l) {
      if ((count_ >> l) & 1) {
        t = first ? level_[l] : r_.merge(t, level_[l]);
        first = false;
      }
    }
    return t;
  }

 private:
  const R& r_;
  std::array<acc_t, 64> level_;
  uint64_t count_ = 0;
};

// One first-level partial: n <= kCascade elements folded by kLanes lanes, then a fixed tree.
// Always inlined, so each clone of reduce_row compiles it for its own target.
template <typename R, typename in_t>
[[gnu::always_inline]] inline auto reduce_block(const R& r, const in_t* __restrict x, int64_t n) {
  using acc_t = decltype(r.identity());
  std::array<acc_t, kLanes> lanes;
  lanes.fill(r.identity());
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) lanes[l] = r.step(lanes[l], x[i + l]);
  }
  for (; i < n; ++i) lanes[0] = r.step(lanes[0], x[i]);
  for (int w = kLanes / 2; w > 0; w /= 2) {  // a fixed tree: the same order for every row
    for (int l = 0; l < w; ++l) lanes[l] = r.merge(lanes[l], lanes[l + w]);
  }
  return lanes[0];
}

template <typename R, typename in_t>
SO_CPU_CLONES auto reduce_row(const R& r, const in_t* __restrict x, int64_t n) {
  using acc_t = decltype(r.identity());
  if (n < kLanes) {  // short rows: the lanes would only add identities (the same result, 8x the work)
    acc_t total = r.identity();
    for (int64_t i = 0; i < n; ++i) total = r.step(total, x[i]);
    return total;
  }
  if (n <= kCascade) return reduce_block(r, x, n);  // one block: no cascade state to set up per row
  Cascade<R, acc_t> blocks(r);
  for (int64_t lo = 0; lo < n; lo += kCascade) blocks.push(reduce_block(r, x + lo, std::min(kCascade, n - lo)));
  return blocks.total();
}

// acc[k] = step(acc[k], x[j * stride + k]) for j < rows, k < width.
template <typename R, typename in_t, typename acc_t>
SO_CPU_CLONES void reduce_columns(const R& r, const in_t* __restrict x, int64_t rows, int64_t stride, int64_t width,
                                  acc_t* __restrict acc) {
  for (int64_t j = 0; j < rows; ++j) {
    const in_t* __restrict row = x + j * stride;
    for (int64_t k = 0; k < width; ++k) acc[k] = r.step(acc[k], row[k]);
  }
}

// Narrow columns (width w dividing kLanes): x holds len elements, whole rows of w; lane l folds
// column l % w, so the loop is the vectorisable one of reduce_row. acc[c] = step(...) over column c.
template <typename R, typename in_t, typename acc_t>
SO_CPU_CLONES void reduce_narrow_columns(const R& r, const in_t* __restrict x, int64_t len, int64_t w,
                                         acc_t* __restrict acc) {
  for (int64_t lo = 0; lo < len; lo += kCascade) {  // kCascade is a multiple of kLanes, so of w
    const int64_t hi = std::min(len, lo + kCascade);
    std::array<acc_t, kLanes> lanes;
    lanes.fill(r.identity());
    int64_t i = lo;
    for (; i + kLanes <= hi; i += kLanes) {
      for (int l = 0; l < kLanes; ++l) lanes[l] = r.step(lanes[l], x[i + l]);
    }
    for (int64_t j = i; j < hi; ++j) lanes[j - i] = r.step(lanes[j - i], x[j]);  // i is a multiple of w
    for (int64_t c = 0; c < w; ++c) {
      acc_t column = lanes[c];
      for (int64_t l = c + w; l < kLanes; l += w) column = r.merge(column, lanes[l]);
      acc[c] = r.merge(acc[c], column);
    }
  }
}

}  // namespace detail

// `self` as rows: the reduced dims moved last, in order (so a full reduction runs over the
// flattened tensor, as argmax's index needs), made contiguous; `n` elements per row. For the
// reductions that need whole rows (argmax, logsumexp, var on CUDA) rather than cpu::reduce's folds.
struct ReducedRows {
  at::Tensor data;
  int64_t n;
};
inline ReducedRows reduced_rows(const at::Tensor& self, at::IntArrayRef reduced_dims) {
  c10::SmallVector<int64_t, 8> order;
  int64_t n = 1;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (std::find(reduced_dims.begin(), reduced_dims.end(), d) == reduced_dims.end()) order.push_back(d);
  }
  for (int64_t d : reduced_dims) order.push_back(d), n *= self.size(d);
  return {self.permute(order).contiguous(), n};
}

// How `reduce` walks the input: see the header comment. `automatic` takes columns when the input
// is already in that layout with at least 16 outputs, rows otherwise; the two others copy the
// input to their layout when it is not (sum's kernel variants, timed by structops::autotune).
enum class ReduceLayout { automatic, rows, columns };

// out[kept] = finish(reduce over reduced_dims of self), out contiguous with numel = prod(kept).
// reduced_dims are the meta function's dims(self, dim): None or [] already expanded to every dim.
// `self` holds in_t elements; `out` holds out_t.
template <typename in_t, typename out_t, typename R>
void reduce(const R& r, const at::Tensor& self, at::IntArrayRef reduced_dims, const at::Tensor& out,
            ReduceLayout layout = ReduceLayout::automatic) {
  using acc_t = decltype(r.identity());
  const int64_t ndim = self.dim();
  c10::SmallVector<bool, 8> is_reduced(ndim, false);
  for (int64_t d : reduced_dims) is_reduced[d] = true;
  c10::SmallVector<int64_t, 8> kept, reduced;
  int64_t n_out = 1, n_red = 1;
  for (int64_t d = 0; d < ndim; ++d) {
    (is_reduced[d] ? reduced : kept).push_back(d);
    (is_reduced[d] ? n_red : n_out) *= self.size(d);
  }
  if (n_out == 0) return;
  out_t* const o = out.data_ptr<out_t>();
  if (n_red == 0) {
    for (int64_t k = 0; k < n_out; ++k) o[k] = r.finish(r.identity(), 0);
    return;
  }

  // Columns: reduced dims outside, kept dims contiguous inside (reduced-then-kept order is a
  // contiguous tensor); by default only when a row of outputs fills vectors and no copy is needed.
  c10::SmallVector<int64_t, 8> outer_order(reduced.begin(), reduced.end());
  outer_order.append(kept.begin(), kept.end());
  const bool columns = layout == ReduceLayout::columns ||
                       (layout == ReduceLayout::automatic && n_out >= 16 && !reduced.empty() && !kept.empty() &&
                        self.permute(outer_order).is_contiguous());
  if (columns) {
    const at::Tensor xc = self.permute(outer_order).contiguous();  // a view when already in layout
    const in_t* x = xc.const_data_ptr<in_t>();
    if (n_out < 16 && detail::kLanes % n_out == 0) {
      // Too narrow for a vector per row: fold the flat input with lanes of period n_out, in
      // size-determined chunks of rows (threads), their partials merged in order.
      const int64_t chunks = std::clamp<int64_t>(n_red * n_out / kGrainSize, 1, 64);
      const int64_t per = (n_red + chunks - 1) / chunks;
      c10::SmallVector<acc_t, 64> partial(chunks * n_out, r.identity());
      structops::parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
        for (int64_t c = begin; c < end; ++c) {
          const int64_t lo = c * per, hi = std::min(n_red, lo + per);
          if (lo < hi) detail::reduce_narrow_columns(r, x + lo * n_out, (hi - lo) * n_out, n_out, &partial[c * n_out]);
        }
      });
      for (int64_t k = 0; k < n_out; ++k) {
        detail::Cascade<R, acc_t> merged(r);
        for (int64_t c = 0; c < chunks; ++c) merged.push(partial[c * n_out + k]);
        o[k] = r.finish(merged.total(), n_red);
      }
      return;
    }
    // Tiles of kColumnTile outputs, whose accumulators stay in L1 while every reduced row passes;
    // a cascade along the reduced rows too: blocks of detail::kCascadeRows rows, then their partials.
    constexpr int64_t kColumnTile = std::max<int64_t>(64, 16384 / sizeof(acc_t));  // 16 KiB of accumulators
    structops::parallel_for(0, n_out, std::max<int64_t>(16, kGrainSize / n_red), [&](int64_t begin, int64_t end) {
      std::array<acc_t, kColumnTile> acc, block;
      for (int64_t t0 = begin; t0 < end; t0 += kColumnTile) {
        const int64_t w = std::min(kColumnTile, end - t0);
        std::fill(acc.begin(), acc.begin() + w, r.identity());
        for (int64_t j = 0; j < n_red; j += detail::kCascadeRows) {
          const int64_t rows = std::min(detail::kCascadeRows, n_red - j);
          if (j == 0) {  // the first block folds straight into acc
            detail::reduce_columns(r, x + t0, rows, n_out, w, acc.data());
            continue;
          }
          std::fill(block.begin(), block.begin() + w, r.identity());
          detail::reduce_columns(r, x + j * n_out + t0, rows, n_out, w, block.data());
          for (int64_t k = 0; k < w; ++k) acc[k] = r.merge(acc[k], block[k]);
        }
        for (int64_t k = 0; k < w; ++k) o[t0 + k] = r.finish(acc[k], n_red);
      }
    });
    return;
  }

  c10::SmallVector<int64_t, 8> inner_order(kept.begin(), kept.end());
  inner_order.append(reduced.begin(), reduced.end());
  const at::Tensor x = self.permute(inner_order).contiguous();  // a view when already inner
  const in_t* in = x.const_data_ptr<in_t>();
  if (n_out == 1) {  // full reduction: split the reduced range, merge per-chunk partials in order
    // The chunking depends on the size alone, so the result does not depend on the thread count.
    const int64_t chunks = std::clamp<int64_t>(n_red / kGrainSize, 1, 64);
    c10::SmallVector<acc_t, 64> partial(chunks, r.identity());
    const int64_t per = (n_red + chunks - 1) / chunks;
    structops::parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        const int64_t lo = c * per, hi = std::min(n_red, lo + per);
        if (lo < hi) partial[c] = detail::reduce_row(r, in + lo, hi - lo);
      }
    });
    detail::Cascade<R, acc_t> merged(r);
    for (int64_t c = 0; c < chunks; ++c) merged.push(partial[c]);
    o[0] = r.finish(merged.total(), n_red);
    return;
  }
  structops::parallel_for(0, n_out, std::max<int64_t>(1, kGrainSize / n_red), [&](int64_t begin, int64_t end) {
    for (int64_t k = begin; k < end; ++k) o[k] = r.finish(detail::reduce_row(r, in + k * n_red, n_red), n_red);
  });
}

}  // namespace structops::cpu
