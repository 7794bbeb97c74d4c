// The CUDA host glue of a triangle op (manifest `triangle: lower|upper`; its impl in the generated
// runtime_kernels_cuda_host.cpp is one call of triangle_out): device guard, current stream, the
// input laid out as contiguous [batches, rows, cols] for the torch-free kernel of
// structgen/cuda/triangle.cuh. CUDA torch only (and the emulator's build).
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>

#include <structgen/triangle_launch.h>

namespace structgen::cuda_host {

// The meta function has checked self's rank (at least 2) and given out self's shape and dtype.
inline void triangle_out(const char* op, const at::Tensor& self, int64_t diagonal, const at::Tensor& out,
                         bool lower, TriangleFn triangle_fn) {
  const c10::cuda::CUDAGuard guard(out.device());
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
  p.stream = c10::cuda::getCurrentCUDAStream().stream();
  const char* error = triangle_fn(p);
  TORCH_CHECK(error == nullptr, op, ": CUDA kernel failed for dtype ", out.scalar_type(), ": ", error);
  if (!direct) out.copy_(result);
}

}  // namespace structgen::cuda_host
