// CPU impls of the linear-algebra ops. The meta function (from the rule) has checked the shapes
// and dtypes and `out` has exactly the meta's shape, so these only compute. mm, addmm and linear
// run on structops::cpu::mm (our blocked GEMM or ATen's BLAS, structops/cpu_mm.h); matmul and bmm
// call ATen's mm/bmm.
#include <structops/cpu_mm.h>
#include <structops/ops/addmm.h>
#include <structops/ops/bmm.h>
#include <structops/ops/linear.h>
#include <structops/ops/matmul.h>
#include <structops/ops/mm.h>

#include <ATen/ops/bmm.h>
#include <ATen/ops/mm.h>

#include <vector>

namespace structops::impl {

void matmul_out_cpu(const at::Tensor& self, const at::Tensor& other, at::ScalarType /*compute_dtype*/,
                    const at::Tensor& out) {
  // A 1-D operand is a [1, k] row or a [k, 1] column whose unit dim the output does not have;
  // out is contiguous (the meta layout), so unit dims can be viewed in and batches flattened.
  const at::Tensor a = self.dim() == 1 ? self.unsqueeze(0) : self;
  const at::Tensor b = other.dim() == 1 ? other.unsqueeze(-1) : other;
  const int64_t n = a.size(-2), k = a.size(-1), m = b.size(-1);
  if (a.dim() == 2 && b.dim() == 2) {
    at::Tensor o = out.view({n, m});
    at::mm_out(o, a, b);
    return;
  }
  std::vector<int64_t> batch(out.sizes().begin(), out.sizes().end() - (self.dim() > 1) - (other.dim() > 1));
  auto with = [&](int64_t r, int64_t c) {
    std::vector<int64_t> s = batch;
    s.push_back(r);
    s.push_back(c);
    return s;
  };
  const at::Tensor a3 = a.expand(with(n, k)).reshape({-1, n, k});
  const at::Tensor b3 = b.expand(with(k, m)).reshape({-1, k, m});
  at::Tensor o = out.view({-1, n, m});
  at::bmm_out(o, a3, b3);
}

void bmm_out_cpu(const at::Tensor& self, const at::Tensor& mat2, at::ScalarType /*compute_dtype*/,
                 const at::Tensor& out) {
  at::Tensor result = out;
  at::bmm_out(result, self, mat2);
}

// mm's CPU kernel variants (the manifest's `kernels:`; structops::autotune times them per shape
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

void addmm_out_cpu_aten(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2, const at::Scalar& beta,
                        const at::Scalar& alpha, at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  cpu::addmm_with(cpu::mm_aten, self, mat1, mat2, beta, alpha, out);
}

void linear_out_cpu_blocked(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                            at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  cpu::linear_with(cpu::mm_blocked, input, weight, bias, out);
}

void linear_out_cpu_aten(const at::Tensor& input, const at::Tensor& weight, const std::optional<at::Tensor>& bias,
                         at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  cpu::linear_with(cpu::mm_aten, input, weight, bias, out);
}

}  // namespace structops::impl
