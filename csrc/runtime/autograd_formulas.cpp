// The backward helpers that derivative formulas of the non-pointwise ops call (structgen/autograd.h,
// codegen/autograd/functions.py). Each is written with differentiable ATen ops, so a gradient
// computed with grad mode on (create_graph=True) is differentiable again; where ATen has the
// backward kernel of the same op (layer_norm, batch_norm, pooling, losses), it is called.
#include <structgen/autograd.h>
#include <structgen/rules.h>

#include "autograd_detail.h"

#include <ATen/ExpandUtils.h>
#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/abs.h>
#include <ATen/ops/avg_pool2d_backward.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/full.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/scatter_reduce.h>
#include <ATen/ops/searchsorted.h>
#include <ATen/ops/sgn.h>
#include <ATen/ops/binary_cross_entropy_backward.h>
#include <ATen/ops/bmm.h>
#include <ATen/ops/_log_softmax_backward_data.h>
#include <ATen/ops/cat.h>
#include <ATen/ops/clamp_min.h>
#include <ATen/ops/cumprod.h>
#include <ATen/ops/cumsum.h>
#include <ATen/ops/embedding_backward.h>
#include <ATen/ops/eq.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/flip.h>
#include <ATen/ops/index_add.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/log.h>
#include <ATen/ops/log_softmax.h>
#include <ATen/ops/masked_scatter.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/max_pool2d_with_indices_backward.h>
#include <ATen/ops/max_pool3d_with_indices_backward.h>
#include <ATen/ops/mean.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/mse_loss_backward.h>
#include <ATen/ops/nll_loss_backward.h>
#include <ATen/ops/native_batch_norm_backward.h>
#include <ATen/ops/native_layer_norm_backward.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/pow.h>
#include <ATen/ops/put.h>
#include <ATen/ops/scatter_add.h>
#include <ATen/ops/sign.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/real.h>
#include <ATen/ops/rsqrt.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/gather.h>
#include <ATen/ops/isinf.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>

#include <algorithm>
#include <limits>

namespace structgen::autograd {
using namespace detail;  // NOLINT: this file's own helpers

namespace detail {

std::vector<int64_t> dims_of(int64_t rank, at::OptionalIntArrayRef dim) {
  return rules::reduced_dims("backward", "self", rank, dim);
}

at::Tensor as_dtype(const at::Tensor& t, at::ScalarType dtype) {
  return t.scalar_type() == dtype ? t : t.to(dtype);
}

at::Tensor zeros_of(const TensorMeta& like, const at::Tensor& options_from) {
  return at::zeros_symint(like.sizes, options_from.options().dtype(like.dtype));
}

// The reduced dims kept as size 1 (a reduction's output seen with keepdim=True).
at::Tensor keep_dims(const at::Tensor& t, int64_t rank, at::OptionalIntArrayRef dim, bool keepdim) {
  if (keepdim || rank == 0) return t;
  at::Tensor out = t;
  for (int64_t d : dims_of(rank, dim)) out = out.unsqueeze(d);  // ascending: each lands in place
  return out;
}

c10::SymInt reduced_count(const TensorMeta& like, at::OptionalIntArrayRef dim) {
  c10::SymInt n = 1;
  if (like.sizes.empty()) return n;
  for (int64_t d : dims_of(static_cast<int64_t>(like.sizes.size()), dim)) n = n * like.sizes[d];
  return n;
}

}  // namespace detail

// -- reductions ----------------------------------------------------------------------------------

at::Tensor unreduce(const at::Tensor& grad, const TensorMeta& self, at::OptionalIntArrayRef dim,
                    bool keepdim) {
  const auto rank = static_cast<int64_t>(self.sizes.size());
  return as_dtype(keep_dims(grad, rank, dim, keepdim).expand_symint(self.sizes), self.dtype);
}

at::Tensor mean_backward(const at::Tensor& grad, const TensorMeta& self, at::OptionalIntArrayRef dim,
                         bool keepdim) {
  // A Scalar of the SymInt: under torch.compile(dynamic=True) the count stays symbolic.
  return unreduce(grad, self, dim, keepdim) / c10::Scalar(reduced_count(self, dim));
}

at::Tensor extremum_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& result,
                             at::OptionalIntArrayRef dim, bool keepdim) {
  // torch.amax/amin: the gradient is shared evenly among the elements equal to the result.
  const int64_t rank = self.dim();
  const at::Tensor hit = at::eq(self, keep_dims(result, rank, dim, keepdim)).to(grad.scalar_type());
  const std::vector<int64_t> dims = dims_of(rank, dim);
  const at::Tensor count = rank == 0 ? hit : at::sum(hit, dims, /*keepdim=*/true);
  return keep_dims(grad, rank, dim, keepdim) * hit / count;
}

