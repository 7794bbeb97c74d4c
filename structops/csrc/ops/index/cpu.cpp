// CPU impls of the indexing ops: index_select, gather, take, masked_select, embedding and
// embedding_bag. Shapes, dtypes and argument errors come from the meta functions; what is left is
// moving data and the one check only data can reveal: index values.
//
// The kernels move elements, never compute with them, so they dispatch on the element size
// (1, 2, 4, 8, 16 bytes) rather than the dtype: one instantiation serves float, int32 and
// complex32 alike. Contiguous rows are copied with memcpy; everything else walks the tensors'
// strides in runs along the last dim (StridedRuns), after merging dims that are contiguous in
// every operand, so a contiguous tensor is one long run whatever its rank.
#include <structops/ops/embedding.h>
#include <structops/ops/embedding_bag.h>
#include <structops/ops/gather.h>
#include <structops/ops/index_select.h>
#include <structops/ops/masked_select.h>
#include <structops/ops/take.h>

#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/Parallel.h>
#include <c10/util/SmallVector.h>
#include <structgen/cpu/pointwise.h>
#include <structgen/parallel.h>
#include <structgen/rules.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <sstream>
#include <type_traits>
#include <vector>
#include <ops/runtime_names.h>

namespace structops::impl {

namespace {

struct alignas(8) Bytes16 {
  uint64_t lo, hi;
};

// f(T{}) with T an integer type of the tensor's element size (a 16-byte struct for complex128).
template <typename F>
void by_element_size(const at::Tensor& t, F&& f) {
  switch (t.element_size()) {
    case 1:
      return f(uint8_t{});
    case 2:
      return f(uint16_t{});
    case 4:
      return f(uint32_t{});
    case 8:
      return f(uint64_t{});
    case 16:
      return f(Bytes16{});
    default:
      TORCH_INTERNAL_ASSERT(false, "unexpected element size ", t.element_size());
  }
}

template <typename F>
void by_index_type(const at::Tensor& index, F&& f) {
  if (index.scalar_type() == at::kInt) return f(int32_t{});
  TORCH_INTERNAL_ASSERT(index.scalar_type() == at::kLong, "index dtype ", index.scalar_type());
  return f(int64_t{});
}

// Copies of each operand's sizes/strides with dims of size 1 dropped and neighbours merged where
// every operand is contiguous across them. K operands share `sizes`.
template <size_t K>
struct StridedRuns {
  c10::SmallVector<int64_t, 8> sizes;
  std::array<c10::SmallVector<int64_t, 8>, K> strides;

  StridedRuns(at::IntArrayRef shape, const std::array<at::IntArrayRef, K>& operand_strides) {
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == 1) continue;
      const bool merge = !sizes.empty() && [&] {
        for (size_t k = 0; k < K; ++k)
          if (strides[k].back() != operand_strides[k][d] * shape[d]) return false;
        return true;
      }();
      if (merge) {
        sizes.back() *= shape[d];
        for (size_t k = 0; k < K; ++k) strides[k].back() = operand_strides[k][d];
      } else {
        sizes.push_back(shape[d]);
        for (size_t k = 0; k < K; ++k) strides[k].push_back(operand_strides[k][d]);
      }
    }
    if (sizes.empty()) {  // 0-dim or all ones: one element
      sizes.push_back(1);
      for (size_t k = 0; k < K; ++k) strides[k].push_back(0);
    }
  }

  int64_t inner_stride(size_t k) const { return strides[k].back(); }

