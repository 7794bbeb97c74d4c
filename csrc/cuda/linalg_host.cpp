// CUDA host glue of bmm, matmul and cdist. bmm and matmul are cuBLAS through ATen (at::bmm_out /
// at::mm_out on views of the contiguous out, the CPU impls' arithmetic), like mm_host.cpp's
// default; cuBLAS has no integer GEMM, so integer dtypes raise here with that reason. cdist:
// p = 2 in the matrix-product form when compute_mode asks for it (x1 x2^T on cuBLAS through
// at::baddbmm_out, then linalg.cu adds the row norms), every other case on linalg.cu's tiled
// kernel. Compiled only when the installed torch has CUDA (CMakeLists.txt).
#include <structops/linalg_common.h>
#include <structops/linalg_launch.h>
#include <structops/ops/bmm.h>
#include <structops/ops/cdist.h>
#include <structops/ops/matmul.h>

#include <ATen/ops/baddbmm.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/mm.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <vector>

namespace structops::impl {
namespace {

void check_gemm_dtype(const char* name, const at::Tensor& t) {
  TORCH_CHECK(!at::isIntegralType(t.scalar_type(), /*includeBool=*/true), name,
              ": no CUDA kernel for integer dtypes (cuBLAS has no integer GEMM), got ", t.scalar_type());
}

}  // namespace

void bmm_out_cuda(const at::Tensor& self, const at::Tensor& mat2, at::ScalarType /*compute_dtype*/,
                  const at::Tensor& out) {
  const c10::cuda::CUDAGuard guard(out.device());
  check_gemm_dtype("bmm", self);
  at::Tensor result = out;
  at::bmm_out(result, self, mat2);
}

void matmul_out_cuda(const at::Tensor& self, const at::Tensor& other, at::ScalarType /*compute_dtype*/,
                     const at::Tensor& out) {
  const c10::cuda::CUDAGuard guard(out.device());
  check_gemm_dtype("matmul", self);
  linalg::matmul_by_aten(self, other, out);  // as matmul_out_cpu: cuBLAS through ATen's mm/bmm
}

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