at::Tensor prod_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& result,
                         at::OptionalIntArrayRef dim, bool keepdim) {
  // Each element's gradient is the product of the others in its slice: the reduced dims moved
  // last and flattened, an exclusive cumulative product from each side (exact with zeros).
  const int64_t rank = self.dim();
  if (rank == 0) return as_dtype(grad, self.scalar_type());
  const std::vector<int64_t> dims = dims_of(rank, dim);
  std::vector<int64_t> order;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) order.push_back(d);
  }
  const size_t kept = order.size();
  order.insert(order.end(), dims.begin(), dims.end());
  const at::Tensor x = self.to(result.scalar_type()).permute(order);
  std::vector<c10::SymInt> flat(x.sym_sizes().begin(), x.sym_sizes().begin() + kept);
  flat.push_back(-1);
  const at::Tensor rows = x.reshape_symint(flat);
  const at::Tensor one = at::ones_symint({1}, rows.options()).expand_symint([&] {
    auto s = rows.sym_sizes().vec();
    s.back() = 1;
    return s;
  }());
  const int64_t last = rows.dim() - 1;
  const auto n = rows.sym_size(last);
  const at::Tensor left = at::cumprod(at::cat({one, rows.narrow_symint(last, 0, n - 1)}, last), last);
  const at::Tensor right = at::flip(
      at::cumprod(at::flip(at::cat({rows.narrow_symint(last, 1, n - 1), one}, last), {last}), last), {last});
  const at::Tensor g = keep_dims(grad, rank, dim, keepdim).permute(order).reshape_symint([&] {
    auto s = std::vector<c10::SymInt>(flat.begin(), flat.end() - 1);
    s.push_back(1);
    return s;
  }());
  const at::Tensor others = left * right;  // complex: torch's convention takes its conjugate
  const at::Tensor per_row =
      (g * (others.is_complex() ? others.conj() : others)).reshape_symint(x.sym_sizes());
  std::vector<int64_t> inverse(rank);
  for (int64_t i = 0; i < rank; ++i) inverse[order[i]] = i;
  return as_dtype(per_row.permute(inverse), self.scalar_type());
}

namespace detail {
// 2 / max(N - correction, 0), N the count var reduces over: a 0-dim double tensor of the SymInt,
// so that N stays symbolic when compiled.
at::Tensor var_scale(const at::Tensor& self, const std::vector<int64_t>& dims,
                     const std::optional<at::Scalar>& correction) {
  const double c = correction.has_value() ? correction->toDouble() : 1.0;
  c10::SymInt n = 1;
  for (int64_t d : dims) n = n * self.sym_size(d);
  const at::Tensor count = at::scalar_tensor(c10::Scalar(n), self.options().dtype(at::kDouble));
  return 2.0 / at::clamp_min(count - c, 0);
}

at::Tensor centered(const at::Tensor& self, const std::vector<int64_t>& dims) {
  return self.dim() == 0 ? self - self : self - at::mean(self, dims, /*keepdim=*/true);
}
}  // namespace detail

at::Tensor var_backward(const at::Tensor& grad, const at::Tensor& self, at::OptionalIntArrayRef dim,
                        const std::optional<at::Scalar>& correction, bool keepdim) {
  const int64_t rank = self.dim();
  const std::vector<int64_t> dims = dims_of(rank, dim);
  return keep_dims(grad, rank, dim, keepdim) * centered(self, dims) * var_scale(self, dims, correction);
}

at::Tensor std_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& result,
                        at::OptionalIntArrayRef dim, const std::optional<at::Scalar>& correction,
                        bool keepdim) {
  // d std = d var / (2 std); where std is 0, the gradient is 0 (as torch's).
  // The division by a safe denominator: where's other branch must not be inf (its gradient
  // would be 0 * inf = NaN in double backward).
  const at::Tensor zero = result == 0;
  const at::Tensor g =
      at::where(zero, at::zeros_like(result), grad / (2 * at::where(zero, at::ones_like(result), result)));
  return var_backward(g, self, dim, correction, keepdim);
}

at::Tensor logsumexp_backward(const at::Tensor& grad, const at::Tensor& self, const at::Tensor& result,
                              at::IntArrayRef dim, bool keepdim) {
  const int64_t rank = self.dim();
  const at::Tensor r = keep_dims(result, rank, dim, keepdim);
  const at::Tensor softmax = at::exp(self - r);  // complex: torch's convention takes its conjugate
  return keep_dims(grad, rank, dim, keepdim) * (softmax.is_complex() ? softmax.conj() : softmax);
}