  // f(offsets, linear, len): the elements linear .. linear+len-1 (row-major over `sizes`) lie
  // along the last dim, starting at element offsets[k] of operand k. Needs a non-empty shape.
  template <typename F>
  void for_each_run(int64_t begin, int64_t end, F&& f) const {
    const int64_t nd = sizes.size();
    c10::SmallVector<int64_t, 8> idx(nd);
    std::array<int64_t, K> off{};
    int64_t rem = begin;
    for (int64_t d = nd - 1; d >= 0; --d) {
      idx[d] = rem % sizes[d];
      rem /= sizes[d];
      for (size_t k = 0; k < K; ++k) off[k] += idx[d] * strides[k][d];
    }
    const int64_t last = sizes[nd - 1];
    for (int64_t pos = begin; pos < end;) {
      const int64_t len = std::min(last - idx[nd - 1], end - pos);
      f(off, pos, len);
      pos += len;
      idx[nd - 1] += len;
      for (size_t k = 0; k < K; ++k) off[k] += len * strides[k][nd - 1];
      if (idx[nd - 1] < last) continue;
      idx[nd - 1] = 0;
      for (size_t k = 0; k < K; ++k) off[k] -= last * strides[k][nd - 1];
      for (int64_t d = nd - 2; d >= 0; --d) {
        ++idx[d];
        for (size_t k = 0; k < K; ++k) off[k] += strides[k][d];
        if (idx[d] < sizes[d]) break;
        idx[d] = 0;
        for (size_t k = 0; k < K; ++k) off[k] -= sizes[d] * strides[k][d];
      }
    }
  }
};

// Grain for loops whose iterations copy `bytes` each: about 128 KiB per chunk (torch's grain of
// 32,768 float elements). A second thread costs about as much as copying 32 KiB: at that grain an
// index_select of 64 KiB took 3.0 us on two threads against 2.6 on one (torch: 2.25).
int64_t grain_for(int64_t bytes) {
  return std::max<int64_t>(1, 4 * cpu::kGrainSize / std::max<int64_t>(bytes, 1));
}

// Index checks. Kernels skip a bad index and raise a flag instead of throwing inside the parallel
// loop; afterwards the first bad index in index order is reported, so the message is deterministic.
template <typename I>
bool in_range(I v, int64_t size) {
  return static_cast<uint64_t>(static_cast<int64_t>(v)) < static_cast<uint64_t>(size);
}

[[noreturn]] void raise_bad_index(std::string_view op, std::string_view src, std::string_view index_name,
                                  const at::Tensor& index, int64_t size, bool index_error, int64_t dim,
                                  bool negative_ok, const char* what) {
  const at::Tensor flat = index.reshape({-1}).to(at::kLong).contiguous();
  const int64_t* p = flat.const_data_ptr<int64_t>();
  const int64_t lo = negative_ok ? -size : 0;
  for (int64_t i = 0; i < flat.numel(); ++i) {
    if (p[i] >= lo && p[i] < size) continue;
    std::ostringstream msg;
    msg << op << ": index " << p[i] << " is out of range for ";
    if (dim >= 0)
      msg << "dim " << dim << " of '" << src << "' with size " << size;
    else
      msg << "'" << src << "' with " << size << " " << what;
    msg << " (at position " << i << " of '" << index_name << "'; expected " << lo << " <= index < " << size
        << ")";
    if (index_error) TORCH_CHECK_INDEX(false, msg.str());
    TORCH_CHECK(false, msg.str());
  }
  TORCH_INTERNAL_ASSERT(false, op, ": a bad index was flagged but none found");
}

// out[...] = self[..., index[...], ...] over out's shape: `index` is laid out like out (expanded
// where it repeats), self's stride along `dim` is applied to each index value.
template <typename T, typename I>
bool gather_strided(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& out) {
  const int64_t n = out.numel();
  std::vector<int64_t> self_strides(self.strides().begin(), self.strides().end());
  const int64_t dim_stride = self.dim() ? self.stride(dim) : 0, dim_size = self.dim() ? self.size(dim) : 1;
  if (self.dim()) self_strides[dim] = 0;
  if (self_strides.size() < static_cast<size_t>(out.dim())) self_strides.resize(out.dim(), 0);  // 0-dim self
  const StridedRuns<2> runs(out.sizes(), {at::IntArrayRef(self_strides), index.strides()});
  const T* src = static_cast<const T*>(self.const_data_ptr());
  const I* ix = static_cast<const I*>(index.const_data_ptr());
  T* dst = static_cast<T*>(out.data_ptr());
  const int64_t ss = runs.inner_stride(0), is = runs.inner_stride(1);
  std::atomic<bool> bad{false};
  structgen::parallel_for(0, n, grain_for(16), [&](int64_t begin, int64_t end) {
    bool local_bad = false;
    runs.for_each_run(begin, end, [&](const std::array<int64_t, 2>& off, int64_t pos, int64_t len) {
      const T* s = src + off[0];
      const I* x = ix + off[1];
      T* o = dst + pos;
      for (int64_t j = 0; j < len; ++j) {
        const I v = x[j * is];
        if (!in_range(v, dim_size)) {
          local_bad = true;
          continue;
        }
        o[j] = s[j * ss + static_cast<int64_t>(v) * dim_stride];
      }
    });
    if (local_bad) bad = true;
  });
  return !bad;
}

