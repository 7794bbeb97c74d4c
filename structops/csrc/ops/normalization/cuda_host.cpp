// CUDA host glue of softmax, log_softmax, layer_norm, rms_norm, logsumexp, var, std and batch_norm: the input
// brought to contiguous rows (batch_norm: to a contiguous [N, C, S], running statistics updated in place)
// (softmax over another dim than the last is moved last and back: two extra copies, a
// column kernel would avoid them), then the torch-free kernels of cuda.cu.
// Compiled only when the installed torch has CUDA (CMakeLists.txt).
#include <structgen/cpu/pointwise.h>  // cpu::operand
#include <structgen/cpu/reduce.h>     // cpu::reduced_rows
#include <ops/normalization/launch.h>
#include <ops/reduce/launch.h>  // complex_rows: complex logsumexp
#include <structops/ops/batch_norm.h>
#include <structops/ops/layer_norm.h>
#include <structops/ops/log_softmax_int.h>
#include <structops/ops/rms_norm.h>
#include <structops/ops/logsumexp.h>
#include <structops/ops/softmax_int.h>
#include <structops/ops/std_correction.h>
#include <structops/ops/var_correction.h>

#include <ATen/ops/empty.h>
#include <ATen/ops/sqrt.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/view_as_real.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/SmallVector.h>

#include <algorithm>

#include <limits>
#include <ops/runtime_names.h>

