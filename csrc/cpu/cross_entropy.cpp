// CPU impl of cross_entropy_loss. The meta function (csrc/meta/cross_entropy.cpp) has checked the
// shapes, dtypes, reduction and label_smoothing; this checks the one thing only data reveals
// (class indices in range) and computes.
//
// self is viewed as [N, C, S] (S: the trailing spatial dims; a 1-D self is N = 1, S = 1). Each
// sample (n, s) is one log-softmax over the C classes (stride S): its log-sum-exp, then
//   class index t:  loss = (1 - eps) * w[t] * (lse - x[t]) + eps / C * sum_c w[c] * (lse - x[c]),
//                   counted with weight w[t] in the mean (0 and not counted when t == ignore_index);
//   probabilities:  loss = sum_c w[c] * p'[c] * (lse - x[c]), p' = p * (1 - eps) + eps / C,
//                   the mean over the N * S samples,
// as torch's cross_entropy_loss. Per-sample losses go to a buffer in double and are summed in
// sample order, so the result does not depend on the thread count.
#include <structops/cpu_pointwise.h>
#include <structops/ops/cross_entropy_loss.h>
#include <structops/parallel.h>

#include <ATen/Dispatch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace structops::impl {

void cross_entropy_loss_out_cpu(const at::Tensor& self, const at::Tensor& target,
                                const std::optional<at::Tensor>& weight, int64_t reduction, c10::SymInt ignore_index,
                                double label_smoothing, const at::Tensor& out) {
  const bool batched = self.dim() >= 2;
  const int64_t N = batched ? self.size(0) : 1, C = self.size(batched ? 1 : 0);
  const int64_t S = batched ? self.numel() / std::max<int64_t>(N * C, 1) : 1;
  const int64_t samples = N * S;
  const bool probabilities = at::isFloatingType(target.scalar_type());
  const int64_t ignore = ignore_index.expect_int();
  const double eps = label_smoothing;
  // Everything in the result dtype (class probabilities promote: the meta function).
  const at::ScalarType dtype = out.scalar_type();
  const at::Tensor x = self.to(dtype).contiguous(), t = probabilities ? target.to(dtype).contiguous() : target.contiguous();
  const at::Tensor w = weight.has_value() ? weight->to(dtype).contiguous() : at::Tensor();

  std::vector<double> loss(samples), counted(samples);
  if (!probabilities) {  // the data check: every index is a class or ignore_index
    const int64_t* ti = t.const_data_ptr<int64_t>();
    for (int64_t i = 0; i < samples; ++i) {
      TORCH_CHECK_INDEX(ti[i] == ignore || (0 <= ti[i] && ti[i] < C), "cross_entropy_loss: target ", ti[i],
                        " is out of bounds for ", C, " classes (at flat position ", i, " of 'target')");
    }
  }
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "cross_entropy_loss", [&] {
    const scalar_t* px = x.const_data_ptr<scalar_t>();
    const scalar_t* pw = w.defined() ? w.const_data_ptr<scalar_t>() : nullptr;
    auto wt = [&](int64_t c) { return pw ? static_cast<double>(pw[c]) : 1.0; };
    structops::parallel_for(0, samples, std::max<int64_t>(1, cpu::kGrainSize / std::max<int64_t>(C, 1)),
                            [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t n = i / S, s = i % S;
        const scalar_t* xi = px + n * C * S + s;  // class c at xi[c * S]
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t c = 0; c < C; ++c) m = std::max(m, static_cast<double>(xi[c * S]));
        const double shift = std::isinf(m) ? 0.0 : m;
        double sum = 0;
        for (int64_t c = 0; c < C; ++c) sum += std::exp(static_cast<double>(xi[c * S]) - shift);
        const double lse = shift + std::log(sum);
        if (probabilities) {
          const scalar_t* pt = t.const_data_ptr<scalar_t>() + n * C * S + s;
          double l = 0;
          for (int64_t c = 0; c < C; ++c) {
            const double p = static_cast<double>(pt[c * S]) * (1 - eps) + eps / static_cast<double>(C);
            l += wt(c) * p * (lse - static_cast<double>(xi[c * S]));
          }
          loss[i] = l, counted[i] = 1;
          continue;
        }
        const int64_t k = t.const_data_ptr<int64_t>()[i];
        if (k == ignore) {
          loss[i] = 0, counted[i] = 0;
          continue;
        }
        double l = (1 - eps) * wt(k) * (lse - static_cast<double>(xi[k * S]));
        if (eps > 0) {
          double smooth = 0;
          for (int64_t c = 0; c < C; ++c) smooth += wt(c) * (lse - static_cast<double>(xi[c * S]));
          l += eps / static_cast<double>(C) * smooth;
        }
        loss[i] = l, counted[i] = wt(k);
      }
    });
    scalar_t* o = out.data_ptr<scalar_t>();
    if (reduction == 0) {
      for (int64_t i = 0; i < samples; ++i) o[i] = static_cast<scalar_t>(loss[i]);
      return;
    }
    double total = 0, denominator = 0;
    for (int64_t i = 0; i < samples; ++i) total += loss[i], denominator += counted[i];
    // mean over no counted target: 0 / 0 = NaN, as torch
    o[0] = static_cast<scalar_t>(reduction == 1 ? total / denominator : total);
  });
}

}  // namespace structops::impl
