// CPU impls of the tensor-list ops: cat, stack and split_with_sizes_copy. Shapes, dtypes and
// argument errors come from the meta rules; what is left is moving data.
//
// All three move row blocks between one row-major tensor and its pieces: viewed as `outer` rows,
// a row of the whole holds one row of each piece side by side (cat and split along dim d have
// outer = the product of the sizes before d; stack is cat along a new dim). When every tensor is
// contiguous with the one dtype, that is a copy of rows, one parallel loop for all pieces; a
// dtype cast or a strided tensor goes through TensorIterator's copy_.
#include <structgen/cpu/rows.h>  // SO_CPU_CLONES
#include <structops/ops/cat.h>
#include <structops/ops/split_with_sizes_copy.h>
#include <structops/ops/stack.h>
#include <structgen/parallel.h>

#include <c10/util/SmallVector.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#include <ops/runtime_names.h>
#endif

namespace structops::impl {
namespace {

// A contiguous piece: `outer` rows of `bytes` each.
struct Piece {
  char* data;
  int64_t bytes;
};

// Streaming stores (movntdq: the destination's lines are written without being read into the
// caches first) where the CPU has them (SSE2: every x86-64).
#if defined(__SSE2__)
constexpr bool kCanStream = true;
#else
constexpr bool kCanStream = false;
#endif

// n >= 64 bytes (copy_run's long runs) from s to d in 64-byte blocks, the last one ending at n
// (overlapping). Not memcpy: glibc moves runs of 2 KiB to 1 MiB with `rep movsb` (on this CPU),
// which takes the page faults of a fresh output ~25% slower than vector stores (a functional cat
// of two 256 MiB halves ran at 0.77x torch, 0.97x with these). kStream: the blocks are streamed
// from d's first 16-byte boundary on (the bytes before it, and the last block, are plain 64-byte
// moves); the caller fences once after its last one. gcc would turn the plain loop back into a
// memmove call (its loop distribution recognises the copy), hence the optimize attribute.
template <bool kStream>
[[gnu::optimize("no-tree-loop-distribute-patterns")]] SO_CPU_CLONES  //
    void copy_long(char* __restrict d, const char* __restrict s, int64_t n) {
  const auto plain = [&](int64_t at) {
    char block[64];
    std::memcpy(block, s + at, 64);
    std::memcpy(d + at, block, 64);
  };
  int64_t at = 0;
#if defined(__SSE2__)
  if constexpr (kStream) {
    at = -reinterpret_cast<intptr_t>(d) & 15;
    if (at) plain(0);
    for (; at + 64 <= n; at += 64) {
      for (int k = 0; k < 64; k += 16) {
        _mm_stream_si128(reinterpret_cast<__m128i*>(d + at + k),
                         _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + at + k)));
      }
    }
  }
#endif
  if constexpr (!kStream) {
    for (; at + 64 <= n; at += 64) plain(at);
  }
  if (at < n) plain(n - 64);
}

// n bytes from s to d: copy_long for long runs, short ones as fixed-size moves that overlap at the
// end, inline: a memcpy call per 16-byte row ran 4.5x slower, per 64-byte row 3.9x.
template <bool kStream>
inline void copy_run(char* __restrict d, const char* __restrict s, int64_t n) {
  // Blocks of B bytes from 0 while a whole block fits, and the last one ending at n (overlapping).
  const auto blocks = [&]<int64_t B>(std::integral_constant<int64_t, B>) {
    for (int64_t at = 0;; at += B) {
      char block[B];
      const int64_t from = std::min(at, n - B);
      std::memcpy(block, s + from, B);
      std::memcpy(d + from, block, B);
      if (from == n - B) return;
    }
  };
  if (n >= 512) return copy_long<kStream>(d, s, n);
  if (n >= 64)
    return blocks(std::integral_constant<int64_t, 64>{});  // a 512-bit register where the ISA has one
  if (n >= 32) return blocks(std::integral_constant<int64_t, 32>{});
  if (n >= 16) return blocks(std::integral_constant<int64_t, 16>{});
  if (n >= 8) return blocks(std::integral_constant<int64_t, 8>{});
  if (n >= 4) return blocks(std::integral_constant<int64_t, 4>{});
  for (int64_t j = 0; j < n; ++j) d[j] = s[j];
}

// Rows [r0, r1) of `bytes` each from s (rows s_pitch apart) to d (d_pitch apart). One element per
// row (a stack along the last dim) is a loop of single moves of a size known at compile time.
template <bool kStream>
void copy_rows(char* d, int64_t d_pitch, const char* s, int64_t s_pitch, int64_t r0, int64_t r1,
               int64_t bytes) {
  const auto fixed = [&]<int64_t B>(std::integral_constant<int64_t, B>) {
    for (int64_t r = r0; r < r1; ++r) std::memcpy(d + r * d_pitch, s + r * s_pitch, B);
  };
  switch (bytes) {
    case 1:
      return fixed(std::integral_constant<int64_t, 1>{});
    case 2:
      return fixed(std::integral_constant<int64_t, 2>{});
    case 4:
      return fixed(std::integral_constant<int64_t, 4>{});
    case 8:
      return fixed(std::integral_constant<int64_t, 8>{});
    case 16:
      return fixed(std::integral_constant<int64_t, 16>{});
    default:
      for (int64_t r = r0; r < r1; ++r) copy_run<kStream>(d + r * d_pitch, s + r * s_pitch, bytes);
  }
}