at::Tensor norm_backward(const at::Tensor& grad, const at::Tensor& self, const std::optional<at::Scalar>& p,
                         const at::Tensor& result, at::IntArrayRef dim, bool keepdim) {
  const int64_t rank = self.dim();
  const double q = p.has_value() ? p->toDouble() : 2.0;
  const at::Tensor g = keep_dims(grad, rank, dim, keepdim);
  const at::Tensor r = keep_dims(result, rank, dim, keepdim);
  if (q == 0.0) return at::zeros_like(self);
  if (q == 1.0) return g * at::sgn(self);
  if (std::isinf(q)) {  // the gradient goes to the elements of largest (smallest) magnitude, shared
    const at::Tensor hit = (at::abs(self) == r).to(g.scalar_type());
    const std::vector<int64_t> dims = dims_of(rank, dim);
    const at::Tensor count = rank == 0 ? hit : at::sum(hit, dims, /*keepdim=*/true);
    return g * at::sgn(self) * hit / count;
  }
  // d |x|_p / dx = sgn(x) |x|^(p-1) / |x|_p^(p-1) (sgn: x / |x|, complex too); 0 where the norm is 0.
  const at::Tensor zero = r == 0;
  const at::Tensor safe = at::where(zero, at::ones_like(r), r);  // no inf in where's other branch
  const at::Tensor scaled =
      q == 2.0 ? self / safe : at::sgn(self) * at::pow(at::abs(self), q - 1) / at::pow(safe, q - 1);
  return at::where(zero, at::zeros_like(scaled), g * scaled);
}

at::Tensor cumsum_backward(const at::Tensor& grad, const TensorMeta& self, int64_t dim) {
  if (self.sizes.empty()) return as_dtype(grad, self.dtype);
  const int64_t d = rules::wrap_dim("cumsum", "self", dim, static_cast<int64_t>(self.sizes.size()));
  return as_dtype(at::flip(at::cumsum(at::flip(grad, {d}), d), {d}), self.dtype);
}

// -- normalisation ---------------------------------------------------------------------------------

at::Tensor softmax_backward(const at::Tensor& grad, const at::Tensor& result, int64_t dim,
                            const TensorMeta& self) {
  if (result.dim() == 0) return as_dtype(at::zeros_like(grad), self.dtype);
  return as_dtype(result * (grad - at::sum(grad * result, {dim}, /*keepdim=*/true)), self.dtype);
}

at::Tensor log_softmax_backward(const at::Tensor& grad, const at::Tensor& result, int64_t dim,
                                const TensorMeta& self) {
  if (result.dim() == 0) return as_dtype(at::zeros_like(grad), self.dtype);
  return as_dtype(grad - at::exp(result) * at::sum(grad, {dim}, /*keepdim=*/true), self.dtype);
}

namespace {
// The statistics are in the input's dtype on every device (torch's CPU convention,
// docs/design.md); torch's CUDA backward kernels read float16/bfloat16 inputs' statistics as float.
at::Tensor stats_for_aten(const at::Tensor& stats, const at::Tensor& input) {
  const bool float_stats = input.is_cuda() && at::isReducedFloatingType(input.scalar_type());
  return float_stats && stats.defined() ? stats.to(at::kFloat) : stats;
}
}  // namespace

std::vector<at::Tensor> layer_norm_backward(const at::Tensor& grad, const at::Tensor& input,
                                            c10::SymIntArrayRef normalized_shape, const at::Tensor& mean,
                                            const at::Tensor& rstd, const std::optional<at::Tensor>& weight,
                                            const std::optional<at::Tensor>& bias, std::array<bool, 3> mask) {
  auto [gi, gw, gb] =
      at::native_layer_norm_backward_symint(grad, input, normalized_shape, stats_for_aten(mean, input),
                                            stats_for_aten(rstd, input), weight, bias, mask);
  return {gi, gw, gb};
}

at::Tensor rms_norm_rstd(const at::Tensor& x, at::IntArrayRef dims, std::optional<double> eps,
                         const at::Tensor& rstd) {
  if (!at::GradMode::is_enabled() && !x._fw_grad(/*level=*/0).defined()) return rstd;
  const double e = eps.has_value() ? *eps
                                   : (x.scalar_type() == at::kDouble ? std::numeric_limits<double>::epsilon()
                                                                     : std::numeric_limits<float>::epsilon());
  return at::rsqrt(at::mean(x * x, dims, /*keepdim=*/true) + e);
}

