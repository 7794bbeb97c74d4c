// CUDA host glue of cat, stack and split_with_sizes_copy: every piece that is contiguous, of the
// output dtype, goes into one batched copy kernel (cuda.cu: one launch per 32 pieces, pointers
// and sizes in the kernel's parameters). A piece that is not (a strided view, or a cat input of
// another dtype to promote) is copied with at::Tensor::copy_ into its slice of the output instead:
// TensorIterator's strided, casting copy is one pass, where making it contiguous first and then
// copying would be two. Both run on the current stream, in order. Compiled only when the
// installed torch has CUDA (CMakeLists.txt).
#include <structops/ops/cat.h>
#include <structops/ops/split_with_sizes_copy.h>
#include <structops/ops/stack.h>
#include <ops/shape/launch.h>

#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <vector>
#include <ops/runtime_names.h>

namespace structops::impl {
namespace {

// The product of sizes[begin, end).
int64_t span(at::IntArrayRef sizes, int64_t begin, int64_t end) {
  int64_t n = 1;
  for (int64_t k = begin; k < end; ++k) n *= sizes[k];
  return n;
}

// Whether `t` can be a kernel piece read or written as-is next to `like`.
bool direct(const at::Tensor& t, const at::Tensor& like) {
  return t.is_contiguous() && t.scalar_type() == like.scalar_type() && t.device() == like.device();
}

void launch(const char* name, const std::vector<CopyPiece>& pieces, const at::Tensor& like) {
  if (pieces.empty()) return;
  const char* error = cuda_kernels::copy_pieces(pieces.data(), static_cast<int64_t>(pieces.size()),
                                                c10::cuda::getCurrentCUDAStream().stream());
  TORCH_CHECK(error == nullptr, name, ": CUDA kernel failed for dtype ", like.scalar_type(), ": ", error);
}

char* bytes(const at::Tensor& t) { return static_cast<char*>(t.data_ptr()); }
const char* const_bytes(const at::Tensor& t) { return static_cast<const char*>(t.const_data_ptr()); }

}  // namespace

void cat_out_cuda(at::TensorList tensors, int64_t dim, at::ScalarType /*compute_dtype*/,
                  const at::Tensor& out) {
  const c10::cuda::CUDAGuard guard(out.device());
  if (out.dim() == 0 || out.numel() == 0) return;
  const int64_t d = dim < 0 ? dim + out.dim() : dim;
  // out as [outer, total, inner]: input i fills rows of n_i * inner elements at offset_i * inner.
  const int64_t outer = span(out.sizes(), 0, d), inner = span(out.sizes(), d + 1, out.dim());
  const int64_t es = out.element_size(), out_row = out.size(d) * inner * es;
  const bool dense_out = out.is_contiguous();  // the meta layout
  std::vector<CopyPiece> pieces;
  int64_t offset = 0;
  for (const auto& t : tensors) {
    if (t.dim() == 1 && t.size(0) == 0 && out.dim() != 1) continue;  // legacy empty input
    const int64_t n = t.size(d);
    if (n > 0) {
      if (dense_out && direct(t, out)) {
        pieces.push_back(CopyPiece{t.const_data_ptr(), bytes(out) + offset * inner * es, outer,
                                   n * inner * es, n * inner * es, out_row});
      } else {
        out.narrow(d, offset, n).copy_(t);  // strided and/or casting to the promoted dtype
      }
    }
    offset += n;
  }
  launch("cat", pieces, out);
}

void stack_out_cuda(at::TensorList tensors, int64_t dim, at::ScalarType /*compute_dtype*/,
                    const at::Tensor& out) {
  const c10::cuda::CUDAGuard guard(out.device());
  if (out.numel() == 0) return;
  const int64_t d = dim < 0 ? dim + out.dim() : dim;
  // out as [outer, count, inner]: input i (outer rows of inner elements) fills slot i of each row.
  const int64_t outer = span(out.sizes(), 0, d), inner = span(out.sizes(), d + 1, out.dim());
  const int64_t es = out.element_size(), count = static_cast<int64_t>(tensors.size());
  const bool dense_out = out.is_contiguous();
  std::vector<CopyPiece> pieces;
  for (int64_t i = 0; i < count; ++i) {
    const at::Tensor& t = tensors[i];
    if (dense_out && direct(t, out)) {
      pieces.push_back(CopyPiece{t.const_data_ptr(), bytes(out) + i * inner * es, outer, inner * es,
                                 inner * es, count * inner * es});
    } else {
      out.select(d, i).copy_(t);
    }
  }
  launch("stack", pieces, out);
}

void split_with_sizes_copy_out_cuda(const at::Tensor& self, c10::SymIntArrayRef split_sizes, int64_t dim,
                                    at::ScalarType /*compute_dtype*/, at::TensorList out) {
  const c10::cuda::CUDAGuard guard(self.device());
  const int64_t d = dim < 0 ? dim + self.dim() : dim;
  // self as [outer, size, inner]: piece i is outer rows of n_i * inner elements at offset_i * inner.
  const int64_t outer = span(self.sizes(), 0, d), inner = span(self.sizes(), d + 1, self.dim());
  const int64_t es = self.element_size(), self_row = self.size(d) * inner * es;
  const bool dense_self = self.is_contiguous();
  std::vector<CopyPiece> pieces;
  int64_t offset = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t n = split_sizes[i].expect_int();
    if (out[i].numel() > 0) {
      if (dense_self && direct(out[i], self)) {
        pieces.push_back(CopyPiece{const_bytes(self) + offset * inner * es, bytes(out[i]), outer,
                                   n * inner * es, self_row, n * inner * es});
      } else {
        out[i].copy_(self.narrow(d, offset, n));  // TensorIterator's strided copy
      }
    }
    offset += n;
  }
  launch("split_with_sizes_copy", pieces, self);
}

}  // namespace structops::impl
