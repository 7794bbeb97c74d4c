// The CPU loop of reductions over one or more dims, for a project's hand-written kernels (sum,
// mean, amax, var, std, ...).
//
// A reduction is a small struct over an accumulator type:
//   acc_t identity() const;               the value of an empty reduction
//   acc_t step(acc_t a, in_t x) const;    fold one input element in
//   acc_t merge(acc_t a, acc_t b) const;  combine two partial results
//   out_t finish(acc_t a, int64_t n) const;  the result of n folded elements (mean divides)
// `reduce` views the input as [kept..., reduced...] and picks one of two loops:
//   - rows: each output folds its reduced elements; when they are contiguous (reducing the last
//     dims of a contiguous tensor) 32 independent accumulators per row, which gcc vectorises
//     without reassociating floating-point sums (so results do not depend on the vector width);
//   - columns: the outputs' innermost dim is inner in memory to every reduced dim (reducing dim 0
//     of a matrix, or the middle dim of [outer, reduced, inner]): the accumulators run along it,
//     one vector each, while reduced rows pass (per row of it where the outputs have more dims);
//     fewer than 32 columns ([outer, reduced, 8]) are folded as a flat block instead, lane l of
//     lcm(32, columns) lanes taking column l % columns (reduce_narrow_columns).
// Neither copies the input. Reduced elements that are not contiguous (a transposed, sliced or
// expanded input) are walked in memory order and gathered through their strides, stride 0
// included, kCascade at a time into a thread's buffer, then folded exactly as a contiguous row
// would be: summing 2^32 elements of an expanded tensor takes no memory (issue 17; a contiguous
// copy took 16 GiB).
// Threads: outputs are split across threads when there are enough of them; a full reduction
// (one output) splits the reduced range into size-determined chunks and merges them in order.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/SmallVector.h>

#include <algorithm>
#include <array>
#include <bit>
#include <concepts>
#include <cstdint>
#include <memory>
#include <numeric>
#include <type_traits>

#include <structgen/cpu/float16.h>
#include <structgen/cpu/pointwise.h>
#include <structgen/parallel.h>