at::Tensor dropout_backward(const at::Tensor& t, const at::Tensor& mask, double p,
                            std::optional<bool> train) {
  const bool training = !train.has_value() || *train;
  const double scale = !training ? 1.0 : (p == 1.0 ? 0.0 : 1.0 / (1.0 - p));
  return t * mask * scale;  // torch's native_dropout_backward: the mask, then the scale in opmath
}

std::vector<at::Tensor> rms_norm_backward(const at::Tensor& grad, const at::Tensor& input,
                                          c10::SymIntArrayRef normalized_shape, const at::Tensor& saved_rstd,
                                          const std::optional<at::Tensor>& weight, std::optional<double> eps,
                                          std::array<bool, 2> mask) {
  // out = x^ w with x^ = x rstd over the trailing dims: grad_input = rstd (gw - x^ mean(x^ gw)) with
  // gw = grad w, grad_weight = the sum of grad x^ over the batch dims. In rstd's dtype (float for
  // float16/bfloat16), with ATen ops so that double backward and hessian differentiate it.
  const int64_t rank = input.dim(), batch = rank - static_cast<int64_t>(normalized_shape.size());
  std::vector<int64_t> dims, batch_dims;
  for (int64_t d = 0; d < rank; ++d) (d < batch ? batch_dims : dims).push_back(d);
  const auto compute = saved_rstd.scalar_type();
  const bool has_weight = weight.has_value() && weight->defined();
  const at::Tensor g = grad.to(compute);
  const at::Tensor x = input.to(compute);
  const at::Tensor rstd = rms_norm_rstd(x, dims, eps, saved_rstd);
  const at::Tensor xhat = x * rstd;
  at::Tensor grad_input, grad_weight;
  if (mask[0]) {
    const at::Tensor gw = has_weight ? g * weight->to(compute) : g;
    grad_input = (rstd * (gw - xhat * at::mean(xhat * gw, dims, /*keepdim=*/true))).to(input.scalar_type());
  }
  if (mask[1] && has_weight) {
    const at::Tensor products = g * xhat;
    grad_weight = (batch_dims.empty() ? products : products.sum(batch_dims)).to(weight->scalar_type());
  }
  return {grad_input, grad_weight};
}

std::vector<at::Tensor> batch_norm_backward(const at::Tensor& grad, const at::Tensor& input,
                                            const std::optional<at::Tensor>& weight,
                                            const std::optional<at::Tensor>& running_mean,
                                            const std::optional<at::Tensor>& running_var,
                                            const at::Tensor& save_mean, const at::Tensor& save_invstd,
                                            bool training, double eps, std::array<bool, 3> mask) {
  auto [gi, gw, gb] = at::native_batch_norm_backward(grad, input, weight, running_mean, running_var,
                                                     stats_for_aten(save_mean, input),
                                                     stats_for_aten(save_invstd, input), training, eps, mask);
  return {gi, gw, gb};
}

// -- linear algebra --------------------------------------------------------------------------------

std::vector<at::Tensor> matmul_backward(const at::Tensor& grad, const at::Tensor& self,
                                        const at::Tensor& other, std::array<bool, 2> mask) {
  // torch.matmul's cases: a 1-D operand gets the size-1 dim matmul gives it, batch dims broadcast.
  const at::Tensor a = self.dim() == 1 ? self.unsqueeze(0) : self;
  const at::Tensor b = other.dim() == 1 ? other.unsqueeze(-1) : other;
  at::Tensor g = grad;
  if (self.dim() == 1 && other.dim() == 1) {
    g = grad.reshape({1, 1});
  } else if (self.dim() == 1) {
    g = grad.unsqueeze(-2);
  } else if (other.dim() == 1) {
    g = grad.unsqueeze(-1);
  }
  at::Tensor ga, gb;
  if (mask[0]) {
    ga = at::sum_to(at::matmul(g, b.mT().conj()), a.sym_sizes());
    if (self.dim() == 1) ga = ga.squeeze(0);
    ga = as_dtype(ga, self.scalar_type());
  }
  if (mask[1]) {
    gb = at::sum_to(at::matmul(a.mT().conj(), g), b.sym_sizes());
    if (other.dim() == 1) gb = gb.squeeze(-1);
    gb = as_dtype(gb, other.scalar_type());
  }
  return {ga, gb};
}

at::Tensor linear_weight_backward(const at::Tensor& grad, const at::Tensor& input, const TensorMeta& weight) {
  // weight [out, in]: the batch dims of grad [..., out] and input [..., in] summed over.
  const at::Tensor g = grad.dim() == 1 ? grad.unsqueeze(0) : grad.reshape_symint({-1, grad.sym_size(-1)});
  const at::Tensor x = input.dim() == 1 ? input.unsqueeze(0) : input.reshape_symint({-1, input.sym_size(-1)});
  return as_dtype(at::sum_to(at::mm(g.mT(), x.conj()), c10::SymIntArrayRef(weight.sizes)), weight.dtype);
}