// gather along the last dim of contiguous tensors whose other dims agree (top-k style): row r of
// out reads row r of self at row r of index, without gather_strided's per-run bookkeeping, which
// costs as much as the copy when rows are short (k = 8: 0.56x torch).
template <typename T, typename I>
bool gather_rows(const at::Tensor& self, const at::Tensor& index, const at::Tensor& out) {
  const int64_t k = index.size(-1), width = self.size(-1), rows = k ? out.numel() / k : 0;
  const T* src = static_cast<const T*>(self.const_data_ptr());
  const I* ix = static_cast<const I*>(index.const_data_ptr());
  T* dst = static_cast<T*>(out.data_ptr());
  std::atomic<bool> bad{false};
  structgen::parallel_for(0, rows, grain_for(16 * k), [&](int64_t begin, int64_t end) {
    bool local_bad = false;
    for (int64_t r = begin; r < end; ++r) {
      const T* s = src + r * width;
      const I* x = ix + r * k;
      T* o = dst + r * k;
      for (int64_t j = 0; j < k; ++j) {
        const I v = x[j];
        if (in_range(v, width)) {
          o[j] = s[static_cast<int64_t>(v)];
        } else {
          local_bad = true;  // reported after the loop
        }
      }
    }
    if (local_bad) bad = true;
  });
  return !bad;
}

// The bags [b0, b1) of embedding_bag; true if an index was out of range (that row is skipped).
// Cloned for AVX-512 / AVX2 (structgen/cpu/pointwise.h): the row loops vectorise with the widest lanes.
// Sums and means prefetch every line of the block of the row kAhead indices on (torch/structops,
// sums, 2 threads): [50000, 128] table (L3) 0.83-0.86x with the block's first line only ->
// 1.00-1.02x, [500000, 256] (DRAM) 0.80-0.89x -> 1.16-1.17x; 8 ahead 0.97-0.99x / 1.16-1.18x, 4
// ahead 0.87-0.91x. Most samples still land on the first prefetch of a row (its page walk).
constexpr int64_t kAhead = 16;

