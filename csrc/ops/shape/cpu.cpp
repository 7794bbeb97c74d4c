// CPU impls of the tensor-list ops: cat, stack and split_with_sizes_copy. Shapes, dtypes and
// argument errors come from the meta rules; what is left is moving data.
#include <structops/ops/cat.h>
#include <structops/ops/split_with_sizes_copy.h>
#include <structops/ops/stack.h>
#include <structops/parallel.h>

#include <algorithm>
#include <cstring>

namespace structops::impl {
namespace {

// `rows` rows of `row_bytes` each, from src to dst with the given row pitches; long rows are cut
// into 64 KiB pieces so a few big rows still spread over the threads.
void copy_rows(char* dst, int64_t dst_pitch, const char* src, int64_t src_pitch, int64_t rows, int64_t row_bytes) {
  if (rows == 0 || row_bytes == 0) return;
  constexpr int64_t piece = 1 << 16;
  const int64_t per_row = (row_bytes + piece - 1) / piece;
  structops::parallel_for(0, rows * per_row, std::max<int64_t>(1, piece / row_bytes), [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const int64_t r = k / per_row, p = k % per_row;
      const int64_t begin = p * piece, len = std::min(piece, row_bytes - begin);
      std::memcpy(dst + r * dst_pitch + begin, src + r * src_pitch + begin, len);
    }
  });
}

}  // namespace

void cat_out_cpu(at::TensorList tensors, int64_t dim, at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  if (out.dim() == 0 || out.numel() == 0) return;
  const int64_t d = dim < 0 ? dim + out.dim() : dim;
  int64_t offset = 0;
  for (const auto& t : tensors) {
    if (t.dim() == 1 && t.size(0) == 0 && out.dim() != 1) continue;  // legacy empty input
    const int64_t n = t.size(d);
    if (n > 0) out.narrow(d, offset, n).copy_(t);  // copy_ casts to the promoted dtype
    offset += n;
  }
}

void stack_out_cpu(at::TensorList tensors, int64_t dim, at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  const int64_t d = dim < 0 ? dim + out.dim() : dim;
  for (size_t i = 0; i < tensors.size(); ++i) out.select(d, static_cast<int64_t>(i)).copy_(tensors[i]);
}

void split_with_sizes_copy_out_cpu(const at::Tensor& self, c10::SymIntArrayRef split_sizes, int64_t dim,
                                   at::ScalarType /*compute_dtype*/, at::TensorList out) {
  const int64_t d = dim < 0 ? dim + self.dim() : dim;
  if (!self.is_contiguous()) {
    int64_t offset = 0;
    for (size_t i = 0; i < out.size(); ++i) {
      const int64_t n = split_sizes[i].expect_int();
      out[i].copy_(self.narrow(d, offset, n));  // TensorIterator's strided copy
      offset += n;
    }
    return;
  }
  // Contiguous self as [outer, size, inner]: piece i is `outer` rows of n_i * inner elements.
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < d; ++k) outer *= self.size(k);
  for (int64_t k = d + 1; k < self.dim(); ++k) inner *= self.size(k);
  const int64_t es = self.element_size(), src_pitch = self.size(d) * inner * es;
  const char* src = static_cast<const char*>(self.const_data_ptr());
  int64_t offset = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t row = split_sizes[i].expect_int() * inner * es;
    copy_rows(static_cast<char*>(out[i].data_ptr()), row, src + offset, src_pitch, outer, row);
    offset += row;
  }
}

}  // namespace structops::impl