std::vector<at::Tensor> cdist_backward(const at::Tensor& grad, const at::Tensor& x1, const at::Tensor& x2,
                                       double p, const at::Tensor& result, std::array<bool, 2> mask) {
  // d r_ij / d x1_ik = sign(x1_ik - x2_jk) |x1_ik - x2_jk|^(p-1) / r_ij^(p-1); p = inf: the
  // largest |difference| only (shared among ties); p = 0: none. 0 where r_ij is 0.
  const at::Tensor diff = x1.unsqueeze(-2) - x2.unsqueeze(-3);  // [..., n, m, d]
  const at::Tensor r = result.unsqueeze(-1);
  const at::Tensor g = grad.unsqueeze(-1);
  at::Tensor w;
  if (p == 0.0) {
    w = at::zeros_like(diff);
  } else if (std::isinf(p)) {
    const at::Tensor hit = (at::abs(diff) == r).to(diff.scalar_type());
    w = at::sign(diff) * hit / at::clamp_min(at::sum(hit, {-1}, /*keepdim=*/true), 1);
  } else if (p == 1.0) {
    w = at::sign(diff);
  } else {
    const at::Tensor zero = r == 0;
    const at::Tensor safe = at::where(zero, at::ones_like(r), r);
    const at::Tensor scaled =
        p == 2.0 ? diff / safe : at::sign(diff) * at::pow(at::abs(diff), p - 1) / at::pow(safe, p - 1);
    w = at::where(zero, at::zeros_like(scaled), scaled);
  }
  const at::Tensor per_pair = g * w;
  at::Tensor g1, g2;
  if (mask[0]) g1 = at::sum(per_pair, {-2});
  if (mask[1]) g2 = -at::sum(per_pair, {-3});
  return {g1, g2};
}

// -- shape ops -----------------------------------------------------------------------------------

std::vector<at::Tensor> cat_backward(const at::Tensor& grad, const std::vector<TensorMeta>& tensors,
                                     int64_t dim) {
  std::vector<at::Tensor> out;
  out.reserve(tensors.size());
  const TensorMeta* first = nullptr;
  for (const auto& t : tensors) {
    if (!(t.sizes.size() == 1 && t.sizes[0] == 0)) {
      first = &t;
      break;
    }
  }
  if (first == nullptr) {  // every element an empty [0]: torch.cat gives an empty [0] too
    for (const auto& t : tensors) out.push_back(zeros_of(t, grad));
    return out;
  }
  const int64_t d = rules::wrap_dim("cat", "tensors", dim, static_cast<int64_t>(first->sizes.size()));
  c10::SymInt offset = 0;
  for (const auto& t : tensors) {
    if (t.sizes.size() == 1 && t.sizes[0] == 0) {  // skipped by torch.cat
      out.push_back(zeros_of(t, grad));
      continue;
    }
    out.push_back(as_dtype(grad.narrow_symint(d, offset, t.sizes[d]), t.dtype));
    offset = offset + t.sizes[d];
  }
  return out;
}

std::vector<at::Tensor> stack_backward(const at::Tensor& grad, const std::vector<TensorMeta>& tensors,
                                       int64_t dim) {
  const int64_t d = rules::wrap_dim("stack", "tensors", dim, grad.dim());
  std::vector<at::Tensor> out;
  out.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    out.push_back(as_dtype(grad.select(d, static_cast<int64_t>(i)), tensors[i].dtype));
  }
  return out;
}

at::Tensor split_backward(const std::vector<at::Tensor>& grads, const TensorMeta& self,
                          c10::SymIntArrayRef split_sizes, int64_t dim) {
  const int64_t d =
      rules::wrap_dim("split_with_sizes_copy", "self", dim, static_cast<int64_t>(self.sizes.size()));
  const at::Tensor* like = nullptr;
  for (const auto& g : grads) {
    if (g.defined()) {
      like = &g;
      break;
    }
  }
  std::vector<at::Tensor> pieces;
  pieces.reserve(grads.size());
  for (size_t i = 0; i < grads.size(); ++i) {
    if (grads[i].defined()) {
      pieces.push_back(grads[i]);
      continue;
    }
    std::vector<c10::SymInt> shape(self.sizes);
    shape[d] = split_sizes[i];
    pieces.push_back(at::zeros_symint(shape, like->options()));
  }
  return as_dtype(at::cat(pieces, d), self.dtype);
}