template <typename scalar_t, typename acc_t, typename I>
SO_CPU_CLONES bool embedding_bags(const scalar_t* src, int64_t d, int64_t rows, const I* ix, int64_t n,
                                  const I* off, int64_t noff, const scalar_t* ps, int64_t mode, scalar_t* dst,
                                  int64_t b0, int64_t b1) {
  std::vector<acc_t> buf(d);
  acc_t* __restrict acc = buf.data();
  bool bad = false;
  // Sums and means: kWide (then kNarrow) columns at a time in registers across the bag's rows
  // (one load per element, not acc's load and store too: 0.55x torch before). Rows narrower
  // than kNarrow, and max, go through acc.
  constexpr int64_t kWide = 512 / sizeof(acc_t), kNarrow = kWide / 2;  // floats: 8 and 4 512-bit vectors
  constexpr int64_t kLine = 64 / sizeof(scalar_t);                     // elements per cache line
  const int64_t wide = mode == 2 ? 0 : d / kWide * kWide;
  const int64_t blocked = mode == 2 ? 0 : wide + (d - wide) / kNarrow * kNarrow;
  for (int64_t b = b0; b < b1; ++b) {
    const int64_t begin = off[b], end = b + 1 < noff ? static_cast<int64_t>(off[b + 1]) : n;
    const acc_t count = static_cast<acc_t>(end > begin ? end - begin : 1);
    // Inlined, so that it compiles for the ISA of the clone it is in.
    const auto columns = [&]<int64_t B>(std::integral_constant<int64_t, B>,
                                        int64_t j0) __attribute__((always_inline)) {
      acc_t block[B] = {};
      for (int64_t k = begin; k < end; ++k) {
        const I v = ix[k];
        if (k + kAhead < n && in_range(ix[k + kAhead], rows)) {
          const scalar_t* ahead = src + static_cast<int64_t>(ix[k + kAhead]) * d + j0;
#pragma GCC unroll 16
          for (int64_t j = 0; j < B; j += kLine) __builtin_prefetch(ahead + j, /*rw=*/0, /*locality=*/3);
        }
        if (!in_range(v, rows)) {
          bad = true;
          continue;
        }
        const scalar_t* __restrict row = src + static_cast<int64_t>(v) * d + j0;
        const acc_t sc = ps ? static_cast<acc_t>(ps[k]) : acc_t(1);
#pragma GCC unroll 128
        for (int64_t j = 0; j < B; ++j) block[j] += static_cast<acc_t>(row[j]) * sc;
      }
      scalar_t* __restrict o = dst + b * d + j0;
#pragma GCC unroll 128
      for (int64_t j = 0; j < B; ++j) o[j] = static_cast<scalar_t>(mode == 1 ? block[j] / count : block[j]);
    };
    for (int64_t j0 = 0; j0 < wide; j0 += kWide) columns(std::integral_constant<int64_t, kWide>{}, j0);
    if (blocked > wide) columns(std::integral_constant<int64_t, kNarrow>{}, wide);
    // The columns past the blocks, in a narrow block that ends at the row's end (it overlaps the
    // last block, whose columns it writes again with the same sums). Through acc, the sums of a
    // [50000, 100] float table ran at 0.66x torch; this way 0.88x.
    if (blocked > 0 && blocked < d) columns(std::integral_constant<int64_t, kNarrow>{}, d - kNarrow);
    if (blocked > 0) continue;
    std::fill(acc + blocked, acc + d, acc_t(0));  // blocked is 0 here
    bool first = true;
    for (int64_t k = begin; k < end; ++k) {
      const I v = ix[k];
      if (!in_range(v, rows)) {  // skipped; the caller reports the first bad index
        bad = true;
        continue;
      }
      const scalar_t* __restrict row = src + static_cast<int64_t>(v) * d;
      if (mode == 2) {  // max, as torch: a later row wins only where it is greater (NaN stays)
        for (int64_t j = blocked; j < d; ++j) {
          const acc_t x = static_cast<acc_t>(row[j]);
          acc[j] = first || x > acc[j] ? x : acc[j];
        }
      } else if (ps) {
        const acc_t sc = static_cast<acc_t>(ps[k]);
        for (int64_t j = blocked; j < d; ++j) acc[j] += static_cast<acc_t>(row[j]) * sc;
      } else {
        for (int64_t j = blocked; j < d; ++j) acc[j] += static_cast<acc_t>(row[j]);
      }
      first = false;
    }
    scalar_t* __restrict o = dst + b * d;
    if (mode == 1 && end > begin) {
      for (int64_t j = blocked; j < d; ++j) o[j] = static_cast<scalar_t>(acc[j] / count);
    } else {
      for (int64_t j = blocked; j < d; ++j) o[j] = static_cast<scalar_t>(acc[j]);
    }
  }
  return bad;
}

}  // namespace

