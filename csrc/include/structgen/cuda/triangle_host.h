// The CUDA host glue of a triangle op (manifest `triangle: lower|upper`; its impl in the generated
// runtime_kernels_cuda_host.cpp is one call of triangle_out): device guard and current stream
// around the shared host side (structgen/triangle_out.h), which hands the torch-free kernel of
// structgen/cuda/triangle.cuh its launch. CUDA torch only (and the emulator's build).
#pragma once

#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>

#include <structgen/triangle_out.h>

namespace structgen::cuda_host {

// The meta function has checked self's rank (at least 2) and given out self's shape and dtype.
inline void triangle_out(const char* op, const at::Tensor& self, int64_t diagonal, const at::Tensor& out,
                         bool lower, TriangleFn triangle_fn) {
  const c10::cuda::CUDAGuard guard(out.device());
  structgen::triangle_out(self, diagonal, out, lower, [&](TriangleLaunch p) {
    p.stream = c10::cuda::getCurrentCUDAStream().stream();
    const char* error = triangle_fn(p);
    TORCH_CHECK(error == nullptr, op, ": CUDA kernel failed for dtype ", out.scalar_type(), ": ", error);
  });
}

}  // namespace structgen::cuda_host