// -- indexing --------------------------------------------------------------------------------------

at::Tensor index_select_backward(const at::Tensor& grad, const TensorMeta& self, int64_t dim,
                                 const at::Tensor& index) {
  if (self.sizes.empty()) return as_dtype(grad.reshape({}), self.dtype);
  const int64_t d = rules::wrap_dim("index_select", "self", dim, static_cast<int64_t>(self.sizes.size()));
  return as_dtype(at::index_add(zeros_of(self, grad).to(grad.scalar_type()), d, index.reshape({-1}), grad),
                  self.dtype);
}

at::Tensor gather_backward(const at::Tensor& grad, const TensorMeta& self, int64_t dim,
                           const at::Tensor& index) {
  const int64_t rank = static_cast<int64_t>(self.sizes.size());
  const at::Tensor zeros = zeros_of(self, grad).to(grad.scalar_type());
  if (rank == 0) return as_dtype(grad.sum().reshape({}), self.dtype);
  const int64_t d = rules::wrap_dim("gather", "self", dim, rank);
  return as_dtype(at::scatter_add(zeros, d, index.to(at::kLong), grad), self.dtype);
}

at::Tensor take_backward(const at::Tensor& grad, const TensorMeta& self, const at::Tensor& index) {
  return as_dtype(at::put(zeros_of(self, grad).to(grad.scalar_type()), index, grad, /*accumulate=*/true),
                  self.dtype);
}

at::Tensor embedding_backward(const at::Tensor& grad, const at::Tensor& indices, const TensorMeta& weight) {
  if (TORCH_GUARD_SIZE_OBLIVIOUS(indices.sym_numel().sym_eq(0))) return zeros_of(weight, grad);
  return as_dtype(
      at::embedding_backward_symint(grad, indices.to(at::kLong), weight.sizes[0], /*padding_idx=*/-1,
                                    /*scale_grad_by_freq=*/false, /*sparse=*/false),
      weight.dtype);
}

at::Tensor masked_select_backward(const at::Tensor& grad, const TensorMeta& self, const at::Tensor& mask) {
  // The broadcast shape of self and mask holds the gradient where mask is true; then self's form.
  std::vector<c10::SymInt> shape = at::infer_size_symint(c10::SymIntArrayRef(self.sizes), mask.sym_sizes());
  const at::Tensor zeros = at::zeros_symint(shape, grad.options());
  return sum_to(at::masked_scatter(zeros, mask.expand_symint(shape), grad), self);
}

namespace detail {
Bags bags_of(const at::Tensor& weight, const at::Tensor& indices, const at::Tensor& offsets,
             const at::Tensor& result, int64_t mode, bool include_last_offset,
             const at::TensorOptions& options) {
  const c10::SymInt n = indices.sym_numel();
  at::Tensor off = offsets.to(at::kLong);
  const at::Tensor ix = indices.to(at::kLong).reshape({-1});
  const at::Tensor pos = at::arange(c10::Scalar(n), ix.options());
  // With include_last_offset the last offset closes the last bag (the forward kernels read it so):
  // the indices after it are in no bag and take no gradient.
  at::Tensor in_bag;
  if (include_last_offset && TORCH_GUARD_SIZE_OBLIVIOUS(off.sym_numel().sym_gt(0))) {
    in_bag = pos < off.select(0, -1);
    off = off.narrow_symint(0, 0, off.sym_numel() - 1);
  }
  const at::Tensor bag = at::searchsorted(off, pos, /*out_int32=*/false, /*right=*/true) - 1;
  const at::Tensor counted = in_bag.defined() ? in_bag.to(options.dtype()) : at::ones_symint({n}, options);
  at::Tensor scale;
  if (mode == 0 && in_bag.defined()) {
    scale = counted.unsqueeze(1);
  } else if (mode == 1) {
    const at::Tensor size = at::zeros_symint({off.sym_numel()}, options).index_add(0, bag, counted);
    scale = (counted / size.index_select(0, bag)).unsqueeze(1);
  } else if (mode == 2) {
    const at::Tensor picked = weight.index_select(0, ix);
    at::Tensor hit = picked == result.index_select(0, bag);
    if (in_bag.defined()) hit = hit & in_bag.unsqueeze(1);
    const at::Tensor where_hit = at::where(hit, pos.unsqueeze(1).expand_as(hit), c10::Scalar(n));
    const at::Tensor first = at::full_symint({off.sym_numel(), hit.sym_size(1)}, c10::Scalar(n), ix.options())
                                 .scatter_reduce(0, bag.unsqueeze(1).expand_as(hit), where_hit, "amin");
    scale = (pos.unsqueeze(1) == first.index_select(0, bag)).to(options.dtype());
  }
  return {ix, bag, scale};
}
}  // namespace detail

