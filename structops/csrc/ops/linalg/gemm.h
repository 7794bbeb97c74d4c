// Matrix-multiply kernels for the CPU: C = alpha * A @ B + beta * C on 2-D tensors.
//
// Two implementations of the same contract, each callable on its own, so a runtime (issue 7's
// multi-kernel autotune) can time them per shape and keep the faster:
//
//   mm_blocked  our own GEMM: panels of A and B packed (zero-padded) into micro-panels, cache
//               blocking KC (depth) x MC (rows of A per task) x NC (columns of B per task), a
//               register-tiled micro-kernel on GCC vector types compiled for AVX-512 (x86-64-v4),
//               AVX2+FMA (x86-64-v3) and baseline SSE2, picked once at run time; tasks are
//               (MC x NC) tiles of C on structgen::parallel_for. float32/float64 natively,
//               float16/bfloat16 packed to float and accumulated in float over all of K, integer
//               dtypes on a simple row-blocked loop. Complex: not supported (mm_aten).
//   mm_aten     ATen's mm/addmm (MKL/OpenBLAS sgemm/dgemm, torch's own loops otherwise).
//
// `mm` picks one with mm_choose (the documented heuristic below): what cdist runs. The mm, addmm and
// linear ops list both as kernel variants instead, timed per shape bucket (structgen::autotune).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/accumulate.h>

#include <cstdint>
#include <optional>
#include <ops/runtime_names.h>

namespace structops::cpu {

// c: [m, n], a: [m, k], b: [k, n], any strides, all of c's dtype (the meta function checked it).
// beta == 0: c is not read (NaN/inf in it do not propagate), as torch.addmm documents.
// alpha == 0 or k == 0: a and b are not read either; c = beta * c.
void mm_blocked(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c, const at::Scalar& beta,
                const at::Scalar& alpha);
void mm_aten(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c, const at::Scalar& beta,
             const at::Scalar& alpha);

enum class MmKernel { blocked, aten };
const char* mm_kernel_name(MmKernel k);

// The heuristic: complex and bool -> aten (mm_blocked has no kernel); integral -> blocked (ATen's
// integer mm is a plain loop); float16/bfloat16 -> aten (oneDNN's native bf16/fp16 dot products);
// float32/float64: aten for narrow (n < 32), single-row-ish (m < 4) or small (m * n * k <= 2^18)
// products, where its GEMV/small-matrix paths win, blocked for the rest.
// STRUCTOPS_MM_KERNEL=blocked|aten (read once) pins the choice, for benchmarks and tests. Only
// cdist still calls cpu::mm: the mm, addmm and linear ops choose by measurement (`kernels:`).
MmKernel mm_choose(int64_t m, int64_t n, int64_t k, at::ScalarType dtype);

// mm_choose, then that kernel.
void mm(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c, const at::Scalar& beta,
        const at::Scalar& alpha);

// Whether addmm's self takes part: beta as the kernel sees it (an integral result truncates it,
// as torch's integer gemm does) is non-zero.
inline bool addmm_uses_self(const at::Scalar& beta, at::ScalarType dtype) {
  if (at::isIntegralType(dtype, /*includeBool=*/true)) return beta.to<int64_t>() != 0;
  return beta.toComplexDouble() != 0.0;
}

// addmm and linear on any gemm(a, b, c, beta, alpha) with mm's contract above: cpu::mm here, the
// CUDA kernels in cuda_host.cpp. out has the meta's shape, contiguous.
template <typename Gemm>
void addmm_with(Gemm&& gemm, const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                const at::Scalar& beta, const at::Scalar& alpha, const at::Tensor& out) {
  const bool with_self = addmm_uses_self(beta, out.scalar_type());
  if (with_self && !out.is_same(self)) out.copy_(self.expand(out.sizes()));
  gemm(mat1, mat2, out, with_self ? beta : at::Scalar(0), alpha);
}

// [*batch, k] @ [n, k].T as one [rows, k] @ [k, n] product into out viewed as [rows, n]; a 1-D
// weight is [1, k] and out's missing feature dim a size-1 one; the bias ([n], [1] or [], as the meta
// function checked) is broadcast into out first.
template <typename Gemm>
void linear_with(Gemm&& gemm, const at::Tensor& input, const at::Tensor& weight,
                 const std::optional<at::Tensor>& bias, const at::Tensor& out) {
  const int64_t k = input.size(-1);
  const at::Tensor w = weight.dim() == 1 ? weight.unsqueeze(0) : weight;
  const int64_t n = w.size(0);
  // rows counted, not inferred: reshape cannot infer -1 when k == 0 (the product is then zeros).
  const int64_t rows = c10::multiply_integers(input.sizes().begin(), input.sizes().end() - 1);
  const at::Tensor a = input.reshape({rows, k});
  at::Tensor o = out.view({a.size(0), n});
  const bool with_bias = bias.has_value() && bias->defined();
  if (with_bias) out.copy_(*bias);  // copy_ broadcasts
  gemm(a, w.t(), o, with_bias ? 1 : 0, 1);
}

}  // namespace structops::cpu
