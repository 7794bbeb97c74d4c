// The CUDA host glue of a scan op (manifest `scan: true`; its impl in the generated
// runtime_kernels_cuda_host.cpp is one call of scan_out): device guard, current stream, the input cast to
// the result dtype (int64 for the integer and bool results without a kernel of their own: exact,
// and wrapping like their own arithmetic once cast back) and laid out as [outer, n, inner] for the
// torch-free kernels of structgen/cuda/scan.cuh. CUDA torch only (and the emulator's build).
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/view_as_real.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/Exception.h>

#include <structgen/cpu/pointwise.h>  // cpu::operand
#include <structgen/scan_launch.h>

namespace structgen::cuda_host {

// complex_pairs: the combine is a sum, so a complex scan is two real ones (the real view
// [..., 2] scans each part along the same dim); other combines have no complex kernel.
inline void scan_out(const char* op, const at::Tensor& self, at::IntArrayRef scan_dim, const at::Tensor& out,
                     ScanPlanFn plan_fn, ScanFn scan_fn, bool complex_pairs) {
  const c10::cuda::CUDAGuard guard(out.device());
  if (out.numel() == 0) return;
  if (self.dim() == 0) {  // one element, its own result: copied, as torch (0 + -0.0 would be +0.0)
    out.copy_(self);
    return;
  }
  const bool complex = at::isComplexType(out.scalar_type());
  TORCH_CHECK_NOT_IMPLEMENTED(!complex || complex_pairs, op, ": complex inputs have no CUDA kernel yet (got ",
                              out.scalar_type(), "); scan them on the CPU");
  const at::ScalarType ot = out.scalar_type();
  const bool has_kernel =
      ot == at::kFloat || ot == at::kDouble || ot == at::kHalf || ot == at::kBFloat16 || ot == at::kLong;
  const at::ScalarType t = complex || has_kernel ? ot : at::kLong;
  at::Tensor x = cpu::operand(self, t, out.device()).contiguous();
  const int64_t dim = scan_dim.empty() ? 0 : scan_dim[0];
  const int64_t n = x.size(dim);
  int64_t inner = complex ? 2 : 1;
  for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
  if (complex) x = at::view_as_real(x);
  ScanLaunch p;
  p.outer = x.numel() / (n * inner);
  p.n = n;
  p.inner = inner;
  // Too few columns for long column walks: the scanned dim is moved last (two copies) and rows
  // are scanned in parallel tiles.
  const bool moved = inner > 1 && !plan_fn(p).columns_in_place;
  if (moved) {
    x = x.movedim(dim, -1).contiguous();
    p.outer *= inner;
    p.inner = 1;
  }
  // The kernel writes a contiguous tensor of the kernel's dtype: out itself (its real view for
  // complex) when out is contiguous (the meta layout).
  const at::ScalarType kernel_t = complex ? c10::toRealValueType(t) : t;
  const bool direct = !moved && t == ot && out.is_contiguous();
  const at::Tensor written = complex ? at::view_as_real(out) : out;
  const at::Tensor result = direct ? written : at::empty(x.sizes(), out.options().dtype(kernel_t));
  p.dtype = static_cast<Dtype>(kernel_t);
  p.in = x.const_data_ptr();
  p.out = result.data_ptr();
  at::Tensor workspace;
  if (const int64_t bytes = plan_fn(p).workspace_bytes; bytes > 0) {
    workspace = at::empty({bytes}, out.options().dtype(at::kByte));
    p.workspace = workspace.data_ptr();
  }
  p.stream = c10::cuda::getCurrentCUDAStream().stream();
  const char* error = scan_fn(p);
  TORCH_CHECK(error == nullptr, op, ": CUDA kernel failed for dtype ", t, ": ", error);
  if (!direct) written.copy_(moved ? result.movedim(-1, dim) : result);
}

}  // namespace structgen::cuda_host