void index_select_out_cpu(const at::Tensor& self, int64_t dim, const at::Tensor& index,
                          at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  const int64_t d = self.dim() ? (dim < 0 ? dim + self.dim() : dim) : 0;
  const int64_t size = self.dim() ? self.size(d) : 1, n = index.numel();
  const at::Tensor idx = index.reshape({-1});
  bool ok = true;
  by_index_type(idx, [&](auto i_tag) {
    using I = decltype(i_tag);
    by_element_size(self, [&](auto t_tag) {
      using T = decltype(t_tag);
      const I* ix = idx.const_data_ptr<I>();
      const int64_t ixs = idx.stride(0);
      if (out.numel() == 0 || !self.is_contiguous()) {
        if (out.numel() == 0) {  // nothing to write, but the indices must still be valid
          for (int64_t i = 0; i < n && ok; ++i) ok = in_range(ix[i * ixs], size);
          return;
        }
        // Any layout: index laid out along dim `d` of out, repeated over the other dims.
        std::vector<int64_t> strides(out.dim(), 0);
        if (out.dim()) strides[d] = ixs;
        const at::Tensor expanded = idx.as_strided(out.sizes(), strides);
        ok = gather_strided<T, I>(self, d, expanded, out);
        return;
      }
      // Contiguous self as [outer, size, inner]: row copies of `inner` elements.
      int64_t outer = 1, inner = 1;
      for (int64_t k = 0; k < d; ++k) outer *= self.size(k);
      for (int64_t k = d + 1; k < self.dim(); ++k) inner *= self.size(k);
      const T* src = static_cast<const T*>(self.const_data_ptr());
      T* dst = static_cast<T*>(out.data_ptr());
      std::atomic<bool> bad{false};
      if (inner == 1) {
        // Element gathers: the index is reused by every outer row, so check it once up front and
        // keep the copy loop free of branches (contiguous index: a plain gather the compiler unrolls).
        for (int64_t i = 0; i < n && ok; ++i) ok = in_range(ix[i * ixs], size);
        if (!ok) return;
        const at::Tensor packed = ixs == 1 ? idx : idx.contiguous();
        const I* px = packed.const_data_ptr<I>();
        structgen::parallel_for(0, outer * n, grain_for(16), [&](int64_t begin, int64_t end) {
          // The row of the chunk's start divided out once, not per row, and the copy unrolled: one
          // thread over [1000, 64] picking 32 columns ran at 0.63-0.75x torch, now 0.93-0.95x. (A
          // private copy of the indices looked faster in one build and not in the next: code
          // layout; AVX-512 gathers were no faster there and 2.5x slower over [50000, 128], Zen 4.)
          const T* s = src + begin / n * size;
          T* w = dst + begin / n * n;
          for (int64_t r = begin, i0 = begin % n; r < end; i0 = 0, s += size, w += n) {
            const int64_t i1 = std::min(n, i0 + (end - r));
            const T* __restrict row = s;
            T* __restrict to = w;
#pragma GCC unroll 4
            for (int64_t i = i0; i < i1; ++i) to[i] = row[px[i]];
            r += i1 - i0;
          }
        });
      } else {
        const size_t row_bytes = inner * sizeof(T);
        structgen::parallel_for(0, outer * n, grain_for(row_bytes), [&](int64_t begin, int64_t end) {
          bool local_bad = false;
          for (int64_t r = begin; r < end; ++r) {
            const int64_t o = r / n, i = r % n;
            const I v = ix[i * ixs];
            if (!in_range(v, size)) {
              local_bad = true;
              continue;
            }
            std::memcpy(dst + r * inner, src + (o * size + v) * inner, row_bytes);
          }
          if (local_bad) bad = true;
        });
      }
      ok = !bad;
    });
    if (!ok)
      raise_bad_index("index_select", "self", "index", idx, size, /*index_error=*/true, d,
                      /*negative_ok=*/false, "");
  });
}

void gather_out_cpu(const at::Tensor& self, int64_t dim, const at::Tensor& index, bool /*sparse_grad*/,
                    at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  if (out.numel() == 0) return;
  const int64_t d = self.dim() ? (dim < 0 ? dim + self.dim() : dim) : 0;
  const int64_t size = self.dim() ? self.size(d) : 1;
  // A 0-dim self or index counts as 1-dim (torch's rule); out has index's shape.
  const at::Tensor s = self.dim() ? self : self.reshape({1});
  const at::Tensor ix = index.dim() ? index : index.reshape({1});
  const at::Tensor o = out.dim() ? out : out.view({1});
  by_index_type(index, [&](auto i_tag) {
    using I = decltype(i_tag);
    bool ok = true;
    const bool rows = d == s.dim() - 1 && s.is_contiguous() && ix.is_contiguous() && o.is_contiguous() &&
                      ix.sizes().slice(0, d) == s.sizes().slice(0, d);
    by_element_size(self, [&](auto t_tag) {
      using T = decltype(t_tag);
      ok = rows ? gather_rows<T, I>(s, ix, o) : gather_strided<T, I>(s, d, ix, o);
    });
    if (!ok)
      raise_bad_index("gather", "self", "index", index, size, /*index_error=*/false, d, /*negative_ok=*/false,
                      "");
  });
}

