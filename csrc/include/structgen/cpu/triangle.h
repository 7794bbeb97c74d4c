// The CPU impl of a triangle op (manifest `triangle: lower|upper`): each row of each matrix of
// self's two last dims is a kept run and a zeroed run (tril keeps j - i <= diagonal, triu
// j - i >= diagonal), copied and cleared by bytes, so one loop serves every dtype. Included by
// the generated runtime_kernels_cpu.cpp only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include <structgen/cpu/pointwise.h>  // cpu::kGrainSize
#include <structgen/parallel.h>
#include <structgen/triangle_out.h>

namespace structgen::cpu {

// The rows of a launch (structgen/triangle_launch.h), kept and cleared.
inline void run_triangle(const TriangleLaunch& p) {
  const int64_t rows = p.rows, cols = p.cols, size = p.element_size;
  const int64_t d = std::clamp<int64_t>(p.diagonal, -rows - 1, cols + 1);  // no overflow past the matrix
  const auto* in = static_cast<const char*>(p.in);
  auto* o = static_cast<char*>(p.out);
  parallel_for(0, p.batches * rows, std::max<int64_t>(1, kGrainSize / cols), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t i = r % rows;
      // Row i keeps columns [0, edge) (lower) or [edge, cols) (upper).
      const int64_t edge = std::clamp<int64_t>(p.lower ? i + d + 1 : i + d, 0, cols);
      const int64_t keep_from = p.lower ? 0 : edge, keep_to = p.lower ? edge : cols;
      const char* src = in + r * cols * size;
      char* dst = o + r * cols * size;
      if (dst != src)
        std::memcpy(dst + keep_from * size, src + keep_from * size, (keep_to - keep_from) * size);
      if (p.lower) {
        std::memset(dst + edge * size, 0, (cols - edge) * size);
      } else {
        std::memset(dst, 0, edge * size);
      }
    }
  });
}

inline void triangle_out(const at::Tensor& self, int64_t diagonal, const at::Tensor& out, bool lower) {
  structgen::triangle_out(self, diagonal, out, lower, run_triangle);
}

}  // namespace structgen::cpu
