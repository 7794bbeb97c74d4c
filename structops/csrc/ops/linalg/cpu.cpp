// CPU impls of the linear-algebra ops. The meta function (from the rule) has checked the shapes
// and dtypes and `out` has exactly the meta's shape, so these only compute. mm, addmm and linear
// run on structops::cpu::mm (our blocked GEMM or ATen's BLAS, ops/linalg/gemm.h); matmul, bmm
// and baddbmm call ATen's mm/bmm/baddbmm.
#include <ops/linalg/gemm.h>
#include <ops/linalg/common.h>
#include <structops/ops/addmm.h>
#include <structops/ops/baddbmm.h>
#include <structops/ops/bmm.h>
#include <structops/ops/linear.h>
#include <structops/ops/matmul.h>
#include <structops/ops/mm.h>

#include <ATen/ops/baddbmm_ops.h>
#include <ATen/ops/bmm_ops.h>
#include <ops/runtime_names.h>

namespace structops::impl {

void matmul_out_cpu(const at::Tensor& self, const at::Tensor& other, at::ScalarType /*compute_dtype*/,
                    const at::Tensor& out) {
  linalg::matmul_by_aten(self, other, out);
}

void bmm_out_cpu(const at::Tensor& self, const at::Tensor& mat2, at::ScalarType /*compute_dtype*/,
                 const at::Tensor& out) {
  at::Tensor result = out;
  at::_ops::bmm_out::call(self, mat2, result);
}

void baddbmm_out_cpu(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                     const at::Scalar& beta, const at::Scalar& alpha, at::ScalarType /*compute_dtype*/,
                     const at::Tensor& out) {
  at::Tensor result = out;
  at::_ops::baddbmm_out::call(self, batch1, batch2, beta, alpha, result);  // beta == 0 ignores self
}

// mm's CPU kernel variants (the manifest's `kernels:`; structgen::autotune times them per shape
// bucket). cdist still calls cpu::mm, whose mm_choose heuristic picks.
void mm_out_cpu_blocked(const at::Tensor& self, const at::Tensor& mat2, at::ScalarType /*compute_dtype*/,
                        const at::Tensor& out) {
  cpu::mm_blocked(self, mat2, out, /*beta=*/0, /*alpha=*/1);
}

void mm_out_cpu_aten(const at::Tensor& self, const at::Tensor& mat2, at::ScalarType /*compute_dtype*/,
                     const at::Tensor& out) {
  cpu::mm_aten(self, mat2, out, /*beta=*/0, /*alpha=*/1);
}

// addmm's and linear's variants: the same two GEMMs as mm's.
void addmm_out_cpu_blocked(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                           const at::Scalar& beta, const at::Scalar& alpha, at::ScalarType /*compute_dtype*/,
                           const at::Tensor& out) {
  cpu::addmm_with(cpu::mm_blocked, self, mat1, mat2, beta, alpha, out);
}

void addmm_out_cpu_aten(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                        const at::Scalar& beta, const at::Scalar& alpha, at::ScalarType /*compute_dtype*/,
                        const at::Tensor& out) {
  cpu::addmm_with(cpu::mm_aten, self, mat1, mat2, beta, alpha, out);
}

void linear_out_cpu_blocked(const at::Tensor& input, const at::Tensor& weight,
                            const std::optional<at::Tensor>& bias, at::ScalarType /*compute_dtype*/,
                            const at::Tensor& out) {
  cpu::linear_with(cpu::mm_blocked, input, weight, bias, out);
}

void linear_out_cpu_aten(const at::Tensor& input, const at::Tensor& weight,
                         const std::optional<at::Tensor>& bias, at::ScalarType /*compute_dtype*/,
                         const at::Tensor& out) {
  cpu::linear_with(cpu::mm_aten, input, weight, bias, out);
}

}  // namespace structops::impl