void take_out_cpu(const at::Tensor& self, const at::Tensor& index, at::ScalarType /*compute_dtype*/,
                  const at::Tensor& out) {
  const int64_t numel = self.numel(), n = index.numel();
  if (n == 0) return;
  // Non-contiguous self: the linear positions address its row-major order, so read a contiguous
  // copy (torch's take does the same arithmetic per element; one copy is cheaper for big indices).
  const at::Tensor src_t = self.contiguous();
  const StridedRuns<1> runs(index.sizes(), {index.strides()});
  const int64_t* ix = index.const_data_ptr<int64_t>();
  const int64_t is = runs.inner_stride(0);
  std::atomic<bool> bad{false};
  by_element_size(self, [&](auto t_tag) {
    using T = decltype(t_tag);
    const T* src = static_cast<const T*>(src_t.const_data_ptr());
    T* dst = static_cast<T*>(out.data_ptr());
    structgen::parallel_for(0, n, grain_for(16), [&](int64_t begin, int64_t end) {
      bool local_bad = false;
      runs.for_each_run(begin, end, [&](const std::array<int64_t, 1>& off, int64_t pos, int64_t len) {
        const int64_t* x = ix + off[0];
        T* w = dst + pos;
        for (int64_t j = 0; j < len; ++j) {
          int64_t v = x[j * is];
          v += v < 0 ? numel : 0;
          if (!in_range(v, numel)) {
            local_bad = true;
            continue;
          }
          w[j] = src[v];
        }
      });
      if (local_bad) bad = true;
    });
  });
  if (bad)
    raise_bad_index("take", "self", "index", index, numel, /*index_error=*/true, -1, /*negative_ok=*/true,
                    "elements");
}

void masked_select_out_cpu(const at::Tensor& self, const at::Tensor& mask, const at::Tensor& out) {
  const int64_t count = out.numel();
  if (count == 0) return;
  const std::vector<int64_t> shape = rules::concrete(
      rules::broadcast("masked_select", {{"self", rules::sizes(self)}, {"mask", rules::sizes(mask)}}));
  const at::Tensor s = self.expand(shape), m = mask.expand(shape);
  const StridedRuns<2> runs(shape, {s.strides(), m.strides()});
  int64_t total = 1;
  for (int64_t x : shape) total *= x;
  // Two passes over fixed chunks: count the true elements of each, then write each chunk's at its
  // prefix-sum position, so the result keeps row-major order on any number of threads.
  const int64_t chunks = std::min<int64_t>((total + 16383) / 16384, 4 * at::get_num_threads());
  const int64_t per = (total + chunks - 1) / chunks;
  std::vector<int64_t> start(chunks + 1, 0);
  const bool* mp = m.const_data_ptr<bool>();
  const int64_t ms = runs.inner_stride(1), ss = runs.inner_stride(0);
  structgen::parallel_for(0, chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      int64_t k = 0;
      runs.for_each_run(c * per, std::min(total, (c + 1) * per),
                        [&](const std::array<int64_t, 2>& off, int64_t, int64_t len) {
                          const bool* p = mp + off[1];
                          for (int64_t j = 0; j < len; ++j) k += p[j * ms];
                        });
      start[c + 1] = k;
    }
  });
  for (int64_t c = 0; c < chunks; ++c) start[c + 1] += start[c];
  TORCH_INTERNAL_ASSERT(start[chunks] == count, "masked_select: counted ", start[chunks],
                        " true elements, meta said ", count);
  by_element_size(self, [&](auto t_tag) {
    using T = decltype(t_tag);
    const T* src = static_cast<const T*>(s.const_data_ptr());
    T* dst = static_cast<T*>(out.data_ptr());
    structgen::parallel_for(0, chunks, 1, [&](int64_t b, int64_t e) {
      for (int64_t c = b; c < e; ++c) {
        T* w = dst + start[c];
        runs.for_each_run(c * per, std::min(total, (c + 1) * per),
                          [&](const std::array<int64_t, 2>& off, int64_t, int64_t len) {
                            const bool* p = mp + off[1];
                            const T* x = src + off[0];
                            for (int64_t j = 0; j < len; ++j) {
                              if (p[j * ms]) *w++ = x[j * ss];
                            }
                          });
      }
    });
  });
}

