// CUDA host glue of mse_loss, binary_cross_entropy and cross_entropy_loss: operands broadcast and
// made contiguous in the loss dtype (a copy only where needed, as the CPU impls), then cuda.cu,
// which fuses the element loss with the mean/sum reduction (structops' own kernels: no temporary
// of element losses, no ATen sum). The data checks the CPU impls make (BCE's input range, class
// indices) are made by the kernels, which raise a device flag; reading it back is one
// synchronisation per call, and the errors are the CPU impls' (same text, same exception type).
// Compiled only when the installed torch has CUDA (CMakeLists.txt).
#include <structgen/cuda/host.h>
#include <ops/loss/launch.h>
#include <structops/ops/binary_cross_entropy.h>
#include <structops/ops/cross_entropy_loss.h>
#include <structops/ops/mse_loss.h>

#include <ATen/ExpandUtils.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/full.h>
#include <ATen/ops/zeros.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
#include <vector>
#include <ops/runtime_names.h>

namespace structops::impl {
namespace {

// `t` expanded to `shape` and made contiguous in `dtype` on `device` (a copy only where needed).
at::Tensor operand(const at::Tensor& t, at::IntArrayRef shape, at::ScalarType dtype, at::Device device) {
  const at::Tensor x = t.scalar_type() == dtype && t.device() == device ? t : t.to(device, dtype);
  return x.expand(shape).contiguous();
}

at::Tensor workspace_for(int64_t reduction, const at::Tensor& like) {
  const int64_t bytes = cuda_kernels::loss_workspace_bytes(reduction);
  return bytes > 0 ? at::empty({bytes}, like.options().dtype(at::kByte)) : at::Tensor();
}

void run_loss(const char* name, LossLaunch& p, const at::Tensor& out, const at::Tensor& workspace) {
  p.dtype = static_cast<Dtype>(out.scalar_type());
  p.workspace = workspace.defined() ? workspace.data_ptr() : nullptr;
  p.stream = c10::cuda::getCurrentCUDAStream().stream();
  const char* error = cuda_kernels::loss(p);
  TORCH_CHECK(error == nullptr, name, ": CUDA kernel failed for dtype ", out.scalar_type(), ": ", error);
}

}  // namespace

void mse_loss_out_cuda(const at::Tensor& self, const at::Tensor& target, int64_t reduction,
                       at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  const c10::cuda::CUDAGuard guard(out.device());
  const std::vector<int64_t> shape = at::infer_size(self.sizes(), target.sizes());
  const at::Tensor a = operand(self, shape, out.scalar_type(), out.device());
  const at::Tensor b = operand(target, shape, out.scalar_type(), out.device());
  LossLaunch p;
  p.op = LossOp::Mse;
  p.n = a.numel();
  p.reduction = reduction;
  p.self = a.const_data_ptr();
  p.target = b.const_data_ptr();
  p.out = out.data_ptr();  // contiguous: the meta layout (broadcast shape, or one value)
  run_loss("mse_loss", p, out, workspace_for(reduction, out));
}

void binary_cross_entropy_out_cuda(const at::Tensor& self, const at::Tensor& target,
                                   const std::optional<at::Tensor>& weight, int64_t reduction,
                                   at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  const c10::cuda::CUDAGuard guard(out.device());
  const std::vector<int64_t> shape = at::infer_size(self.sizes(), target.sizes());
  const at::ScalarType dtype = self.scalar_type();
  const at::Tensor x = operand(self, shape, dtype, out.device()),
                   t = operand(target, shape, dtype, out.device());
  const bool weighted = weight.has_value() && weight->defined();
  // expand() raises torch's message when weight does not broadcast to the loss's shape.
  const at::Tensor w = weighted ? operand(*weight, shape, dtype, out.device()) : at::Tensor();
  const at::Tensor bad = at::zeros({1}, out.options().dtype(at::kInt));
  LossLaunch p;
  p.op = LossOp::BinaryCrossEntropy;
  p.n = x.numel();
  p.reduction = reduction;
  p.self = x.const_data_ptr();
  p.target = t.const_data_ptr();
  p.weight = weighted ? w.const_data_ptr() : nullptr;
  p.out = out.data_ptr();
  p.bad = bad.data_ptr<int32_t>();
  p.trap_on_bad = cuda_host::capturing();
  run_loss("binary_cross_entropy", p, out, workspace_for(reduction, out));
  if (p.trap_on_bad) return;  // no host read of the flags while capturing
  const auto flags =
      cuda_host::item<int32_t>(bad, "binary_cross_entropy");  // bit 0: input, bit 1: target (cuda.cu)
  TORCH_CHECK(!(flags & 1), "binary_cross_entropy: all elements of input should be between 0 and 1");
  TORCH_CHECK(!(flags & 2), "binary_cross_entropy: all elements of target should be between 0 and 1");
}

void cross_entropy_loss_out_cuda(const at::Tensor& self, const at::Tensor& target,
                                 const std::optional<at::Tensor>& weight, int64_t reduction,
                                 c10::SymInt ignore_index, double label_smoothing, const at::Tensor& out) {
  const c10::cuda::CUDAGuard guard(out.device());
  const bool batched = self.dim() >= 2;
  CrossEntropyLaunch p;
  p.N = batched ? self.size(0) : 1;
  p.C = self.size(batched ? 1 : 0);
  p.S = batched ? self.numel() / std::max<int64_t>(p.N * p.C, 1) : 1;
  p.probabilities = at::isFloatingType(target.scalar_type());
  p.ignore_index = ignore_index.expect_int();
  p.label_smoothing = label_smoothing;
  p.reduction = reduction;
  const int64_t samples = p.N * p.S;
  // Everything in the result dtype (class probabilities promote: the meta function).
  const at::ScalarType dtype = out.scalar_type();
  const at::Tensor x = self.to(dtype).contiguous();
  const at::Tensor t = p.probabilities ? target.to(dtype).contiguous() : target.contiguous();
  const at::Tensor w = weight.has_value() ? weight->to(dtype).contiguous() : at::Tensor();
  const at::Tensor first_bad = at::full({1}, samples, out.options().dtype(at::kLong));
  const at::Tensor workspace = workspace_for(reduction, out);
  p.dtype = static_cast<Dtype>(dtype);
  p.self = x.const_data_ptr();
  p.target = t.const_data_ptr();
  p.weight = w.defined() ? w.const_data_ptr() : nullptr;
  p.out = out.data_ptr();  // contiguous: [N, *spatial] or one value
  p.first_bad = p.probabilities ? nullptr : first_bad.data_ptr<int64_t>();
  p.trap_on_bad = cuda_host::capturing();
  p.workspace = workspace.defined() ? workspace.data_ptr() : nullptr;
  p.stream = c10::cuda::getCurrentCUDAStream().stream();
  const char* error = cuda_kernels::cross_entropy(p);
  TORCH_CHECK(error == nullptr, "cross_entropy_loss: CUDA kernel failed for dtype ", dtype, ": ", error);
  if (p.probabilities || samples == 0 || p.trap_on_bad) return;
  const auto i = cuda_host::item<int64_t>(first_bad, "cross_entropy_loss");
  if (i < samples) {
    const auto value = cuda_host::item<int64_t>(t.reshape({-1})[i], "cross_entropy_loss");
    TORCH_CHECK_INDEX(false, "cross_entropy_loss: target ", value, " is out of bounds for ", p.C,
                      " classes (at flat position ", i, " of 'target')");
  }
}

}  // namespace structops::impl
