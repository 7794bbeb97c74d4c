// CUDA host glue of max_pool2d/3d_with_indices and avg_pool2d: device guard, current stream, the
// input made contiguous (channels_last is copied: cuda.cu reads [planes, d, h, w]) and, for the
// integer dtypes without a kernel of their own, cast to int64 (max: exact; avg: int64 sums) and
// the result cast back; then cuda.cu. Compiled only when the installed torch has CUDA (CMakeLists.txt).
#include <structgen/cpu/pointwise.h>  // cpu::operand
#include <structops/ops/avg_pool2d.h>
#include <structops/ops/max_pool2d_with_indices.h>
#include <structops/ops/max_pool3d_with_indices.h>
#include <ops/pool/launch.h>

#include <ATen/ops/empty.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <ops/runtime_names.h>

namespace structops::impl {
namespace {

bool has_kernel(at::ScalarType t) {
  return t == at::kFloat || t == at::kDouble || t == at::kHalf || t == at::kBFloat16 || t == at::kLong;
}

int64_t pick(at::IntArrayRef v, size_t i) { return v.size() == 1 ? v[0] : v[i]; }

// The geometry as the CPU impl derives it: the trailing `spatial` dims are pooled, the rest are planes.
PoolLaunch geometry(const at::Tensor& self, const at::Tensor& out, int spatial, at::IntArrayRef kernel,
                    at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation) {
  PoolLaunch p;
  const int64_t nd = self.dim();
  p.planes = 1;
  for (int64_t i = 0; i < nd - spatial; ++i) p.planes *= self.size(i);
  for (int i = 0; i < spatial; ++i) {
    const int k = 3 - spatial + i;
    p.in[k] = self.size(nd - spatial + i);
    p.out[k] = out.size(nd - spatial + i);
    p.kernel[k] = pick(kernel, i);
    p.stride[k] = stride.empty() ? p.kernel[k] : pick(stride, i);
    p.padding[k] = pick(padding, i);
    p.dilation[k] = dilation.empty() ? 1 : pick(dilation, i);
  }
  return p;
}

void run(const char* name, PoolLaunch& p, const at::Tensor& self, const at::Tensor& out,
         const at::Tensor* indices) {
  const c10::cuda::CUDAGuard guard(out.device());
  if (out.numel() == 0) return;
  const at::ScalarType t = has_kernel(out.scalar_type()) ? out.scalar_type() : at::kLong;
  const at::Tensor x = cpu::operand(self, t, out.device()).contiguous();
  // out and indices are contiguous (the meta layout); a stand-in only for a cast result.
  const at::Tensor result =
      t == out.scalar_type() && out.is_contiguous() ? out : at::empty(out.sizes(), out.options().dtype(t));
  const at::Tensor ind = indices == nullptr || indices->is_contiguous()
                             ? (indices ? *indices : at::Tensor())
                             : at::empty(indices->sizes(), indices->options());
  p.dtype = static_cast<Dtype>(t);
  p.self = x.const_data_ptr();
  p.result = result.data_ptr();
  p.indices = ind.defined() ? ind.data_ptr<int64_t>() : nullptr;
  p.stream = c10::cuda::getCurrentCUDAStream().stream();
  const char* error = cuda_kernels::pool(p);
  TORCH_CHECK(error == nullptr, name, ": CUDA kernel failed for dtype ", t, ": ", error);
  if (!result.is_same(out)) out.copy_(result);
  if (indices != nullptr && !ind.is_same(*indices)) indices->copy_(ind);
}

}  // namespace

void max_pool2d_with_indices_out_cuda(const at::Tensor& self, at::IntArrayRef kernel_size,
                                      at::IntArrayRef stride, at::IntArrayRef padding,
                                      at::IntArrayRef dilation, bool /*ceil_mode*/,
                                      at::ScalarType /*compute_dtype*/, const at::Tensor& out,
                                      const at::Tensor& indices) {
  PoolLaunch p = geometry(self, out, 2, kernel_size, stride, padding, dilation);
  p.max = true;
  run("max_pool2d_with_indices", p, self, out, &indices);
}

void max_pool3d_with_indices_out_cuda(const at::Tensor& self, at::IntArrayRef kernel_size,
                                      at::IntArrayRef stride, at::IntArrayRef padding,
                                      at::IntArrayRef dilation, bool /*ceil_mode*/,
                                      at::ScalarType /*compute_dtype*/, const at::Tensor& out,
                                      const at::Tensor& indices) {
  PoolLaunch p = geometry(self, out, 3, kernel_size, stride, padding, dilation);
  p.max = true;
  run("max_pool3d_with_indices", p, self, out, &indices);
}

void avg_pool2d_out_cuda(const at::Tensor& self, at::IntArrayRef kernel_size, at::IntArrayRef stride,
                         at::IntArrayRef padding, bool /*ceil_mode*/, bool count_include_pad,
                         std::optional<int64_t> divisor_override, at::ScalarType /*compute_dtype*/,
                         const at::Tensor& out) {
  TORCH_CHECK(!divisor_override.has_value() || *divisor_override != 0,
              "avg_pool2d: divisor_override must not be zero");
  PoolLaunch p = geometry(self, out, 2, kernel_size, stride, padding, {});
  p.max = false;
  p.count_include_pad = count_include_pad;
  p.divisor = divisor_override.value_or(0);
  run("avg_pool2d", p, self, out, nullptr);
}

}  // namespace structops::impl
