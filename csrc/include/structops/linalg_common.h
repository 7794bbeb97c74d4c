// Device-independent parts of the linear-algebra impls, shared by the CPU impls (csrc/cpu/) and
// the CUDA host glue (csrc/cuda/*_host.cpp): matmul through ATen's mm/bmm on views, and cdist's
// argument checks and [batches, r, m] operands.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/mm.h>
#include <c10/util/Exception.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace structops::linalg {

// out = self @ other with torch.matmul's 1-D and batch-broadcast cases. A 1-D operand is a [1, k]
// row or a [k, 1] column whose unit dim the output does not have; out is contiguous (the meta
// layout), so unit dims are viewed in and batches flattened.
inline void matmul_by_aten(const at::Tensor& self, const at::Tensor& other, const at::Tensor& out) {
  const at::Tensor a = self.dim() == 1 ? self.unsqueeze(0) : self;
  const at::Tensor b = other.dim() == 1 ? other.unsqueeze(-1) : other;
  const int64_t n = a.size(-2), k = a.size(-1), m = b.size(-1);
  if (a.dim() == 2 && b.dim() == 2) {
    at::Tensor o = out.view({n, m});
    at::mm_out(o, a, b);
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
  at::bmm_out(o, a3, b3);
}

// cdist's operands: x1, x2 with their batch dims broadcast to out's, as contiguous [batches, r, m];
// out viewed as [batches, r1, r2] (contiguous: the meta layout).
struct CdistOperands {
  at::Tensor a, b, o;
  int64_t batches, r1, r2, m;
  bool mm_mode;  // torch's choice of the mm form for p = 2 (compute_mode, or r1 or r2 > 25)
};

// Checks what the rule cannot (p and compute_mode are a float and an int?); nullopt when nothing is
// left to compute: out is empty, or the vectors are (every distance is 0).
inline std::optional<CdistOperands> cdist_operands(const at::Tensor& x1, const at::Tensor& x2, double p,
                                                   std::optional<int64_t> compute_mode, const at::Tensor& out) {
  TORCH_CHECK(p >= 0, "cdist: p must be non-negative, got p=", p);
  TORCH_CHECK(!compute_mode.has_value() || (*compute_mode >= 0 && *compute_mode <= 2),
              "cdist: compute_mode must be None, 0, 1 or 2, got ", *compute_mode);
  if (out.numel() == 0) return std::nullopt;
  const int64_t r1 = x1.size(-2), r2 = x2.size(-2), m = x1.size(-1);
  std::vector<int64_t> batch(out.sizes().begin(), out.sizes().end() - 2);
  int64_t batches = 1;
  for (int64_t s : batch) batches *= s;
  auto flat = [&](const at::Tensor& t, int64_t r) {
    std::vector<int64_t> shape = batch;
    shape.push_back(r);
    shape.push_back(m);
    return t.expand(shape).reshape({batches, r, m}).contiguous();
  };
  if (m == 0) {
    out.zero_();
    return std::nullopt;
  }
  const int64_t mode = compute_mode.value_or(0);
  return CdistOperands{flat(x1, r1), flat(x2, r2), out.view({batches, r1, r2}), batches, r1, r2, m,
                       mode == 1 || (mode == 0 && (r1 > 25 || r2 > 25))};
}

}  // namespace structops::linalg
