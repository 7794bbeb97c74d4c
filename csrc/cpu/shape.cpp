// CPU impls of the tensor-list and indexing ops: cat, stack and embedding. Shapes, dtypes and
// argument errors come from the meta rules; what is left is moving data (and the one check a
// meta function cannot make: index values).
#include <structops/ops/cat.h>
#include <structops/ops/embedding.h>
#include <structops/ops/stack.h>

#include <ATen/Dispatch.h>
#include <structops/parallel.h>

#include <cstring>

namespace structops::impl {

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

void embedding_out_cpu(const at::Tensor& weight, const at::Tensor& indices, at::ScalarType /*compute_dtype*/,
                       const at::Tensor& out) {
  const int64_t rows = weight.size(0), width = weight.size(1), n = indices.numel();
  if (n == 0) return;
  const at::Tensor w = weight.contiguous();
  const at::Tensor idx = indices.to(at::kLong).contiguous();
  const int64_t* ix = idx.const_data_ptr<int64_t>();
  for (int64_t i = 0; i < n; ++i) {
    TORCH_CHECK_INDEX(0 <= ix[i] && ix[i] < rows, "embedding: index ", ix[i], " is out of range for 'weight' with ",
                      rows, " rows (at position ", i, " of 'indices')");
  }
  AT_DISPATCH_ALL_TYPES_AND_COMPLEX_AND3(at::kHalf, at::kBFloat16, at::kBool, out.scalar_type(), "embedding", [&] {
    const scalar_t* src = w.const_data_ptr<scalar_t>();
    scalar_t* dst = out.data_ptr<scalar_t>();  // contiguous: the meta layout
    structops::parallel_for(0, n, std::max<int64_t>(1, 32768 / std::max<int64_t>(width, 1)), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        std::memcpy(dst + i * width, src + ix[i] * width, width * sizeof(scalar_t));
      }
    });
  });
}

}  // namespace structops::impl