namespace structgen::cpu {

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

// Whether R's float16 inputs are widened to float by the vector instruction a block at a time
// and folded by R's `fold` (a step over a widened value): the conversion inside `step` costs a
// dozen instructions per vector (float16 sums ran at 0.38x torch with it).
template <typename R, typename in_t>
concept FoldsWidenedFloat16 =
    bool(SO_F16_CONVERT_BY_INSTRUCTION) && std::is_same_v<in_t, c10::Half> && requires(const R& r, float v) {
      { r.identity() } -> std::same_as<float>;
      r.fold(r.identity(), v);
    };

// One first-level partial: n <= kCascade elements folded by kLanes lanes, then a fixed tree.
// Always inlined, so each clone of reduce_row compiles it for its own target.
template <typename R, typename in_t>
[[gnu::always_inline]] inline auto reduce_block(const R& r, const in_t* __restrict x, int64_t n) {
  using acc_t = decltype(r.identity());
  std::array<acc_t, kLanes> lanes;
  lanes.fill(r.identity());
  int64_t i = 0;
  if constexpr (FoldsWidenedFloat16<R, in_t>) {
    // the same order as below, on blocks widened first: 256 elements, then 32 (a block of 32 at
    // a time alone, gcc kept the lanes in memory)
    alignas(64) float wide[256];
    auto fold_block = [&]<int64_t kSize>(std::integral_constant<int64_t, kSize>) {
      widen(x + i, wide, kSize);
      for (int64_t j = 0; j < kSize; j += kLanes) {
        for (int l = 0; l < kLanes; ++l) lanes[l] = r.fold(lanes[l], wide[j + l]);
      }
      i += kSize;
    };
    while (i + 256 <= n) fold_block(std::integral_constant<int64_t, 256>{});
    while (i + kLanes <= n) fold_block(std::integral_constant<int64_t, kLanes>{});
  } else {
    for (; i + kLanes <= n; i += kLanes) {
      for (int l = 0; l < kLanes; ++l) lanes[l] = r.step(lanes[l], x[i + l]);
    }
  }
  for (; i < n; ++i) lanes[0] = r.step(lanes[0], x[i]);
  // A fixed tree, the same order for every row: each level merges the lanes' two halves, as a
  // loop of a fixed size into a separate array, which gcc vectorises. As a loop over the level's
  // width, the lanes lived on the stack and the main loop stored and reloaded them every step
  // (float32 sum over rows of 256 ran at 0.80x torch); unrolled whole, max's merges with their
  // NaN selects went scalar (rows of 256, standalone: sum 4.5 -> 2.8 us, max 6.1 -> 4.4 us).
  // Always inlined: called, the lanes went back to the stack.
  // (gcc 12 warns -Warray-bounds here for var/std's Moments lanes once reduce_one_block holds
  // this tree: a false positive, every index stays below W and W + W <= kLanes.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
  const auto merge_halves = [&]<int W>(std::integral_constant<int, W>) __attribute__((always_inline)) {
    std::array<acc_t, W> merged;
    for (int l = 0; l < W; ++l) merged[l] = r.merge(lanes[l], lanes[l + W]);
    std::copy(merged.begin(), merged.end(), lanes.begin());
  };
#pragma GCC diagnostic pop
  [&]<int... K>(std::integer_sequence<int, K...>) __attribute__((always_inline)) {
    (merge_halves(std::integral_constant<int, (kLanes >> (K + 1))>{}), ...);
  }(std::make_integer_sequence<int, std::bit_width(unsigned{kLanes}) - 1>{});
  return lanes[0];
}

// One block of a row longer than kCascade, as a call of its own: inlined into reduce_row's loop
// over the blocks, the lanes' loop compiled worse than the single-block path's (float32 amax
// over rows of 65536 ran at 0.74x torch, 0.93x called; sum 0.87 -> 0.92 over rows of 8192).
template <typename R, typename in_t>
[[gnu::noinline]] SO_CPU_CLONES auto reduce_one_block(const R& r, const in_t* __restrict x, int64_t n) {
  return reduce_block(r, x, n);
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
  for (int64_t lo = 0; lo < n; lo += kCascade)
    blocks.push(reduce_one_block(r, x + lo, std::min(kCascade, n - lo)));
  return blocks.total();
}

// acc[k] = step(acc[k], x[row[j] + k * stride]) for j < rows, k < width. With contiguous
// columns, four rows at a time are folded in registers and merged into acc once: a row at a time,
// every row waited on acc's store and reload (narrow tiles, [64, 256, 17] over dim 1, ran at 0.25x
// torch).
template <typename R, typename in_t, typename acc_t>
SO_CPU_CLONES void reduce_columns(const R& r, const in_t* __restrict x, const int64_t* row, int64_t rows,
                                  int64_t width, int64_t stride, acc_t* __restrict acc) {
  int64_t j = 0;
  if constexpr (FoldsWidenedFloat16<R, in_t>) {
    if (stride == 1) {  // as below, blocks of 64 columns widened first
      alignas(64) float wide[4][64];
      for (; j + 4 <= rows; j += 4) {
        const in_t* __restrict xs[4] = {x + row[j], x + row[j + 1], x + row[j + 2], x + row[j + 3]};
        int64_t k = 0;
        for (; k + 64 <= width; k += 64) {
          for (int q = 0; q < 4; ++q) widen(xs[q] + k, wide[q], 64);
          for (int64_t c = 0; c < 64; ++c) {
            const acc_t v =
                r.fold(r.fold(r.fold(r.fold(r.identity(), wide[0][c]), wide[1][c]), wide[2][c]), wide[3][c]);
            acc[k + c] = r.merge(acc[k + c], v);
          }
        }
        for (; k < width; ++k) {
          acc[k] = r.merge(
              acc[k], r.step(r.step(r.step(r.step(r.identity(), xs[0][k]), xs[1][k]), xs[2][k]), xs[3][k]));
        }
      }
    }
  }
  if (stride == 1) {
    for (; j + 4 <= rows; j += 4) {
      const in_t* __restrict x0 = x + row[j];
      const in_t* __restrict x1 = x + row[j + 1];
      const in_t* __restrict x2 = x + row[j + 2];
      const in_t* __restrict x3 = x + row[j + 3];
      for (int64_t k = 0; k < width; ++k) {
        acc[k] = r.merge(acc[k], r.step(r.step(r.step(r.step(r.identity(), x0[k]), x1[k]), x2[k]), x3[k]));
      }
    }
  }
  for (; j < rows; ++j) {
    const in_t* __restrict xs = x + row[j];
    if (stride == 1) {  // the vectorised loop: contiguous outputs
      for (int64_t k = 0; k < width; ++k) acc[k] = r.step(acc[k], xs[k]);
    } else {
      for (int64_t k = 0; k < width; ++k) acc[k] = r.step(acc[k], xs[k * stride]);
    }
  }
}

// Narrow columns (width w < kLanes): x holds len elements, whole rows of w; lane l of a period
// of lcm(kLanes, w) lanes folds column l % w, so the loop is the vectorisable one of reduce_row
// (kLanes lanes in registers where w divides kLanes, else a period of up to 31 vectors in L1).
// acc[c] = step(...) over column c; callers hold w < kLanes (acc has kLanes entries).
template <typename R, typename in_t, typename acc_t>
SO_CPU_CLONES void reduce_narrow_columns(const R& r, const in_t* __restrict x, int64_t len, int64_t w,
                                         acc_t* __restrict acc) {
  constexpr int64_t kMaxPeriod = kLanes * (kLanes - 1);
  const int64_t period = std::lcm<int64_t>(kLanes, w);
  const int64_t chunk = kCascade / period * period;  // whole periods (kCascade's a multiple of kLanes)
  std::array<acc_t, kMaxPeriod> lanes;
  for (int64_t lo = 0; lo < len; lo += chunk) {
    const int64_t hi = std::min(len, lo + chunk);
    std::fill(lanes.begin(), lanes.begin() + period, r.identity());
    int64_t i = lo;
    if (period == kLanes) {
      for (; i + kLanes <= hi; i += kLanes) {
        for (int l = 0; l < kLanes; ++l) lanes[l] = r.step(lanes[l], x[i + l]);
      }
    } else {
      for (; i + period <= hi; i += period) {
        for (int64_t l = 0; l < period; ++l) lanes[l] = r.step(lanes[l], x[i + l]);
      }
    }
    for (int64_t j = i; j < hi; ++j) lanes[j - i] = r.step(lanes[j - i], x[j]);  // i is a multiple of w
    // The period's period / w rows of w lanes (a power of two: kLanes is) merged as a fixed tree,
    // each level one vector loop over the upper half: merged a column at a time (or row by row)
    // the merge was a chain of 32 dependent steps through memory and took as long as the fold
    // (17 columns: a period of 544 lanes).
    for (int64_t half = period / 2; half >= w; half /= 2) {
      for (int64_t l = 0; l < half; ++l) lanes[l] = r.merge(lanes[l], lanes[l + half]);
    }
    for (int64_t c = 0; c < w; ++c) acc[c] = r.merge(acc[c], lanes[c]);
  }
}

// A view's elements in the row-major order of `dims`, read through their strides (0 included):
// how `reduce` reads a transposed, sliced or expanded input without copying it. Dims of size 1
// are dropped and dims that step through memory as one are merged, so a contiguous run is a
// single dim of stride 1 (`is_dense`). In memory order the dims are first sorted by decreasing
// stride (stride 0 outermost, so an expanded dim re-reads what is already in cache): the order
// for elements folded into one result, where any order is the reduction's.
class Walk {
 public:
  Walk(const at::Tensor& t, c10::ArrayRef<int64_t> dims, bool memory_order = false) {
    c10::SmallVector<int64_t, 8> order(dims.begin(), dims.end());
    if (memory_order) {
      auto outer = [&](int64_t a, int64_t b) {
        const uint64_t sa = t.stride(a) - 1, sb = t.stride(b) - 1;  // stride 0 wraps to the largest
        return sa > sb;
      };
      std::stable_sort(order.begin(), order.end(), outer);
    }
    for (int64_t d : order) {
      const int64_t size = t.size(d), stride = t.stride(d);
      if (size == 1) continue;
      if (!sizes_.empty() && strides_.back() == size * stride) {
        sizes_.back() *= size;
        strides_.back() = stride;
      } else {
        sizes_.push_back(size);
        strides_.push_back(stride);
      }
    }
    if (sizes_.empty()) sizes_.push_back(1), strides_.push_back(1);
  }
  // Whether the elements are consecutive `stride` apart.
  bool is_dense(int64_t stride) const {
    return sizes_.size() == 1 && (strides_[0] == stride || sizes_[0] == 1);
  }
  // The stride of a walk along one dim, or -1 when it has several.
  int64_t single_stride() const { return sizes_.size() == 1 ? strides_[0] : -1; }
  // The last (innermost) dim of the walk, merged: its size and stride.
  int64_t last_size() const { return sizes_.back(); }
  int64_t last_stride() const { return strides_.back(); }
  // The smallest nonzero stride (0 when every dim is expanded): how far apart consecutive loads are.
  int64_t innermost_stride() const {
    int64_t least = 0;
    for (size_t d = 0; d < sizes_.size(); ++d) {
      if (strides_[d] != 0 && (least == 0 || strides_[d] < least)) least = strides_[d];
    }
    return least;
  }
  // Where element `flat` lies, in elements from the first.
  int64_t offset(int64_t flat) const {
    if (sizes_.size() == 1) return flat * strides_[0];
    int64_t at = 0;
    for (size_t d = sizes_.size(); d-- > 0;) {
      at += flat % sizes_[d] * strides_[d];
      flat /= sizes_[d];
    }
    return at;
  }
  // dst[i] = element flat + i of the view starting at x, for i < count: a run along the
  // innermost dim at a time.
  template <typename T>
  void gather(const T* x, int64_t flat, int64_t count, T* __restrict dst) const {
    const size_t inner = sizes_.size() - 1;
    c10::SmallVector<int64_t, 8> index(sizes_.size());
    int64_t at = 0;
    for (size_t d = sizes_.size(); d-- > 0;) {
      index[d] = flat % sizes_[d];
      at += index[d] * strides_[d];
      flat /= sizes_[d];
    }
    const int64_t step = strides_[inner];
    while (count > 0) {
      const int64_t run = std::min(count, sizes_[inner] - index[inner]);
      const T* src = x + at;
      if (step == 1)
        std::copy_n(src, run, dst);
      else if (step == 0)
        std::fill_n(dst, run, *src);
      else
        gather_strided(dst, src, step, run);
      dst += run, count -= run, index[inner] += run, at += run * step;
      for (size_t d = inner; d > 0 && index[d] == sizes_[d]; --d) {  // carry into the outer dims
        at += strides_[d - 1] - sizes_[d] * strides_[d];
        index[d] = 0;
        ++index[d - 1];
      }
    }
  }