// Copies each piece's rows into the whole (gather, for cat and stack) or out of it (split): row r
// of piece i is bytes [offset_i, offset_i + bytes_i) of the whole's row r, offset_i the bytes of
// the pieces before it. The threads take ranges of rows. Where the whole passes 1 MiB (more than
// a core's L2) and every piece's row is 64 bytes or more, the whole is walked row by row, each
// piece's part in turn, so that the whole is one sequential stream (piece by piece over a thread's
// range, a cat of two [500000, 128] float halves along dim 1 ran at 0.55x torch on one thread,
// and in blocks of 4 rows no better than 0.6x); otherwise piece by piece, in tighter loops, over
// blocks of 1 KiB of the whole past 1 MiB (a stack of pieces of one element along the last dim:
// 2.6 -> 4.5x torch) and over the thread's whole range below (row by row, or in blocks, a cat of
// two [1000, 32] halves along dim 1 ran at 0.63-0.82x torch, 0.9x this way). Pieces whose rows pass 64 KiB (a
// split along dim 0 is one row) are cut instead, so that a few long rows still spread over the threads. Below
// 256 KiB in all the copy stays on one thread: an in-cache copy that small takes less time than waking a
// second one. From kStreamBytes on (half of a 32 MiB L3: the result will not stay in the caches)
// the long runs are streamed: 25-30% less time than plain stores once the pages are mapped.
template <bool kStream>
void move_rows_with(char* whole, int64_t outer, c10::ArrayRef<Piece> pieces, bool gather) {
  constexpr int64_t kCut = int64_t{1} << 16, kGrain = int64_t{1} << 18, kBlock = int64_t{1} << 10;
  constexpr int64_t kSequentialBytes = int64_t{1} << 20;
  const size_t n = pieces.size();
  c10::SmallVector<int64_t, 8> offset(n);
  int64_t pitch = 0, widest = 0, narrowest = INT64_MAX;
  for (size_t i = 0; i < n; ++i) {
    offset[i] = pitch;
    pitch += pieces[i].bytes;
    widest = std::max(widest, pieces[i].bytes);
    narrowest = std::min(narrowest, pieces[i].bytes);
  }
  const auto move = [&](char* w, char* p, int64_t len) {
    gather ? copy_run<kStream>(w, p, len) : copy_run<kStream>(p, w, len);
  };
  const auto fence = [] {
#if defined(__SSE2__)
    if constexpr (kStream) _mm_sfence();  // the streamed stores are visible before the threads join
#endif
  };
  const bool sequential = outer * pitch >= kSequentialBytes;
  if (widest <= kCut && narrowest >= 64 && sequential) {
    structgen::parallel_for(0, outer, std::max<int64_t>(1, kGrain / pitch), [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        for (size_t i = 0; i < n; ++i) {
          move(whole + r * pitch + offset[i], pieces[i].data + r * pieces[i].bytes, pieces[i].bytes);
        }
      }
      fence();
    });
    return;
  }
  if (widest <= kCut) {
    const int64_t block = sequential ? std::max<int64_t>(1, kBlock / pitch) : outer;
    structgen::parallel_for(0, outer, std::max<int64_t>(1, kGrain / pitch), [&](int64_t r0, int64_t r1) {
      for (int64_t b = r0; b < r1; b += block) {
        const int64_t e = std::min(r1, b + block);
        for (size_t i = 0; i < n; ++i) {
          char* w = whole + offset[i];
          const int64_t bytes = pieces[i].bytes;
          gather ? copy_rows<kStream>(w, pitch, pieces[i].data, bytes, b, e, bytes)
                 : copy_rows<kStream>(pieces[i].data, bytes, w, pitch, b, e, bytes);
        }
      }
      fence();
    });
    return;
  }
  c10::SmallVector<int64_t, 8> cuts(n), first(n + 1);  // unit first[i] + r * cuts[i] + c: cut c of row r
  first[0] = 0;
  for (size_t i = 0; i < n; ++i) {
    cuts[i] = (pieces[i].bytes + kCut - 1) / kCut;
    first[i + 1] = first[i] + outer * cuts[i];
  }
  const int64_t units = first[n];
  structgen::parallel_for(
      0, units, std::max<int64_t>(1, units * kGrain / (outer * pitch)), [&](int64_t b, int64_t e) {
        for (size_t i = 0; i < n; ++i) {
          const int64_t lo = std::max(b, first[i]) - first[i], hi = std::min(e, first[i + 1]) - first[i];
          for (int64_t u = lo; u < hi; ++u) {  // a division per unit of 64 KiB is nothing
            const int64_t r = u / cuts[i], begin = u % cuts[i] * kCut,
                          len = std::min(kCut, pieces[i].bytes - begin);
            move(whole + r * pitch + offset[i] + begin, pieces[i].data + r * pieces[i].bytes + begin, len);
          }
        }
        fence();
      });
}

