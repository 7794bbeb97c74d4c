// CUDA host glue of cdist: p = 2 in the matrix-product form when compute_mode asks for it
// (x1 x2^T on cuBLAS through at::baddbmm_out, then cuda.cu adds the row norms), every other case
// on cuda.cu's tiled kernel. Compiled only when the installed torch has CUDA (CMakeLists.txt).
#include <ops/cdist/common.h>
#include <ops/cdist/launch.h>
#include <structops/ops/cdist.h>

#include <ATen/ops/baddbmm.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <ops/runtime_names.h>

namespace structops::impl {

void cdist_out_cuda(const at::Tensor& x1, const at::Tensor& x2, double p, std::optional<int64_t> compute_mode,
                    at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  const c10::cuda::CUDAGuard guard(out.device());
  const auto operands = linalg::cdist_operands(x1, x2, p, compute_mode, out);
  if (!operands) return;
  auto [a, b, o, batches, r1, r2, m, mm_mode] = *operands;
  CdistLaunch l;
  l.dtype = static_cast<Dtype>(out.scalar_type());
  l.batches = batches, l.r1 = r1, l.r2 = r2, l.m = m;
  l.p = p;
  l.x1 = a.const_data_ptr();
  l.x2 = b.const_data_ptr();
  l.out = o.data_ptr();
  const char* error = nullptr;
  at::Tensor workspace;
  if (p == 2 && mm_mode) {
    at::baddbmm_out(o, o, a, b.transpose(1, 2), /*beta=*/0, /*alpha=*/-2);  // -2 x1 x2^T; beta 0 ignores o
    workspace = at::empty({cuda_kernels::cdist_workspace_bytes(l)}, out.options().dtype(at::kByte));
    l.workspace = workspace.data_ptr();
    l.stream = c10::cuda::getCurrentCUDAStream().stream();
    error = cuda_kernels::cdist_mm_finish(l);
  } else {
    l.stream = c10::cuda::getCurrentCUDAStream().stream();
    error = cuda_kernels::cdist_direct(l);
  }
  TORCH_CHECK(error == nullptr, "cdist: CUDA kernel failed for dtype ", out.scalar_type(), ": ", error);
}

}  // namespace structops::impl
