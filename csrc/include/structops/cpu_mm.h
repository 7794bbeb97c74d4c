// Matrix-multiply kernels for the CPU: C = alpha * A @ B + beta * C on 2-D tensors.
//
// Two implementations of the same contract, each callable on its own, so a runtime (issue 7's
// multi-kernel autotune) can time them per shape and keep the faster:
//
//   mm_blocked  our own GEMM: panels of A and B packed (zero-padded) into micro-panels, cache
//               blocking KC (depth) x MC (rows of A per task) x NC (columns of B per task), a
//               register-tiled micro-kernel on GCC vector types compiled for AVX-512 (x86-64-v4),
//               AVX2+FMA (x86-64-v3) and baseline SSE2, picked once at run time; tasks are
//               (MC x NC) tiles of C on structops::parallel_for. float32/float64 natively,
//               float16/bfloat16 packed to float and accumulated in float over all of K, integer
//               dtypes on a simple row-blocked loop. Complex: not supported (mm_aten).
//   mm_aten     ATen's mm/addmm (MKL/OpenBLAS sgemm/dgemm, torch's own loops otherwise).
//
// `mm` picks one with mm_choose (the documented heuristic below) until autotune replaces it.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

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
// STRUCTOPS_MM_KERNEL=blocked|aten (read once) pins the choice, for benchmarks and tests.
MmKernel mm_choose(int64_t m, int64_t n, int64_t k, at::ScalarType dtype);

// mm_choose, then that kernel.
void mm(const at::Tensor& a, const at::Tensor& b, const at::Tensor& c, const at::Scalar& beta,
        const at::Scalar& alpha);

}  // namespace structops::cpu