void move_rows(char* whole, int64_t outer, c10::ArrayRef<Piece> pieces, bool gather) {
  constexpr int64_t kStreamBytes = int64_t{16} << 20;
  int64_t pitch = 0;
  for (const Piece& p : pieces) pitch += p.bytes;
  if (outer == 0 || pitch == 0) return;
  kCanStream && outer * pitch >= kStreamBytes ? move_rows_with<true>(whole, outer, pieces, gather)
                                              : move_rows_with<false>(whole, outer, pieces, gather);
}

int64_t product(at::IntArrayRef sizes) {
  int64_t n = 1;
  for (const int64_t s : sizes) n *= s;
  return n;
}

char* bytes_of(const at::Tensor& t) { return static_cast<char*>(const_cast<void*>(t.const_data_ptr())); }

bool plain(const at::Tensor& t, const at::Tensor& like) {
  return t.is_contiguous() && t.scalar_type() == like.scalar_type();
}

}  // namespace

void cat_out_cpu(at::TensorList tensors, int64_t dim, at::ScalarType /*compute_dtype*/,
                 const at::Tensor& out) {
  if (out.dim() == 0 || out.numel() == 0) return;
  const int64_t d = dim < 0 ? dim + out.dim() : dim;
  const auto used = [&](const at::Tensor& t) { return !(t.dim() == 1 && t.size(0) == 0 && out.dim() != 1); };
  bool rows = out.is_contiguous();
  for (const auto& t : tensors) rows = rows && (!used(t) || plain(t, out));
  if (rows) {  // out as [outer, size(d) * inner]: tensor i gives size_i(d) * inner of each row
    const int64_t outer = product(out.sizes().slice(0, d)), row = product(out.sizes().slice(d + 1));
    c10::SmallVector<Piece, 8> pieces;
    for (const auto& t : tensors) {
      if (used(t)) pieces.push_back({bytes_of(t), t.size(d) * row * out.element_size()});
    }
    move_rows(bytes_of(out), outer, pieces, /*gather=*/true);
    return;
  }
  int64_t offset = 0;
  for (const auto& t : tensors) {
    if (!used(t)) continue;  // legacy empty input
    const int64_t n = t.size(d);
    if (n > 0) out.narrow(d, offset, n).copy_(t);  // copy_ casts to the promoted dtype
    offset += n;
  }
}

void stack_out_cpu(at::TensorList tensors, int64_t dim, at::ScalarType /*compute_dtype*/,
                   const at::Tensor& out) {
  const int64_t d = dim < 0 ? dim + out.dim() : dim;
  bool rows = out.is_contiguous();
  for (const auto& t : tensors) rows = rows && plain(t, out);
  if (rows) {  // cat along the new dim: out as [outer, k * inner], each tensor `inner` of each row
    const int64_t outer = product(out.sizes().slice(0, d)), row = product(out.sizes().slice(d + 1));
    c10::SmallVector<Piece, 8> pieces;
    for (const auto& t : tensors) pieces.push_back({bytes_of(t), row * out.element_size()});
    move_rows(bytes_of(out), outer, pieces, /*gather=*/true);
    return;
  }
  for (size_t i = 0; i < tensors.size(); ++i) out.select(d, static_cast<int64_t>(i)).copy_(tensors[i]);
}

void split_with_sizes_copy_out_cpu(const at::Tensor& self, c10::SymIntArrayRef split_sizes, int64_t dim,
                                   at::ScalarType /*compute_dtype*/, at::TensorList out) {
  const int64_t d = dim < 0 ? dim + self.dim() : dim;
  bool rows = self.is_contiguous();
  for (const auto& t : out) rows = rows && plain(t, self);
  if (rows) {  // self as [outer, size(d) * inner]: piece i takes split_sizes[i] * inner of each row
    const int64_t outer = product(self.sizes().slice(0, d)), row = product(self.sizes().slice(d + 1));
    c10::SmallVector<Piece, 8> pieces;
    for (size_t i = 0; i < out.size(); ++i) {
      pieces.push_back({bytes_of(out[i]), split_sizes[i].expect_int() * row * self.element_size()});
    }
    move_rows(bytes_of(self), outer, pieces, /*gather=*/false);
    return;
  }
  int64_t offset = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t n = split_sizes[i].expect_int();
    out[i].copy_(self.narrow(d, offset, n));  // TensorIterator's strided copy
    offset += n;
  }
}

}  // namespace structops::impl
