// CUDA host glue of mm, addmm, linear, bmm and matmul. mm, addmm and linear: two kernels, as on the
// CPU (gemm.h): cuBLAS through ATen's addmm and structops' own tiled kernel (cuda.cu), both listed
// as kernel variants (structgen::autotune times them per shape bucket). bmm and matmul are cuBLAS
// through ATen (at::bmm_out / at::mm_out on views of the contiguous out, the CPU impls'
// arithmetic); cuBLAS has no integer GEMM, so integer dtypes raise here with that reason.
// Compiled only when the installed torch has CUDA (CMakeLists.txt).
#include <ops/linalg/common.h>
#include <ops/linalg/gemm.h>  // addmm_with, linear_with
#include <ops/linalg/launch.h>
#include <structops/ops/addmm.h>
#include <structops/ops/baddbmm.h>
#include <structops/ops/bmm.h>
#include <structops/ops/linear.h>
#include <structops/ops/matmul.h>
#include <structops/ops/mm.h>

#include <ATen/ops/addmm.h>
#include <ATen/ops/baddbmm.h>
#include <ATen/ops/bmm.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <ops/runtime_names.h>

namespace structops::impl {
namespace {

// c = alpha * a @ b + beta * c; beta == 0: c is not read (NaN in it does not propagate).
void gemm_cublas(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c, const at::Scalar& beta,
                 const at::Scalar& alpha) {
  const c10::cuda::CUDAGuard guard(c.device());
  if (c.numel() == 0) return;
  at::Tensor out = c;
  at::addmm_out(out, c, a, b, beta, alpha);  // beta == 0 ignores c, as documented
}

void gemm_tiled(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c, const at::Scalar& beta,
                const at::Scalar& alpha) {
  const c10::cuda::CUDAGuard guard(c.device());
  if (c.numel() == 0) return;
  const at::Tensor ac = a.contiguous(), bc = b.contiguous();
  const at::Tensor cc = c.is_contiguous() ? c : c.contiguous();
  MmLaunch p;
  p.dtype = static_cast<Dtype>(c.scalar_type());
  p.m = c.size(0), p.n = c.size(1), p.k = a.size(1);
  p.a = ac.const_data_ptr(), p.b = bc.const_data_ptr(), p.c = cc.data_ptr();
  p.alpha = alpha.toDouble(), p.beta = beta.toDouble();
  p.stream = c10::cuda::getCurrentCUDAStream().stream();
  const char* error = cuda_kernels::mm(p);
  TORCH_CHECK(error == nullptr, "mm: CUDA kernel failed for dtype ", c.scalar_type(), ": ", error);
  if (!cc.is_same(c)) c.copy_(cc);
}

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

void baddbmm_out_cuda(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                      const at::Scalar& beta, const at::Scalar& alpha, at::ScalarType /*compute_dtype*/,
                      const at::Tensor& out) {
  const c10::cuda::CUDAGuard guard(out.device());
  check_gemm_dtype("baddbmm", batch1);
  at::Tensor result = out;
  at::baddbmm_out(result, self, batch1, batch2, beta, alpha);  // beta == 0 ignores self
}

void matmul_out_cuda(const at::Tensor& self, const at::Tensor& other, at::ScalarType /*compute_dtype*/,
                     const at::Tensor& out) {
  const c10::cuda::CUDAGuard guard(out.device());
  check_gemm_dtype("matmul", self);
  linalg::matmul_by_aten(self, other, out);  // as matmul_out_cpu: cuBLAS through ATen's mm/bmm
}

void mm_out_cuda_cublas(const at::Tensor& self, const at::Tensor& mat2, at::ScalarType /*compute_dtype*/,
                        const at::Tensor& out) {
  gemm_cublas(self, mat2, out, /*beta=*/0, /*alpha=*/1);
}

void mm_out_cuda_tiled(const at::Tensor& self, const at::Tensor& mat2, at::ScalarType /*compute_dtype*/,
                       const at::Tensor& out) {
  gemm_tiled(self, mat2, out, /*beta=*/0, /*alpha=*/1);
}

void addmm_out_cuda_cublas(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                           const at::Scalar& beta, const at::Scalar& alpha, at::ScalarType /*compute_dtype*/,
                           const at::Tensor& out) {
  cpu::addmm_with(gemm_cublas, self, mat1, mat2, beta, alpha, out);
}

void addmm_out_cuda_tiled(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                          const at::Scalar& beta, const at::Scalar& alpha, at::ScalarType /*compute_dtype*/,
                          const at::Tensor& out) {
  cpu::addmm_with(gemm_tiled, self, mat1, mat2, beta, alpha, out);
}

void linear_out_cuda_cublas(const at::Tensor& input, const at::Tensor& weight,
                            const std::optional<at::Tensor>& bias, at::ScalarType /*compute_dtype*/,
                            const at::Tensor& out) {
  cpu::linear_with(gemm_cublas, input, weight, bias, out);
}

void linear_out_cuda_tiled(const at::Tensor& input, const at::Tensor& weight,
                           const std::optional<at::Tensor>& bias, at::ScalarType /*compute_dtype*/,
                           const at::Tensor& out) {
  cpu::linear_with(gemm_tiled, input, weight, bias, out);
}

}  // namespace structops::impl