 private:
  c10::SmallVector<int64_t, 8> sizes_, strides_;
};

// A thread's gather buffer of kCascade elements, or none when the input is read in place
// (std::vector<bool> would have no data()).
template <typename T>
std::unique_ptr<T[]> gather_buffer(bool needed) {
  return needed ? std::make_unique<T[]>(kCascade) : nullptr;
}

// reduce_row over elements lo..lo+n of `walk` from x: each kCascade block gathered into buf, then
// folded exactly as reduce_row folds the same block of a contiguous input.
template <typename R, typename in_t>
SO_CPU_CLONES auto reduce_gathered(const R& r, const in_t* x, const Walk& walk, int64_t lo, int64_t n,
                                   in_t* __restrict buf) {
  using acc_t = decltype(r.identity());
  if (n <= kCascade) {
    walk.gather(x, lo, n, buf);
    if (n >= kLanes) return reduce_block(r, buf, n);
    acc_t total = r.identity();
    for (int64_t i = 0; i < n; ++i) total = r.step(total, buf[i]);
    return total;
  }
  Cascade<R, acc_t> blocks(r);
  for (int64_t b = 0; b < n; b += kCascade) {
    const int64_t m = std::min(kCascade, n - b);
    walk.gather(x, lo + b, m, buf);
    blocks.push(reduce_one_block(r, buf, m));
  }
  return blocks.total();
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

// How `reduce` walks the input: see the header comment. `automatic` takes columns when the outputs'
// innermost dim has a stride smaller than every reduced dim's (the outputs are the inner loop in
// memory) and at least 16 elements, rows otherwise. The two others are sum's kernel variants,
// timed by structgen::autotune: `rows` always folds rows; `columns` takes the columns loop when
// the input is rows of contiguous outputs one after another (its layout, where the narrow loop
// needs no vector per output) and is `automatic` elsewhere, so timing it on an input it does not
// fit costs no more than the automatic choice. Neither copies the input.
enum class ReduceLayout { automatic, rows, columns };

// `reduce` (below) reading self's elements as in_t and writing out's as out_t whatever their
// dtypes, of the same sizes: for reducers that look at the bits only (all/any test for nonzero),
// so that one instantiation serves every dtype of a size.
template <typename in_t, typename out_t, typename R>
void reduce_storage(const R& r, const at::Tensor& self, at::IntArrayRef reduced_dims, const at::Tensor& out,
                    ReduceLayout layout = ReduceLayout::automatic) {
  TORCH_INTERNAL_ASSERT(self.element_size() == sizeof(in_t) && out.element_size() == sizeof(out_t));
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
  out_t* const o = static_cast<out_t*>(out.data_ptr());
  if (n_red == 0) {
    for (int64_t k = 0; k < n_out; ++k) o[k] = r.finish(r.identity(), 0);
    return;
  }
  const in_t* const x = static_cast<const in_t*>(self.const_data_ptr());
  const detail::Walk outputs(self, kept);  // where each output's first element lies
  const detail::Walk elements(self, reduced, /*memory_order=*/true);  // one output's elements

  const int64_t out_stride = outputs.single_stride(), inner = elements.innermost_stride();
  const bool columns_layout =
      out_stride == 1 && elements.is_dense(n_out);  // [reduced..., kept...] contiguous
  // Columns run along the outputs' innermost dim (all of them when they lie along one dim; else
  // per row of it: a middle dim of [outer, reduced, inner] reduced, inner the columns).
  const int64_t n_cols = outputs.last_size(), col_stride = outputs.last_stride();
  const bool outputs_inner = n_cols >= 16 && col_stride > 0 && (inner == 0 || col_stride < inner);
  const bool columns = !kept.empty() && !reduced.empty() &&
                       (layout == ReduceLayout::columns ? columns_layout || outputs_inner
                                                        : layout == ReduceLayout::automatic && outputs_inner);
  // A middle dim of [outer, reduced, cols] with few contiguous columns: each outer index's reduced
  // rows are one contiguous block, folded as narrow columns; threads take outer indices. Below 16
  // columns the alternative is rows (gathered: [64, 256, 8] over dim 1 ran at 0.22x torch, now
  // 1.08); from 16 the tiles ([64, 256, w] at one thread, tiles -> narrow: 17 0.63 -> 0.88, 31
  // 1.15 -> 1.46; narrow had lost at 17 while its merge was a column at a time).
  const int64_t n_outer = n_cols > 0 ? n_out / n_cols : 0;
  const bool narrow = n_cols > 1 && n_cols < detail::kLanes;
  if (layout != ReduceLayout::rows && n_outer > 1 && narrow && col_stride == 1 && elements.is_dense(n_cols)) {
    structgen::parallel_for(0, n_outer, std::max<int64_t>(1, kGrainSize / (n_red * n_cols)),
                            [&](int64_t b, int64_t e) {
                              std::array<acc_t, detail::kLanes> acc;
                              for (int64_t q = b; q < e; ++q) {
                                std::fill(acc.begin(), acc.begin() + n_cols, r.identity());
                                detail::reduce_narrow_columns(r, x + outputs.offset(q * n_cols),
                                                              n_red * n_cols, n_cols, acc.data());
                                for (int64_t c = 0; c < n_cols; ++c)
                                  o[q * n_cols + c] = r.finish(acc[c], n_red);
                              }
                            });
    return;
  }
  if (columns) {
    if (n_out < detail::kLanes && columns_layout) {
      // Too narrow for a vector per row: fold the flat input with lanes of period n_out, in
      // size-determined chunks of rows (threads), their partials merged in order.
      const int64_t chunks = std::clamp<int64_t>(n_red * n_out / kGrainSize, 1, 64);
      const int64_t per = (n_red + chunks - 1) / chunks;
      c10::SmallVector<acc_t, 64> partial(chunks * n_out, r.identity());
      structgen::parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
        for (int64_t c = begin; c < end; ++c) {
          const int64_t lo = c * per, hi = std::min(n_red, lo + per);
          if (lo < hi)
            detail::reduce_narrow_columns(r, x + lo * n_out, (hi - lo) * n_out, n_out, &partial[c * n_out]);
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
    structgen::parallel_for(
        0, n_out, std::max<int64_t>(16, kGrainSize / n_red), [&](int64_t begin, int64_t end) {
          std::array<acc_t, kColumnTile> acc, block;
          std::array<int64_t, detail::kCascadeRows> row;  // where each reduced row of the block starts
          for (int64_t t0 = begin; t0 < end;) {
            const int64_t c0 = t0 % n_cols;  // a tile stays within one row of columns
            const int64_t w = std::min({kColumnTile, end - t0, n_cols - c0});
            const int64_t first = outputs.offset(t0 - c0) + c0 * col_stride;
            std::fill(acc.begin(), acc.begin() + w, r.identity());
            for (int64_t j = 0; j < n_red; j += detail::kCascadeRows) {
              const int64_t rows = std::min(detail::kCascadeRows, n_red - j);
              for (int64_t i = 0; i < rows; ++i) row[i] = elements.offset(j + i) + first;
              if (j == 0) {  // the first block folds straight into acc
                detail::reduce_columns(r, x, row.data(), rows, w, col_stride, acc.data());
                continue;
              }
              std::fill(block.begin(), block.begin() + w, r.identity());
              detail::reduce_columns(r, x, row.data(), rows, w, col_stride, block.data());
              for (int64_t k = 0; k < w; ++k) acc[k] = r.merge(acc[k], block[k]);
            }
            for (int64_t k = 0; k < w; ++k) o[t0 + k] = r.finish(acc[k], n_red);
            t0 += w;
          }
        });
    return;
  }

  // Rows: each output folds its n_red elements, read in place when contiguous, else gathered
  // kCascade at a time (the same blocks in the same order, so the same result).
  const bool dense = elements.is_dense(1);
  if (n_out == 1) {  // full reduction: split the reduced range, merge per-chunk partials in order
    // The chunking depends on the size alone, so the result does not depend on the thread count.
    const int64_t chunks = std::clamp<int64_t>(n_red / kGrainSize, 1, 64);
    c10::SmallVector<acc_t, 64> partial(chunks, r.identity());
    const int64_t per = (n_red + chunks - 1) / chunks;
    structgen::parallel_for(0, chunks, 1, [&](int64_t begin, int64_t end) {
      const auto buf = detail::gather_buffer<in_t>(!dense);
      for (int64_t c = begin; c < end; ++c) {
        const int64_t lo = c * per, hi = std::min(n_red, lo + per);
        if (lo >= hi) continue;
        partial[c] = dense ? detail::reduce_row(r, x + lo, hi - lo)
                           : detail::reduce_gathered(r, x, elements, lo, hi - lo, buf.get());
      }
    });
    detail::Cascade<R, acc_t> merged(r);
    for (int64_t c = 0; c < chunks; ++c) merged.push(partial[c]);
    o[0] = r.finish(merged.total(), n_red);
    return;
  }
  structgen::parallel_for(
      0, n_out, std::max<int64_t>(1, kGrainSize / n_red), [&](int64_t begin, int64_t end) {
        const auto buf = detail::gather_buffer<in_t>(!dense);
        for (int64_t k = begin; k < end; ++k) {
          const in_t* const first = x + outputs.offset(k);
          o[k] = r.finish(dense ? detail::reduce_row(r, first, n_red)
                                : detail::reduce_gathered(r, first, elements, 0, n_red, buf.get()),
                          n_red);
        }
      });
}

// out[kept] = finish(reduce over reduced_dims of self), out contiguous with numel = prod(kept).
// reduced_dims are the meta function's dims(self, dim): None or [] already expanded to every dim.
// `self` holds in_t elements; `out` holds out_t (checked, as data_ptr<T> checks).
template <typename in_t, typename out_t, typename R>
void reduce(const R& r, const at::Tensor& self, at::IntArrayRef reduced_dims, const at::Tensor& out,
            ReduceLayout layout = ReduceLayout::automatic) {
  (void)self.const_data_ptr<in_t>();
  (void)out.data_ptr<out_t>();
  reduce_storage<in_t, out_t>(r, self, reduced_dims, out, layout);
}

}  // namespace structgen::cpu
