// Forward mode: the 'result:' formulas' helpers (structgen/autograd.h, codegen/autograd/functions.py),
// each an output's tangent from its inputs' tangents and the primals. Written with differentiable
// ATen ops, as backward's, so jacfwd over jacrev (torch.func.hessian) holds.
#include <structgen/autograd.h>

#include "autograd_detail.h"

#include <ATen/TensorOperators.h>
#include <ATen/ops/eq.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/gather.h>
#include <ATen/ops/index_add.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/isinf.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/mean.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/real.h>
#include <ATen/ops/rsqrt.h>
#include <ATen/ops/sum.h>
#include <ATen/ops/where.h>
#include <ATen/ops/zeros_like.h>

namespace structgen::autograd {
using namespace detail;  // NOLINT: the helpers backward shares

at::Tensor var_jvp(const at::Tensor& self_t, const at::Tensor& self, at::OptionalIntArrayRef dim,
                   const std::optional<at::Scalar>& correction, bool keepdim) {
  // d var = 2 Re(sum(conj(x - mean) * dx)) / max(N - correction, 0).
  const int64_t rank = self.dim();
  const std::vector<int64_t> dims = dims_of(rank, dim);
  const at::Tensor per = at::real(centered(self, dims).conj() * self_t);
  return (rank == 0 ? per : at::sum(per, dims, keepdim)) * var_scale(self, dims, correction);
}

at::Tensor std_jvp(const at::Tensor& self_t, const at::Tensor& self, const at::Tensor& result,
                   at::OptionalIntArrayRef dim, const std::optional<at::Scalar>& correction, bool keepdim) {
  // d std = d var / (2 std), 0 where std is 0 (as std_backward).
  const at::Tensor zero = result == 0;
  const at::Tensor safe = at::where(zero, at::ones_like(result), result);
  return at::where(zero, at::zeros_like(result),
                   var_jvp(self_t, self, dim, correction, keepdim) / (2 * safe));
}

at::Tensor logsumexp_jvp(const at::Tensor& self_t, const at::Tensor& self, const at::Tensor& result,
                         at::IntArrayRef dim, bool keepdim) {
  // d logsumexp = sum(softmax(x) * dx) over dim; an infinite result is taken as 0 there (a row of
  // -inf has no direction), as torch's, and a NaN carries through.
  const int64_t rank = self.dim();
  const at::Tensor r = keep_dims(result, rank, dim, keepdim);
  const at::Tensor softmax = at::exp(self - at::where(at::isinf(r), at::zeros_like(r), r));
  const at::Tensor per = softmax * self_t;
  return rank == 0 ? per : at::sum(per, dims_of(rank, dim), keepdim);
}

at::Tensor extremum_jvp(const at::Tensor& self_t, const at::Tensor& self, const at::Tensor& result,
                        at::OptionalIntArrayRef dim, bool keepdim) {
  // amax/amin: the mean of the tangents where the input equals the result (extremum_backward's
  // sharing among ties, forward).
  const int64_t rank = self.dim();
  const at::Tensor hit = at::eq(self, keep_dims(result, rank, dim, keepdim)).to(self_t.scalar_type());
  if (rank == 0) return self_t * hit;
  const std::vector<int64_t> dims = dims_of(rank, dim);
  return at::sum(self_t * hit, dims, keepdim) / at::sum(hit, dims, keepdim);
}

at::Tensor linear_jvp(const at::Tensor& input_t, const at::Tensor& weight_t,
                      const std::optional<at::Tensor>& bias_t, const at::Tensor& input,
                      const at::Tensor& weight) {
  // d (x W^T + b) = dx W^T + x dW^T + db.
  const at::Tensor out = at::linear(input_t, weight) + at::linear(input, weight_t);
  return bias_t.has_value() && bias_t->defined() ? out + *bias_t : out;
}

at::Tensor softmax_jvp(const at::Tensor& self_t, const at::Tensor& result, int64_t dim) {
  // d softmax = y * (dx - sum(y * dx)) along dim.
  const at::Tensor t = self_t.to(result.scalar_type());
  if (result.dim() == 0) return at::zeros_like(result);
  return result * (t - at::sum(result * t, {dim}, /*keepdim=*/true));
}

at::Tensor log_softmax_jvp(const at::Tensor& self_t, const at::Tensor& result, int64_t dim) {
  // d log_softmax = dx - sum(softmax * dx) along dim.
  const at::Tensor t = self_t.to(result.scalar_type());
  if (result.dim() == 0) return at::zeros_like(result);
  return t - at::sum(at::exp(result) * t, {dim}, /*keepdim=*/true);
}

at::Tensor mse_loss_jvp(const at::Tensor& self_t, const at::Tensor& target_t, const at::Tensor& self,
                        const at::Tensor& target, int64_t reduction) {
  // d (x - y)^2 = 2 (x - y)(dx - dy), broadcast as the loss is, then reduced as it is.
  const at::Tensor per = 2 * (self - target) * (self_t - target_t);
  if (reduction == 1) return at::mean(per);
  if (reduction == 2) return at::sum(per);
  return per;
}

at::Tensor prod_jvp(const at::Tensor& self_t, const at::Tensor& self, const at::Tensor& result,
                    at::OptionalIntArrayRef dim, bool keepdim) {
  // d prod = sum(the product of the others * dx): prod_backward's factors at a grad of ones
  // (conjugated back for complex), exact with zeros.
  const at::Tensor others = autograd::conj(prod_backward(at::ones_like(result), self, result, dim, keepdim));
  const at::Tensor per = others.to(result.scalar_type()) * self_t.to(result.scalar_type());
  return self.dim() == 0 ? per : at::sum(per, dims_of(self.dim(), dim), keepdim);
}

at::Tensor norm_jvp(const at::Tensor& self_t, const at::Tensor& self, const std::optional<at::Scalar>& p,
                    const at::Tensor& result, at::IntArrayRef dim, bool keepdim) {
  // d |x|_p = Re(sum(conj(g) * dx)), g norm_backward's gradient at a grad of ones (a real norm of
  // complex x is real).
  const at::Tensor g = norm_backward(at::ones_like(result), self, p, result, dim, keepdim);
  const at::Tensor per = at::real(autograd::conj(g) * self_t);
  return self.dim() == 0 ? per : at::sum(per, dims_of(self.dim(), dim), keepdim);
}

at::Tensor cdist_jvp(const at::Tensor& x1_t, const at::Tensor& x2_t, const at::Tensor& x1,
                     const at::Tensor& x2, double p, const at::Tensor& result) {
  // Each distance is the p-norm of a difference x1_i - x2_j: norm's tangent over the last dim of
  // the pairwise differences (P x R x M elements, as torch's cdist backward holds).
  const at::Tensor diff = x1.unsqueeze(-2) - x2.unsqueeze(-3);
  const at::Tensor diff_t = x1_t.unsqueeze(-2) - x2_t.unsqueeze(-3);
  const int64_t last = diff.dim() - 1;
  return norm_jvp(diff_t, diff, at::Scalar(p), result, {last}, /*keepdim=*/false);
}

namespace {
// d x^ for x^ = (x - mean) rstd, the statistics over dims: rstd (d - x^ mean(x^ d)), d = dx - mean(dx)
// (the mean's tangent taken out, then the variance's through rstd).
at::Tensor normalized_jvp(const at::Tensor& dx, const at::Tensor& xhat, const at::Tensor& rstd,
                          at::IntArrayRef dims) {
  const at::Tensor d = dx - at::mean(dx, dims, /*keepdim=*/true);
  return rstd * (d - xhat * at::mean(xhat * d, dims, /*keepdim=*/true));
}

// d (x^ w + b) = d x^ w + x^ dw + db, w and b (and their tangents) reshaped to ``shape`` where it
// is given.
at::Tensor affine_jvp(at::Tensor out_t, const at::Tensor& xhat, const std::optional<at::Tensor>& weight,
                      const std::optional<at::Tensor>& weight_t, const std::optional<at::Tensor>& bias_t,
                      at::IntArrayRef shape) {
  const auto defined = [](const std::optional<at::Tensor>& t) { return t.has_value() && t->defined(); };
  const auto shaped = [&](const at::Tensor& t) { return shape.empty() ? t : t.reshape(shape); };
  if (defined(weight)) out_t = out_t * shaped(*weight);
  if (defined(weight_t)) out_t = out_t + xhat * shaped(*weight_t);
  if (defined(bias_t)) out_t = out_t + shaped(*bias_t);
  return out_t;
}
}  // namespace

at::Tensor layer_norm_jvp(const at::Tensor& input_t, const std::optional<at::Tensor>& weight_t,
                          const std::optional<at::Tensor>& bias_t, const at::Tensor& input,
                          c10::SymIntArrayRef normalized_shape, const std::optional<at::Tensor>& weight,
                          const at::Tensor& mean, const at::Tensor& rstd) {
  const int64_t rank = input.dim();
  std::vector<int64_t> dims;
  for (int64_t d = rank - static_cast<int64_t>(normalized_shape.size()); d < rank; ++d) dims.push_back(d);
  const at::Tensor xhat = (input - mean) * rstd;
  // weight and bias broadcast from the right as they are (they have the normalised shape)
  return affine_jvp(normalized_jvp(input_t, xhat, rstd, dims), xhat, weight, weight_t, bias_t, {});
}

at::Tensor rms_norm_jvp(const at::Tensor& input_t, const std::optional<at::Tensor>& weight_t,
                        const at::Tensor& input, c10::SymIntArrayRef normalized_shape,
                        const std::optional<at::Tensor>& weight, std::optional<double> eps,
                        const at::Tensor& saved_rstd) {
  // x^ = x rstd with rstd = mean(x^2)^-1/2 over dims: d x^ = rstd (dx - x^ mean(x^ dx)), computed in
  // rstd's dtype (the opmath of float16/bfloat16 inputs), then out = x^ w as layer_norm's.
  const int64_t rank = input.dim();
  std::vector<int64_t> dims;
  for (int64_t d = rank - static_cast<int64_t>(normalized_shape.size()); d < rank; ++d) dims.push_back(d);
  const auto compute = saved_rstd.scalar_type();
  const at::Tensor x = input.to(compute);
  const at::Tensor rstd = rms_norm_rstd(x, dims, eps, saved_rstd);
  const at::Tensor xhat = x * rstd;
  const at::Tensor dx = input_t.to(compute);
  const at::Tensor d_xhat = rstd * (dx - xhat * at::mean(xhat * dx, dims, /*keepdim=*/true));
  const auto widened = [&](const std::optional<at::Tensor>& t) -> std::optional<at::Tensor> {
    return t.has_value() && t->defined() ? std::optional<at::Tensor>(t->to(compute)) : std::nullopt;
  };
  return affine_jvp(d_xhat, xhat, widened(weight), widened(weight_t), std::nullopt, {})
      .to(input.scalar_type());
}

at::Tensor batch_norm_jvp(const at::Tensor& input_t, const std::optional<at::Tensor>& weight_t,
                          const std::optional<at::Tensor>& bias_t, const at::Tensor& input,
                          const std::optional<at::Tensor>& weight,
                          const std::optional<at::Tensor>& running_mean,
                          const std::optional<at::Tensor>& running_var, const at::Tensor& save_mean,
                          const at::Tensor& save_invstd, bool training, double eps) {
  // Per channel (dim 1): training normalises by the batch's statistics (whose tangents enter),
  // evaluation by the running ones (constants).
  const int64_t rank = input.dim();
  std::vector<int64_t> dims{0}, shape(rank, 1);
  for (int64_t d = 2; d < rank; ++d) dims.push_back(d);
  shape[1] = -1;
  at::Tensor xhat, out_t;
  if (training) {
    const at::Tensor invstd = save_invstd.reshape(shape);
    xhat = (input - save_mean.reshape(shape)) * invstd;
    out_t = normalized_jvp(input_t, xhat, invstd, dims);
  } else {
    const at::Tensor invstd = at::rsqrt(running_var->reshape(shape).to(input.scalar_type()) + eps);
    xhat = (input - running_mean->reshape(shape).to(input.scalar_type())) * invstd;
    out_t = input_t * invstd;
  }
  return affine_jvp(out_t, xhat, weight, weight_t, bias_t, shape);
}

at::Tensor embedding_bag_jvp(const at::Tensor& weight_t,
                             const std::optional<at::Tensor>& per_sample_weights_t, const at::Tensor& weight,
                             const at::Tensor& indices, const at::Tensor& offsets, const at::Tensor& result,
                             int64_t mode, const std::optional<at::Tensor>& per_sample_weights,
                             bool include_last_offset) {
  // Each bag's output is linear in its rows of weight (the maximum's row, for max) and in the
  // per-sample weights: their tangents' rows, scaled as the mode does, summed into the bag.
  // (scale_grad_by_freq scales backward's gradient only, not the function.)
  const Bags b = bags_of(weight, indices, offsets, result, mode, include_last_offset, result.options());
  at::Tensor rows = weight_t.index_select(0, b.ix);
  const bool weighted = per_sample_weights.has_value() && per_sample_weights->defined();
  if (weighted) {
    rows = rows * per_sample_weights->unsqueeze(1) +
           weight.index_select(0, b.ix) * per_sample_weights_t->unsqueeze(1);
  }
  if (b.scale.defined()) rows = rows * b.scale;  // the mode's, and 0 after a last offset
  return at::zeros_like(result).index_add(0, b.bag, rows.to(result.scalar_type()));
}

at::Tensor max_pool_jvp(const at::Tensor& self_t, const at::Tensor& indices, int64_t spatial) {
  // Each output is the input element its index names within its plane: the tangent's, gathered.
  const at::Tensor flat = self_t.flatten(-spatial).gather(-1, indices.flatten(-spatial));
  return flat.view_as(indices);
}

namespace {
// A loss whose output elements each read their own sample (none), or one loss of all (sum,
// mean): its tangent is the sum of backward's gradient at a grad of ones times the tangent,
// over a sample's elements (over the class dim ``classes``; all for a scalar loss).
at::Tensor separable_loss_jvp(const std::vector<at::Tensor>& grads, const std::vector<at::Tensor>& tangents,
                              const at::Tensor& result, std::optional<int64_t> classes) {
  at::Tensor per;
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined() || !tangents[i].defined()) continue;
    const at::Tensor term = grads[i] * tangents[i];
    per = per.defined() ? per + term : term;
  }
  if (!per.defined()) return at::zeros_like(result);
  if (result.dim() == 0) return at::sum(per).to(result.scalar_type());
  return (classes ? at::sum(per, {*classes}) : per).to(result.scalar_type());
}
}  // namespace

at::Tensor binary_cross_entropy_jvp(const at::Tensor& self_t, const at::Tensor& target_t,
                                    const at::Tensor& self, const at::Tensor& target,
                                    const std::optional<at::Tensor>& weight, int64_t reduction,
                                    const at::Tensor& result) {
  const auto g =
      binary_cross_entropy_backward(at::ones_like(result), self, target, weight, reduction, {true, true});
  return separable_loss_jvp(g, {self_t, target_t}, result, std::nullopt);
}

at::Tensor cross_entropy_jvp(const at::Tensor& self_t, const at::Tensor& target_t, const at::Tensor& self,
                             const at::Tensor& target, const std::optional<at::Tensor>& weight,
                             int64_t reduction, const c10::SymInt& ignore_index, double label_smoothing,
                             const at::Tensor& result) {
  const auto g = cross_entropy_backward(at::ones_like(result), self, target, weight, reduction, ignore_index,
                                        label_smoothing, {true, target.is_floating_point()});
  return separable_loss_jvp(g, {self_t, target.is_floating_point() ? target_t : at::Tensor()}, result,
                            self.dim() >= 2 ? std::optional<int64_t>(1) : std::nullopt);
}

}  // namespace structgen::autograd