namespace structops::impl {
namespace {

void launch_rows(const char* name, RowLaunch& p, const at::Tensor& like) {
  at::Tensor workspace;
  if (const int64_t bytes = cuda_kernels::row_workspace_bytes(p); bytes > 0) {
    workspace = at::empty({bytes}, like.options().dtype(at::kByte));
    p.workspace = workspace.data_ptr();
  }
  p.stream = c10::cuda::getCurrentCUDAStream().stream();
  const char* error = cuda_kernels::rows(p);
  TORCH_CHECK(error == nullptr, name, ": CUDA kernel failed for dtype ", like.scalar_type(), ": ", error);
}

void softmax_cuda(const char* name, RowOp op, const at::Tensor& self, at::IntArrayRef softmax_dim,
                  const at::Tensor& out) {
  const c10::cuda::CUDAGuard guard(out.device());
  if (out.numel() == 0) return;
  const int64_t dim = softmax_dim.empty() ? 0 : softmax_dim[0];  // a 0-dim self: one row of one
  const bool last = self.dim() == 0 || dim == self.dim() - 1;
  const at::Tensor x =
      last ? cpu::operand(self, out.scalar_type(), out.device()).contiguous()
           : cpu::operand(self, out.scalar_type(), out.device()).movedim(dim, -1).contiguous();
  const at::Tensor result = last ? out : at::empty(x.sizes(), out.options());
  RowLaunch p;
  p.dtype = static_cast<Dtype>(out.scalar_type());
  p.op = op;
  p.n = self.dim() == 0 ? 1 : self.size(dim);
  p.rows = out.numel() / p.n;
  p.in = x.const_data_ptr();
  p.out = result.data_ptr();
  launch_rows(name, p, out);
  if (!last) out.copy_(result.movedim(-1, dim));
}

// One value per output from the reduced dims of `self`, moved last and made contiguous (rows).
void row_reduce_cuda(const char* name, RowOp op, const at::Tensor& self, at::IntArrayRef reduced_dims,
                     const at::Tensor& out, double correction, double empty_value) {
  const c10::cuda::CUDAGuard guard(out.device());
  if (out.numel() == 0) return;
  const auto [x, n] =
      cpu::reduced_rows(cpu::operand(self, out.scalar_type(), out.device()).resolve_conj(), reduced_dims);
  if (n == 0) {  // logsumexp of nothing is -inf, var of nothing NaN (as torch)
    out.fill_(empty_value);
    return;
  }
  if (x.is_complex()) {  // logsumexp: complex exp, sum and log in ops/reduce/cuda_complex.cu
    TORCH_CHECK(op == RowOp::LogSumExp, name, ": no CUDA kernel for complex dtypes");
    ReduceLaunch c;
    c.dtype = static_cast<Dtype>(out.scalar_type());
    c.op = ReduceOp::LogSumExp;
    c.outer = out.numel(), c.n = n;
    c.in = x.const_data_ptr();
    c.out = out.data_ptr();
    c.stream = c10::cuda::getCurrentCUDAStream().stream();
    const char* error = cuda_kernels::complex_rows(c);
    TORCH_CHECK(error == nullptr, name, ": CUDA kernel failed for dtype ", out.scalar_type(), ": ", error);
    return;
  }
  RowLaunch p;
  p.dtype = static_cast<Dtype>(out.scalar_type());
  p.op = op;
  p.rows = out.numel();
  p.n = n;
  p.correction = correction;
  p.in = x.const_data_ptr();
  p.out = out.data_ptr();  // contiguous: the meta layout
  launch_rows(name, p, out);
}

}  // namespace

void logsumexp_out_cuda(const at::Tensor& self, at::IntArrayRef reduced_dims, bool /*keepdim*/,
                        at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  row_reduce_cuda("logsumexp", RowOp::LogSumExp, self, reduced_dims, out, 0,
                  -std::numeric_limits<double>::infinity());
}

namespace {

// var, or std (kStd): a complex input's variance is its real part's plus its imaginary part's
// (|z - mean|^2 sums the parts' squared deviations; torch.var), each a real row reduction of
// view_as_real's parts, added (and rooted) by torch's pointwise ops over the results.
void variance_cuda(const char* name, bool std, const at::Tensor& self, at::IntArrayRef reduced_dims,
                   const std::optional<at::Scalar>& correction, const at::Tensor& out) {
  const double c = correction.has_value() ? correction->toDouble() : 1.0;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (!self.is_complex()) {
    row_reduce_cuda(name, std ? RowOp::Std : RowOp::Var, self, reduced_dims, out, c, nan);
    return;
  }
  const at::Tensor parts = at::empty({out.numel(), 2}, out.options());  // the kept dims, then the part
  const at::Tensor x = at::view_as_real(
      cpu::operand(self, c10::toComplexType(out.scalar_type()), out.device()).resolve_conj());
  row_reduce_cuda(name, RowOp::Var, x, reduced_dims, parts, c, nan);
  const at::Tensor total = parts.sum(-1).view(out.sizes());
  out.copy_(std ? total.sqrt() : total);
}

}  // namespace

void var_out_cuda(const at::Tensor& self, at::IntArrayRef reduced_dims,
                  const std::optional<at::Scalar>& correction, bool /*keepdim*/,
                  at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  variance_cuda("var", false, self, reduced_dims, correction, out);
}

void std_out_cuda(const at::Tensor& self, at::IntArrayRef reduced_dims,
                  const std::optional<at::Scalar>& correction, bool /*keepdim*/,
                  at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  variance_cuda("std", true, self, reduced_dims, correction, out);
}

// dtype: torch casts the input to it before the operation (not the result after it).
void softmax_out_cuda(const at::Tensor& self, at::IntArrayRef softmax_dim,
                      std::optional<at::ScalarType> dtype, at::ScalarType /*compute_dtype*/,
                      const at::Tensor& out) {
  softmax_cuda("softmax", RowOp::Softmax, dtype ? self.to(*dtype) : self, softmax_dim, out);
}

void log_softmax_out_cuda(const at::Tensor& self, at::IntArrayRef softmax_dim,
                          std::optional<at::ScalarType> dtype, at::ScalarType /*compute_dtype*/,
                          const at::Tensor& out) {
  softmax_cuda("log_softmax", RowOp::LogSoftmax, dtype ? self.to(*dtype) : self, softmax_dim, out);
}

void layer_norm_out_cuda(const at::Tensor& input, c10::SymIntArrayRef normalized_shape,
                         const std::optional<at::Tensor>& weight, const std::optional<at::Tensor>& bias,
                         double eps, at::ScalarType /*compute_dtype*/, const at::Tensor& out,
                         const at::Tensor& mean, const at::Tensor& rstd) {
  const c10::cuda::CUDAGuard guard(out.device());
  int64_t n = 1;
  for (const auto& s : normalized_shape) n *= s.expect_int();
  if (mean.numel() == 0) return;
  if (n == 0) {  // nothing to normalise: NaN statistics, as torch
    mean.fill_(std::numeric_limits<double>::quiet_NaN());
    rstd.fill_(std::numeric_limits<double>::quiet_NaN());
    return;
  }
  const at::Tensor x = input.contiguous();
  const at::Tensor w = weight.has_value() ? weight->contiguous() : at::Tensor();
  const at::Tensor b = bias.has_value() ? bias->contiguous() : at::Tensor();
  RowLaunch p;
  p.dtype = static_cast<Dtype>(out.scalar_type());
  p.op = RowOp::LayerNorm;
  p.n = n;
  p.rows = input.numel() / n;
  p.in = x.const_data_ptr();
  p.out = out.data_ptr();
  p.weight = w.defined() ? w.const_data_ptr() : nullptr;
  p.bias = b.defined() ? b.const_data_ptr() : nullptr;
  p.mean = mean.data_ptr();
  p.rstd = rstd.data_ptr();
  p.eps = eps;
  launch_rows("layer_norm", p, out);
}

void rms_norm_out_cuda(const at::Tensor& input, c10::SymIntArrayRef normalized_shape,
                       const std::optional<at::Tensor>& weight, std::optional<double> eps,
                       at::ScalarType /*compute_dtype*/, const at::Tensor& out, const at::Tensor& rstd) {
  const c10::cuda::CUDAGuard guard(out.device());
  int64_t n = 1;
  for (const auto& s : normalized_shape) n *= s.expect_int();
  if (rstd.numel() == 0) return;
  if (n == 0) {  // the mean of no squares: NaN, as torch
    rstd.fill_(std::numeric_limits<double>::quiet_NaN());
    return;
  }
  const at::Tensor x = input.contiguous();
  const at::Tensor w = weight.has_value() ? weight->contiguous() : at::Tensor();
  RowLaunch p;
  p.dtype = static_cast<Dtype>(out.scalar_type());
  p.op = RowOp::RmsNorm;
  p.n = n;
  p.rows = rstd.numel();
  p.in = x.const_data_ptr();
  p.out = out.data_ptr();
  p.weight = w.defined() ? w.const_data_ptr() : nullptr;
  p.rstd = rstd.data_ptr();  // the compute dtype (float for float16/bfloat16)
  // the compute dtype's epsilon by default: float's for float16/bfloat16, as torch
  p.eps = eps.has_value() ? *eps
                          : (out.scalar_type() == at::kDouble ? std::numeric_limits<double>::epsilon()
                                                              : std::numeric_limits<float>::epsilon());
  launch_rows("rms_norm", p, out);
}

void batch_norm_out_cuda(const at::Tensor& input, const std::optional<at::Tensor>& weight,
                         const std::optional<at::Tensor>& bias, const std::optional<at::Tensor>& running_mean,
                         const std::optional<at::Tensor>& running_var, bool training, double momentum,
                         double eps, at::ScalarType /*compute_dtype*/, const at::Tensor& out,
                         const at::Tensor& save_mean, const at::Tensor& save_invstd) {
  const c10::cuda::CUDAGuard guard(out.device());
  const int64_t N = input.size(0), C = input.size(1);
  if (C == 0) return;
  const at::Tensor x =
      input.contiguous();  // channels_last is copied: a [N, S, C] kernel would read it in place
  const auto dense = [](const std::optional<at::Tensor>& t) {
    return t.has_value() ? t->contiguous() : at::Tensor();
  };
  const at::Tensor w = dense(weight), b = dense(bias);
  // The running statistics are the caller's tensors, updated in place (any strides: a contiguous
  // copy is written and copied back).
  const at::Tensor rm = dense(running_mean), rv = dense(running_var);
  BatchNormLaunch p;
  p.dtype = static_cast<Dtype>(input.scalar_type());
  p.N = N, p.C = C, p.S = N * C == 0 ? 1 : input.numel() / (N * C);
  p.training = training;
  p.momentum = momentum;
  p.eps = eps;
  p.in = x.const_data_ptr();
  p.out = out.data_ptr();  // contiguous: the meta layout
  p.weight = w.defined() ? w.const_data_ptr() : nullptr;
  p.bias = b.defined() ? b.const_data_ptr() : nullptr;
  // Evaluation only reads them; training writes them back.
  p.running_mean = rm.defined() ? rm.data_ptr() : nullptr;
  p.running_var = rv.defined() ? rv.data_ptr() : nullptr;
  p.save_mean = training ? save_mean.data_ptr() : nullptr;
  p.save_invstd = training ? save_invstd.data_ptr() : nullptr;
  const at::Tensor workspace =
      at::empty({cuda_kernels::batch_norm_workspace_bytes(p)}, out.options().dtype(at::kByte));
  p.workspace = workspace.data_ptr();
  p.stream = c10::cuda::getCurrentCUDAStream().stream();
  const char* error = cuda_kernels::batch_norm(p);
  TORCH_CHECK(error == nullptr, "batch_norm: CUDA kernel failed for dtype ", input.scalar_type(), ": ",
              error);
  if (training) {
    if (rm.defined() && !rm.is_same(*running_mean)) running_mean->copy_(rm);
    if (rv.defined() && !rv.is_same(*running_var)) running_var->copy_(rv);
  }
}

}  // namespace structops::impl
