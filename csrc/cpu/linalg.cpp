// CPU impls of matmul and bmm. The meta function (from the rule) has checked the shapes and
// dtypes and `out` has exactly the meta's shape, so these only compute. They call ATen's BLAS
// path; our own blocked kernel is a multi-kernel variant for the op-breadth issue.
#include <structops/ops/bmm.h>
#include <structops/ops/matmul.h>

#include <ATen/ops/bmm.h>
#include <ATen/ops/matmul.h>

namespace structops::impl {

void matmul_out_cpu(const at::Tensor& self, const at::Tensor& other, at::ScalarType /*compute_dtype*/,
                    const at::Tensor& out) {
  at::Tensor result = out;  // at::matmul_out takes a non-const reference
  at::matmul_out(result, self, other);
}

void bmm_out_cpu(const at::Tensor& self, const at::Tensor& mat2, at::ScalarType /*compute_dtype*/,
                 const at::Tensor& out) {
  at::Tensor result = out;
  at::bmm_out(result, self, mat2);
}

}  // namespace structops::impl
