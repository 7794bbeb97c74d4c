// What the CPU impl (cpu.cpp) and the CUDA host glue (cuda_host.cpp) of cdist share: the argument
// checks and the [batches, r, m] operands.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>

#include <cstdint>
#include <optional>
#include <vector>
#include <ops/runtime_names.h>

namespace structops::linalg {

// cdist's operands: x1, x2 with their batch dims broadcast to out's, as contiguous [batches, r, m];
// out viewed as [batches, r1, r2] (contiguous: the meta layout).
struct CdistOperands {
  at::Tensor a, b, o;
  int64_t batches, r1, r2, m;
  bool mm_mode;  // torch's choice of the mm form for p = 2 (compute_mode, or r1 or r2 > 25)
};

// Checks what the rule cannot (compute_mode is an int?); nullopt when nothing is left to compute:
// out is empty, or the vectors are (every distance is 0).
inline std::optional<CdistOperands> cdist_operands(const at::Tensor& x1, const at::Tensor& x2, double p,
                                                   std::optional<int64_t> compute_mode,
                                                   const at::Tensor& out) {
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
  const bool mm_mode = mode == 1 || (mode == 0 && (r1 > 25 || r2 > 25));
  at::Tensor batched_out = out.view({batches, r1, r2});
  return CdistOperands{flat(x1, r1), flat(x2, r2), batched_out, batches, r1, r2, m, mm_mode};
}

}  // namespace structops::linalg