void embedding_out_cpu(const at::Tensor& weight, const at::Tensor& indices, at::ScalarType /*compute_dtype*/,
                       const at::Tensor& out) {
  const int64_t rows = weight.size(0), width = weight.size(1), n = indices.numel();
  if (n == 0) return;
  const at::Tensor w = weight.contiguous();
  const at::Tensor idx = indices.to(at::kLong).contiguous();
  const int64_t* ix = idx.const_data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    TORCH_CHECK_INDEX(0 <= ix[i] && ix[i] < rows, "embedding: index ", ix[i],
                      " is out of range for 'weight' with ", rows, " rows (at position ", i,
                      " of 'indices')");
  }
  AT_DISPATCH_ALL_TYPES_AND_COMPLEX_AND3(
      at::kHalf, at::kBFloat16, at::kBool, out.scalar_type(), "embedding", [&] {
        const scalar_t* src = w.const_data_ptr<scalar_t>();
        scalar_t* dst = out.data_ptr<scalar_t>();  // contiguous: the meta layout
        structgen::parallel_for(0, n, std::max<int64_t>(1, cpu::kGrainSize / std::max<int64_t>(width, 1)),
                                [&](int64_t begin, int64_t end) {
                                  for (int64_t i = begin; i < end; ++i) {
                                    std::memcpy(dst + i * width, src + ix[i] * width,
                                                width * sizeof(scalar_t));
                                  }
                                });
      });
}

void embedding_bag_out_cpu(const at::Tensor& weight, const at::Tensor& indices, const at::Tensor& offsets,
                           bool /*scale_grad_by_freq*/, int64_t mode, bool /*sparse*/,
                           const std::optional<at::Tensor>& per_sample_weights, bool include_last_offset,
                           at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  const int64_t rows = weight.size(0), d = weight.size(1), n = indices.numel(), bags = out.size(0);
  const int64_t noff = offsets.numel();
  // Mixed int32/int64 indices and offsets are both read as int64 (torch promotes them too).
  const at::ScalarType index_type = at::promoteTypes(indices.scalar_type(), offsets.scalar_type());
  const at::Tensor w = weight.contiguous(), ix_t = indices.to(index_type).contiguous();
  const at::Tensor off_t = offsets.to(index_type).contiguous();
  const bool weighted = per_sample_weights.has_value() && per_sample_weights->defined();
  const at::Tensor psw = weighted ? per_sample_weights->contiguous() : at::Tensor();
  by_index_type(ix_t, [&](auto i_tag) {
    using I = decltype(i_tag);
    const I* ix = ix_t.const_data_ptr<I>();
    const I* off = off_t.const_data_ptr<I>();
    // Offsets are data the shapes cannot check: bag i is indices[off[i] : off[i+1]] (the last one
    // ends at n, or at the extra offset with include_last_offset).
    if (noff > 0) {
      TORCH_CHECK(off[0] == 0,
                  "embedding_bag: offsets[0] must be 0 (the first bag starts at the first index), got ",
                  static_cast<int64_t>(off[0]));
    }
    for (int64_t i = 1; i < noff; ++i) {
      TORCH_CHECK(off[i] >= off[i - 1] && off[i] <= n,
                  "embedding_bag: 'offsets' must be non-decreasing and at most ", n,
                  " (the number of indices), got offsets[", i, "]=", static_cast<int64_t>(off[i]), " after ",
                  static_cast<int64_t>(off[i - 1]));
    }
    if (bags == 0 || d == 0) return;
    std::atomic<bool> bad{false};
    AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, weight.scalar_type(), "embedding_bag", [&] {
      using acc_t = at::opmath_type<scalar_t>;
      const scalar_t* src = w.const_data_ptr<scalar_t>();
      const scalar_t* ps = weighted ? psw.const_data_ptr<scalar_t>() : nullptr;
      scalar_t* dst = out.data_ptr<scalar_t>();
      const int64_t per_bag = std::max<int64_t>(1, n / bags) * d;
      structgen::parallel_for(0, bags, std::max<int64_t>(1, 16384 / per_bag), [&](int64_t b0, int64_t b1) {
        if (embedding_bags<scalar_t, acc_t, I>(src, d, rows, ix, n, off, noff, ps, mode, dst, b0, b1))
          bad = true;
      });
    });
    if (bad)
      raise_bad_index("embedding_bag", "weight", "indices", indices, rows, /*index_error=*/true, -1,
                      /*negative_ok=*/false, "rows");
  });
}

}  // namespace structops::impl
