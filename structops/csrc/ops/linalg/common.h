// What the CPU impls (cpu.cpp) and the CUDA host glue (cuda_host.cpp) of matmul share: the product
// through ATen's dot, mv, mm or bmm on views.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/ops/bmm_ops.h>
#include <ATen/ops/dot_ops.h>
#include <ATen/ops/mm_ops.h>
#include <ATen/ops/mv_ops.h>

#include <cstdint>
#include <vector>
#include <ops/runtime_names.h>

namespace structops::linalg {

// out = self @ other with torch.matmul's 1-D and batch-broadcast cases. A 1-D operand is a [1, k]
// row or a [k, 1] column whose unit dim the output does not have; out is contiguous (the meta
// layout), so unit dims are viewed in and batches flattened.
inline void matmul_by_aten(const at::Tensor& self, const at::Tensor& other, const at::Tensor& out) {
  // Vector operands as torch's matmul takes them: dot and mv, not a GEMM with a dim of 1
  // (a dot of 1e5 float32 elements through mm took 82 us against torch's 5.4).
  if (self.dim() == 1 && other.dim() == 1) {
    at::Tensor o = out;
    at::_ops::dot_out::call(self, other, o);
    return;
  }
  // A batch of matrices times one matrix or vector: the batch folded into the rows of one mm or
  // mv, as torch does ([8, 64, 32] @ [32] through bmm, the vector expanded and copied per batch,
  // ran at 0.38x torch).
  if (self.dim() >= 2 && other.dim() <= 2 && (self.dim() > 2 || other.dim() == 1)) {
    int64_t rows = 1;
    for (int64_t d = 0; d + 1 < self.dim(); ++d) rows *= self.size(d);
    const at::Tensor a2 = self.reshape({rows, self.size(-1)});
    if (other.dim() == 1) {
      at::Tensor o = out.view({rows});
      at::_ops::mv_out::call(a2, other, o);
    } else {
      at::Tensor o = out.view({rows, other.size(-1)});
      at::_ops::mm_out::call(a2, other, o);
    }
    return;
  }
  const at::Tensor a = self.dim() == 1 ? self.unsqueeze(0) : self;
  const at::Tensor b = other.dim() == 1 ? other.unsqueeze(-1) : other;
  const int64_t n = a.size(-2), k = a.size(-1), m = b.size(-1);
  if (a.dim() == 2 && b.dim() == 2) {
    at::Tensor o = out.view({n, m});
    at::_ops::mm_out::call(a, b, o);
    return;
  }
  std::vector<int64_t> batch(out.sizes().begin(), out.sizes().end() - (self.dim() > 1) - (other.dim() > 1));
  int64_t batches = 1;
  for (int64_t s : batch) batches *= s;
  auto with = [&](int64_t r, int64_t c) {
    std::vector<int64_t> s = batch;
    s.push_back(r);
    s.push_back(c);
    return s;
  };
  // Explicit batch counts: a -1 cannot be inferred when a tensor has no elements (k == 0), and
  // bmm then writes the zeros an empty inner dim sums to.
  const at::Tensor a3 = a.expand(with(n, k)).reshape({batches, n, k});
  const at::Tensor b3 = b.expand(with(k, m)).reshape({batches, k, m});
  at::Tensor o = out.view({batches, n, m});
  at::_ops::bmm_out::call(a3, b3, o);
}

}  // namespace structops::linalg