std::vector<at::Tensor> embedding_bag_backward(const at::Tensor& grad, const at::Tensor& weight,
                                               const at::Tensor& indices, const at::Tensor& offsets,
                                               const at::Tensor& result, bool scale_grad_by_freq,
                                               int64_t mode,
                                               const std::optional<at::Tensor>& per_sample_weights,
                                               bool include_last_offset, std::array<bool, 2> mask) {
  // Each index's bag's row of grad, scaled as the mode does, added to its weight row.
  const Bags b = bags_of(weight, indices, offsets, result, mode, include_last_offset, grad.options());
  const c10::SymInt n = indices.sym_numel();
  at::Tensor rows = grad.index_select(0, b.bag);  // [n, d]
  if (b.scale.defined()) rows = rows * b.scale;
  const bool weighted = per_sample_weights.has_value() && per_sample_weights->defined();
  at::Tensor gw, gp;
  if (mask[0]) {
    at::Tensor scaled = weighted ? rows * per_sample_weights->unsqueeze(1) : rows;
    if (scale_grad_by_freq && TORCH_GUARD_SIZE_OBLIVIOUS(n.sym_gt(0))) {  // divided by each index's count
      const at::Tensor count = at::zeros_symint({weight.sym_size(0)}, grad.options())
                                   .index_add(0, b.ix, at::ones_symint({n}, grad.options()));
      scaled = scaled / count.index_select(0, b.ix).unsqueeze(1);
    }
    gw = at::zeros_like(weight).index_add(0, b.ix, scaled);
  }
  if (mask[1] && weighted) gp = at::sum(rows * weight.index_select(0, b.ix), {1});
  return {gw, gp};
}

// -- pooling ---------------------------------------------------------------------------------------

at::Tensor max_pool2d_backward(const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef kernel_size,
                               at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
                               bool ceil_mode, const at::Tensor& indices) {
  return at::max_pool2d_with_indices_backward(grad, self, kernel_size, stride, padding, dilation, ceil_mode,
                                              indices);
}

at::Tensor max_pool3d_backward(const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef kernel_size,
                               at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation,
                               bool ceil_mode, const at::Tensor& indices) {
  return at::max_pool3d_with_indices_backward(grad, self, kernel_size, stride, padding, dilation, ceil_mode,
                                              indices);
}

at::Tensor avg_pool2d_backward(const at::Tensor& grad, const at::Tensor& self, at::IntArrayRef kernel_size,
                               at::IntArrayRef stride, at::IntArrayRef padding, bool ceil_mode,
                               bool count_include_pad, std::optional<int64_t> divisor_override) {
  return at::avg_pool2d_backward(grad, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                                 divisor_override);
}

// -- losses ----------------------------------------------------------------------------------------

std::vector<at::Tensor> mse_loss_backward(const at::Tensor& grad, const at::Tensor& self,
                                          const at::Tensor& target, int64_t reduction,
                                          std::array<bool, 2> mask) {
  // self and target broadcast (as torch's mse_loss): the gradient of the broadcast pair, then
  // each input's form.
  const std::vector<c10::SymInt> shape = at::infer_size_symint(self.sym_sizes(), target.sym_sizes());
  const at::Tensor s = self.expand_symint(shape), t = target.expand_symint(shape);
  const at::Tensor g = at::mse_loss_backward(grad, s, t, reduction);
  at::Tensor gs, gt;
  if (mask[0]) gs = sum_to(g, TensorMeta(self));
  if (mask[1]) gt = sum_to(-g, TensorMeta(target));
  return {gs, gt};
}

std::vector<at::Tensor> binary_cross_entropy_backward(const at::Tensor& grad, const at::Tensor& self,
                                                      const at::Tensor& target,
                                                      const std::optional<at::Tensor>& weight,
                                                      int64_t reduction, std::array<bool, 2> mask) {
  at::Tensor gs, gt;
  if (mask[0]) gs = at::binary_cross_entropy_backward(grad, self, target, weight, reduction);
  if (mask[1]) {
    // d/dtarget of -w (t log(x) + (1 - t) log(1 - x)) = -w (log(x) - log(1 - x)), the logs
    // clamped at -100 as the forward's.
    const at::Tensor logs = at::clamp_min(at::log(self), -100) - at::clamp_min(at::log(1 - self), -100);
    at::Tensor g = grad;
    if (reduction == 1) g = g / c10::Scalar(self.sym_numel());  // mean
    gt = -g * logs;
    if (weight.has_value() && weight->defined()) gt = gt * *weight;
  }
  return {gs, gt};
}

