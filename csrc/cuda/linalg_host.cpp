// CUDA host glue of bmm, matmul and cdist. bmm and matmul are cuBLAS through ATen (at::bmm_out /
// at::mm_out on views of the contiguous out, the CPU impls' arithmetic), like mm_host.cpp's
// default; cuBLAS has no integer GEMM, so integer dtypes raise here with that reason. cdist:
// p = 2 in the matrix-product form when compute_mode asks for it (x1 x2^T on cuBLAS through
// at::baddbmm_out, then linalg.cu adds the row norms), every other case on linalg.cu's tiled
// kernel. Compiled only when the installed torch has CUDA (CMakeLists.txt).
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
  // As matmul_out_cpu: a 1-D operand is a [1, k] row or a [k, 1] column whose unit dim the output
  // does not have; out is contiguous (the meta layout), so unit dims are viewed in and batches flattened.
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

void cdist_out_cuda(const at::Tensor& x1, const at::Tensor& x2, double p, std::optional<int64_t> compute_mode,
                    at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  const c10::cuda::CUDAGuard guard(out.device());
  TORCH_CHECK(p >= 0, "cdist: p must be non-negative, got p=", p);
  TORCH_CHECK(!compute_mode.has_value() || (*compute_mode >= 0 && *compute_mode <= 2),
              "cdist: compute_mode must be None, 0, 1 or 2, got ", *compute_mode);
  if (out.numel() == 0) return;
  const int64_t r1 = x1.size(-2), r2 = x2.size(-2), m = x1.size(-1);
  // Batch dims broadcast to out's: [batches, r, m] contiguous views or copies.
  std::vector<int64_t> batch(out.sizes().begin(), out.sizes().end() - 2);
  int64_t batches = 1;
  for (int64_t s : batch) batches *= s;
  auto flat = [&](const at::Tensor& t, int64_t r) {
    std::vector<int64_t> shape = batch;
    shape.push_back(r);
    shape.push_back(m);
    return t.expand(shape).reshape({batches, r, m}).contiguous();
  };
  const at::Tensor a = flat(x1, r1), b = flat(x2, r2);
  at::Tensor o = out.view({batches, r1, r2});  // out is contiguous: the meta layout
  if (m == 0) {
    o.zero_();
    return;
  }
  CdistLaunch l;
  l.dtype = static_cast<Dtype>(out.scalar_type());
  l.batches = batches, l.r1 = r1, l.r2 = r2, l.m = m;
  l.p = p;
  l.x1 = a.const_data_ptr();
  l.x2 = b.const_data_ptr();
  l.out = o.data_ptr();
  const bool mm_mode = compute_mode.value_or(0) == 1 || (compute_mode.value_or(0) == 0 && (r1 > 25 || r2 > 25));
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
