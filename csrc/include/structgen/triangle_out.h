// The host side that a triangle op's CPU impl (structgen/cpu/triangle.h) and CUDA host glue
// (structgen/cuda/triangle_host.h) share: the input as contiguous [batches, rows, cols], the output
// written in place where it is contiguous and through a contiguous stand-in copied back where it
// is not, described by a TriangleLaunch for the device's own loop.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>

#include <structgen/triangle_launch.h>

namespace structgen {

// The meta function has checked self's rank (at least 2) and given out self's shape and dtype.
// run(const TriangleLaunch&) fills the launch's output (stream left null: the caller's to set).
template <typename Run>
void triangle_out(const at::Tensor& self, int64_t diagonal, const at::Tensor& out, bool lower,
                  const Run& run) {
  if (out.numel() == 0) return;
  const at::Tensor x = self.contiguous();
  const bool direct = out.is_contiguous();
  const at::Tensor result = direct ? out : at::empty(x.sizes(), out.options());
  TriangleLaunch p;
  p.element_size = static_cast<int>(x.element_size());
  p.rows = x.size(-2);
  p.cols = x.size(-1);
  p.batches = x.numel() / (p.rows * p.cols);
  p.diagonal = diagonal;
  p.lower = lower;
  p.in = x.const_data_ptr();
  p.out = result.data_ptr();
  run(p);
  if (!direct) out.copy_(result);
}

}  // namespace structgen
