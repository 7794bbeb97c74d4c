// CUDA host glue of cumsum: device guard, current stream, the input cast to the result dtype
// (int64 for the integer and bool results without a kernel of their own: exact, and wrapping like
// their own adds once cast back) and laid out as [outer, n, inner] for the torch-free kernels of
// cuda.cu. Compiled only when the installed torch has CUDA (CMakeLists.txt).
#include <structgen/cpu/pointwise.h>  // cpu::operand
#include <structops/ops/cumsum.h>
#include <ops/scan/launch.h>

#include <ATen/ops/empty.h>
#include <ATen/ops/view_as_real.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <ops/runtime_names.h>

namespace structops::impl {
namespace {

bool has_kernel(at::ScalarType t) {
  return t == at::kFloat || t == at::kDouble || t == at::kHalf || t == at::kBFloat16 || t == at::kLong;
}

}  // namespace

void cumsum_out_cuda(const at::Tensor& self, at::IntArrayRef scan_dim,
                     std::optional<at::ScalarType> /*dtype*/, at::ScalarType /*compute_dtype*/,
                     const at::Tensor& out) {
  const c10::cuda::CUDAGuard guard(out.device());
  if (out.numel() == 0) return;
  if (self.dim() == 0) {  // one element, its own sum: copied, as torch (0 + -0.0 would be +0.0)
    out.copy_(self);
    return;
  }
  // A complex scan is two real ones: the real view [..., 2] scans each part along the same dim.
  const bool complex = at::isComplexType(out.scalar_type());
  const at::ScalarType t = complex || has_kernel(out.scalar_type()) ? out.scalar_type() : at::kLong;
  at::Tensor x = cpu::operand(self, t, out.device()).contiguous();
  const int64_t dim = scan_dim.empty() || x.dim() == 0 ? 0 : scan_dim[0];  // a 0-dim self scans one element
  const int64_t n = x.dim() == 0 ? 1 : x.size(dim);
  int64_t inner = complex ? 2 : 1;
  for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
  if (complex) x = at::view_as_real(x.dim() == 0 ? x.reshape({1}) : x);
  ScanLaunch p;
  p.outer = x.numel() / (n * inner);
  p.n = n;
  p.inner = inner;
  // Too few columns for long column walks: the scanned dim is moved last (two copies) and rows
  // are scanned in parallel tiles (cuda.cu decides).
  const bool moved = inner > 1 && !cuda_kernels::cumsum_columns_in_place(p);
  if (moved) {
    x = x.movedim(dim, -1).contiguous();
    p.outer *= inner;
    p.inner = 1;
  }
  // The kernel writes a contiguous tensor of the kernel's dtype: out itself (its real view for
  // complex) when out is contiguous (the meta layout).
  const at::ScalarType kernel_t = complex ? c10::toRealValueType(t) : t;
  const bool direct = !moved && t == out.scalar_type() && out.is_contiguous();
  const at::Tensor written = complex ? at::view_as_real(out.dim() == 0 ? out.view({1}) : out) : out;
  const at::Tensor result = direct ? written : at::empty(x.sizes(), out.options().dtype(kernel_t));
  p.dtype = static_cast<Dtype>(kernel_t);
  p.in = x.const_data_ptr();
  p.out = result.data_ptr();
  at::Tensor workspace;
  if (const int64_t bytes = cuda_kernels::cumsum_workspace_bytes(p); bytes > 0) {
    workspace = at::empty({bytes}, out.options().dtype(at::kByte));
    p.workspace = workspace.data_ptr();
  }
  p.stream = c10::cuda::getCurrentCUDAStream().stream();
  const char* error = cuda_kernels::cumsum(p);
  TORCH_CHECK(error == nullptr, "cumsum: CUDA kernel failed for dtype ", t, ": ", error);
  if (!direct) written.copy_(moved ? result.movedim(-1, dim) : result);
}

}  // namespace structops::impl