std::vector<at::Tensor> cross_entropy_backward(const at::Tensor& grad, const at::Tensor& self,
                                               const at::Tensor& target,
                                               const std::optional<at::Tensor>& weight, int64_t reduction,
                                               const c10::SymInt& ignore_index, double label_smoothing,
                                               std::array<bool, 2> mask) {
  // The loss per sample is -sum_c w_c q_c log_softmax(x)_c, q the target distribution: one-hot
  // (class indices), smoothed by label_smoothing, or the given probabilities. Its gradient for x
  // is softmax(x) * sum_c(w_c q_c) - w q; for the probabilities -w log_softmax(x).
  const int64_t class_dim = self.dim() >= 2 ? 1 : 0;
  // The class count as a number (a model's is fixed); every other size stays symbolic under
  // torch.compile(dynamic=True): sym_size, not size(), which reads (and fixes) all of them.
  const int64_t classes = self.sym_size(class_dim).guard_int(__FILE__, __LINE__);
  const at::Tensor logp = at::log_softmax(self, class_dim);
  std::vector<int64_t> wshape(self.dim(), 1);
  wshape[class_dim] = classes;
  const bool weighted = weight.has_value() && weight->defined();
  const at::Tensor w = weighted ? weight->to(self.scalar_type()).reshape(wshape) : at::Tensor();
  // The samples a mean over class indices divides by, each counted by its class weight (as
  // torch's nll_loss: the ignored ones not at all).
  auto counted = [&](const at::Tensor& keep) {
    const at::Tensor safe = at::where(keep, target, at::zeros_like(target));
    at::Tensor n = keep.to(self.scalar_type());
    if (weighted)
      n = n *
          weight->to(self.scalar_type()).index_select(0, safe.reshape({-1})).reshape_symint(keep.sym_sizes());
    return at::sum(n);
  };
  if (!target.is_floating_point() && label_smoothing == 0 && self.dim() <= 2) {
    // Class indices, no smoothing: torch's own backward kernels (nll_loss's, then
    // log_softmax's) instead of the general formula's one-hot, exp and sums.
    at::Tensor gs;
    if (mask[0]) {
      const at::Tensor keep = target != ignore_index.guard_int(__FILE__, __LINE__);
      const at::Tensor total = reduction == 1 ? counted(keep) : at::zeros({}, self.options());
      std::optional<at::Tensor> wt;
      if (weighted) wt = weight->to(self.scalar_type());
      gs = at::_log_softmax_backward_data(
          at::nll_loss_backward_symint(grad, logp, target, wt, reduction, ignore_index, total), logp,
          class_dim, self.scalar_type());
    }
    return {gs, at::Tensor()};
  }
  at::Tensor q;
  at::Tensor keep;  // class indices: the samples not ignored
  at::Tensor denom;
  if (target.is_floating_point()) {
    q = label_smoothing > 0 ? target * (1 - label_smoothing) + label_smoothing / classes : target;
  } else {
    keep = (target != ignore_index.guard_int(__FILE__, __LINE__));
    const at::Tensor safe = at::where(keep, target, at::zeros_like(target));
    const at::Tensor one_hot = at::zeros_like(logp).scatter_(class_dim, safe.unsqueeze(class_dim), 1.0);
    q = label_smoothing > 0 ? one_hot * (1 - label_smoothing) + label_smoothing / classes : one_hot;
    q = q * keep.unsqueeze(class_dim).to(q.scalar_type());
  }
  const at::Tensor wq = weighted ? w * q : q;
  // The per-sample grad_output: grad broadcast (none), or the sum / mean's scale.
  at::Tensor g = reduction == 0 ? grad.unsqueeze(class_dim) : grad;
  if (reduction == 1) {
    if (target.is_floating_point()) {
      g = g / (self.dim() >= 2 ? c10::Scalar(self.sym_numel() / classes) : c10::Scalar(1));
    } else {
      g = g / counted(keep);
    }
  }
  at::Tensor gs, gt;
  if (mask[0]) gs = g * (at::exp(logp) * at::sum(wq, {class_dim}, /*keepdim=*/true) - wq);
  if (mask[1] && target.is_floating_point()) {
    at::Tensor t = -(weighted ? w * logp : logp) * g;
    if (label_smoothing > 0) t = t * (1 - label_smoothing);
    gt = t;
  }
  return {gs, gt};
}

}  // namespace structgen::autograd
