// The CPU impl of a triangle op (manifest `triangle: lower|upper`): each row of each matrix of
// self's two last dims is a kept run and a zeroed run (tril keeps j - i <= diagonal, triu
// j - i >= diagonal), copied and cleared by bytes, so one loop serves every dtype. Included by
// the generated runtime_kernels_cpu.cpp only.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include <structgen/cpu/pointwise.h>  // cpu::kGrainSize
#include <structgen/parallel.h>

namespace structgen::cpu {

// The meta function has checked self's rank (at least 2) and given out self's shape and dtype.
inline void triangle_out(const at::Tensor& self, int64_t diagonal, const at::Tensor& out, bool lower) {
  if (out.numel() == 0) return;
  const at::Tensor x = self.contiguous();
  const bool direct = out.is_contiguous();
  const at::Tensor result = direct ? out : at::empty(x.sizes(), out.options());
  const int64_t rows = x.size(-2), cols = x.size(-1), size = x.element_size();
  const int64_t d = std::clamp<int64_t>(diagonal, -rows - 1, cols + 1);  // no overflow past the matrix
  const int64_t all_rows = x.numel() / cols;
  const auto* in = static_cast<const char*>(x.const_data_ptr());
  auto* o = static_cast<char*>(result.data_ptr());
  parallel_for(0, all_rows, std::max<int64_t>(1, kGrainSize / cols), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t i = r % rows;
      // Row i keeps columns [0, edge) (lower) or [edge, cols) (upper).
      const int64_t edge = std::clamp<int64_t>(lower ? i + d + 1 : i + d, 0, cols);
      const int64_t keep_from = lower ? 0 : edge, keep_to = lower ? edge : cols;
      const char* src = in + r * cols * size;
      char* dst = o + r * cols * size;
      if (dst != src)
        std::memcpy(dst + keep_from * size, src + keep_from * size, (keep_to - keep_from) * size);
      if (lower) {
        std::memset(dst + edge * size, 0, (cols - edge) * size);
      } else {
        std::memset(dst, 0, edge * size);
      }
    }
  });
  if (!direct) out.copy_(result);
}

}  // namespace structgen::cpu
