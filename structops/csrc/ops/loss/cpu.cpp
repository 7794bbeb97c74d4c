// CPU impls of mse_loss, binary_cross_entropy and cross_entropy_loss (at the end). The meta
// function has broadcast the shapes (for reduction=none) and checked dtypes and the reduction
// code; these compute, and check what only data (BCE's input range, class indices) or a Tensor?
// (BCE's weight broadcast) can reveal.
//
// The element loss is computed in opmath (float for float16/bfloat16) over the broadcast operands;
// mean/sum accumulate per thread chunk in double and combine, so the result does not depend on
// the thread count beyond rounding.
#include <structgen/cpu/pointwise.h>  // SO_CPU_CLONES, exp/log
#include <structgen/cpu/softmax.h>
#include <structops/ops/binary_cross_entropy.h>
#include <structops/ops/cross_entropy_loss.h>
#include <structops/ops/mse_loss.h>
#include <structgen/parallel.h>
#include <structgen/rules.h>

#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <vector>
#include <ops/runtime_names.h>

namespace structops::impl {
namespace {

constexpr int64_t kNone = 0, kMean = 1;
constexpr int64_t kGrain = 16384;

// Operands expanded to `shape` and made contiguous in `dtype` (a copy only where needed).
at::Tensor operand(const at::Tensor& t, at::IntArrayRef shape, at::ScalarType dtype) {
  at::Tensor x = t.scalar_type() == dtype ? t : t.to(dtype);
  return x.expand(shape).contiguous();
}

template <typename scalar_t>
SO_CPU_CLONES void mse_row(const scalar_t* __restrict a, const scalar_t* __restrict b, int64_t n,
                           scalar_t* __restrict o) {
  using acc_t = at::opmath_type<scalar_t>;
  for (int64_t i = 0; i < n; ++i) {
    const acc_t d = static_cast<acc_t>(a[i]) - static_cast<acc_t>(b[i]);
    o[i] = static_cast<scalar_t>(d * d);
  }
}

// 16 double lanes, so the sum vectorises without reassociating one accumulator (gcc will not).
template <typename scalar_t>
SO_CPU_CLONES double mse_sum(const scalar_t* __restrict a, const scalar_t* __restrict b, int64_t n) {
  using acc_t = at::opmath_type<scalar_t>;
  constexpr int64_t kLanes = 16;
  double lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t j = 0; j < kLanes; ++j) {
      const acc_t d = static_cast<acc_t>(a[i + j]) - static_cast<acc_t>(b[i + j]);
      lanes[j] += static_cast<double>(d * d);
    }
  for (; i < n; ++i) {
    const acc_t d = static_cast<acc_t>(a[i]) - static_cast<acc_t>(b[i]);
    lanes[0] += static_cast<double>(d * d);
  }
  double total = 0;
  for (double l : lanes) total += l;
  return total;
}

// Sum of f(begin, end) over [0, n) in parallel chunks, combined in chunk order.
template <typename F>
double chunked_sum(int64_t n, const F& f) {
  const int64_t chunks = std::max<int64_t>(1, (n + kGrain - 1) / kGrain);
  std::vector<double> partial(chunks, 0.0);
  structgen::parallel_for(0, chunks, 1, [&](int64_t cb, int64_t ce) {
    for (int64_t c = cb; c < ce; ++c) partial[c] = f(c * kGrain, std::min(n, (c + 1) * kGrain));
  });
  double total = 0;
  for (double p : partial) total += p;
  return total;
}

void finish(const at::Tensor& out, double total, int64_t n, int64_t reduction) {
  const double v = reduction == kMean ? total / static_cast<double>(n) : total;  // mean of none: NaN
  const_cast<at::Tensor&>(out).fill_(v);
}

// BCE over one chunk of n elements, in blocks of 64: the terms in opmath (libmvec's logf and
// log1pf: one vector loop), then stored through cpu::detail::store_row (`o`: reduction none) or
// added to 16 double lanes (`o` null: the chunk's sum, returned in `sum`). torch reduces the loss
// tensor it would return, so 16-bit terms are rounded to scalar_t before they are added. Inputs
// (bit 0) or targets (bit 1) outside [0, 1], NaN too, as torch, set the returned bits: an atomic
// flag stored inside the element loop had kept it scalar (0.82x torch at 1M elements).
template <bool kWeighted, typename scalar_t>
SO_CPU_CLONES unsigned bce_chunk(const scalar_t* __restrict x, const scalar_t* __restrict t,
                                 const scalar_t* __restrict w, int64_t n, scalar_t* __restrict o,
                                 double& sum) {
  using acc_t = at::opmath_type<scalar_t>;
  constexpr int64_t kBlock = 64, kLanes = 16;
  alignas(64) acc_t terms[kBlock];
  alignas(64) scalar_t rounded[kBlock];
  double lanes[kLanes] = {};
  unsigned bad = 0;
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t m = std::min(kBlock, n - b);
    for (int64_t i = 0; i < m; ++i) {
      const acc_t xi = cpu::to_acc<acc_t>(x[b + i]), ti = cpu::to_acc<acc_t>(t[b + i]);
      bad |= static_cast<unsigned>(!(xi >= acc_t(0) && xi <= acc_t(1))) |
             static_cast<unsigned>(!(ti >= acc_t(0) && ti <= acc_t(1))) << 1;
      const acc_t log_x = std::max(std::log(xi), acc_t(-100)),
                  log_1mx = std::max(std::log1p(-xi), acc_t(-100));
      terms[i] = (ti - acc_t(1)) * log_1mx - ti * log_x;
      if constexpr (kWeighted) terms[i] *= cpu::to_acc<acc_t>(w[b + i]);
    }
    if (o) {
      cpu::detail::store_row(o + b, m, [&](int64_t i) { return terms[i]; });
      continue;
    }
    if constexpr (!std::is_same_v<scalar_t, acc_t>) {
      cpu::detail::store_row(rounded, m, [&](int64_t i) { return terms[i]; });
      for (int64_t i = 0; i < m; ++i) terms[i] = cpu::to_acc<acc_t>(rounded[i]);
    }
    int64_t i = 0;
    for (; i + kLanes <= m; i += kLanes) {
      for (int64_t l = 0; l < kLanes; ++l) lanes[l] += static_cast<double>(terms[i + l]);
    }
    for (; i < m; ++i) lanes[0] += static_cast<double>(terms[i]);
  }
  sum = 0;
  for (double l : lanes) sum += l;
  return bad;
}

}  // namespace

void mse_loss_out_cpu(const at::Tensor& self, const at::Tensor& target, int64_t reduction,
                      at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  const std::vector<int64_t> shape = rules::concrete(
      rules::broadcast("mse_loss", {{"self", rules::sizes(self)}, {"target", rules::sizes(target)}}));
  const at::Tensor a = operand(self, shape, out.scalar_type()), b = operand(target, shape, out.scalar_type());
  const int64_t n = a.numel();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, out.scalar_type(), "mse_loss", [&] {
    const scalar_t* ap = a.const_data_ptr<scalar_t>();
    const scalar_t* bp = b.const_data_ptr<scalar_t>();
    if (reduction == kNone) {
      scalar_t* op = out.mutable_data_ptr<scalar_t>();
      structgen::parallel_for(0, n, kGrain,
                              [&](int64_t i0, int64_t i1) { mse_row(ap + i0, bp + i0, i1 - i0, op + i0); });
      return;
    }
    finish(out, chunked_sum(n, [&](int64_t i0, int64_t i1) { return mse_sum(ap + i0, bp + i0, i1 - i0); }), n,
           reduction);
  });
}

void binary_cross_entropy_out_cpu(const at::Tensor& self, const at::Tensor& target,
                                  const std::optional<at::Tensor>& weight, int64_t reduction,
                                  at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  const std::vector<int64_t> shape = rules::concrete(rules::broadcast(
      "binary_cross_entropy", {{"self", rules::sizes(self)}, {"target", rules::sizes(target)}}));
  const at::ScalarType dtype = self.scalar_type();
  const at::Tensor x = operand(self, shape, dtype), t = operand(target, shape, dtype);
  const bool weighted = weight.has_value() && weight->defined();
  // expand() raises torch's message when weight does not broadcast to the loss's shape.
  const at::Tensor w = weighted ? operand(*weight, shape, dtype) : at::Tensor();
  const int64_t n = x.numel();
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, dtype, "binary_cross_entropy", [&] {
    const scalar_t* xp = x.const_data_ptr<scalar_t>();
    const scalar_t* tp = t.const_data_ptr<scalar_t>();
    const scalar_t* wp = weighted ? w.const_data_ptr<scalar_t>() : nullptr;
    scalar_t* op = reduction == kNone ? out.mutable_data_ptr<scalar_t>() : nullptr;
    std::atomic<unsigned> bad{0};
    const auto chunk = [&](int64_t i0, int64_t i1) {
      double sum = 0;
      const unsigned b =
          weighted ? bce_chunk<true>(xp + i0, tp + i0, wp + i0, i1 - i0, op ? op + i0 : nullptr, sum)
                   : bce_chunk<false>(xp + i0, tp + i0, wp, i1 - i0, op ? op + i0 : nullptr, sum);
      if (b) bad.fetch_or(b, std::memory_order_relaxed);
      return sum;
    };
    if (op) {
      structgen::parallel_for(0, n, kGrain, [&](int64_t i0, int64_t i1) { chunk(i0, i1); });
    } else {
      const double total = chunked_sum(n, chunk);
      if (!bad.load()) finish(out, total, n, reduction);
    }
    TORCH_CHECK(!(bad.load() & 1u), "binary_cross_entropy: all elements of input should be between 0 and 1");
    TORCH_CHECK(!(bad.load() & 2u), "binary_cross_entropy: all elements of target should be between 0 and 1");
  });
}

// --- cross_entropy_loss ---------------------------------------------------------------------
// Its meta function (meta.cpp) has checked the shapes, dtypes, reduction and
// label_smoothing; this checks the one thing only data reveals (class indices in range) and
// computes.
//
// self is viewed as [N, C, S] (S: the trailing spatial dims; a 1-D self is N = 1, S = 1). Each
// sample (n, s) is one log-softmax over the C classes (stride S): its log-sum-exp, then
//   class index t:  loss = (1 - eps) * w[t] * (lse - x[t]) + eps / C * sum_c w[c] * (lse - x[c]),
//                   counted with weight w[t] in the mean (0 and not counted when t == ignore_index);
//   probabilities:  loss = sum_c w[c] * p'[c] * (lse - x[c]), p' = p * (1 - eps) + eps / C,
//                   the mean over the N * S samples,
// as torch's cross_entropy_loss. Per-sample losses go to a buffer in double and are summed in
// sample order, so the result does not depend on the thread count.
//
// The log-sum-exp of sample i's C classes is shift[i] + log_sum[i], in opmath and shifted by the
// max as torch's log_softmax (float for 16-bit inputs; a +inf logit or all -inf make the sample
// NaN), by the softmax family's passes (structgen/cpu/softmax.h): rows of C when S == 1, else
// blocks of up to 64 samples contiguous along s, so the vector loops run along s instead of
// striding across the classes (a loop over x[c * S] for a runtime S ran scalar: 0.35x torch at
// [64, 512]). A class's term is (shift - x[c]) + log_sum: the two parts added first lose
// log_sum's digits to a large shift (a masked sample of -1e9 gave 0 for log(C)).
template <typename scalar_t>
void log_sum_exps(const scalar_t* x, int64_t N, int64_t C, int64_t S, double* shift, double* log_sum) {
  using acc_t = at::opmath_type<scalar_t>;
  namespace sm = cpu::softmax;
  if (S == 1) {
    structgen::parallel_for(0, N, std::max<int64_t>(1, cpu::kGrainSize / std::max<int64_t>(C, 1)),
                            [&](int64_t begin, int64_t end) {
                              // 16-bit rows widened once, as log_softmax's (each of the two passes widening
                              // costs more)
                              std::vector<acc_t> staged(std::is_same_v<scalar_t, acc_t> ? 0 : C);
                              for (int64_t n = begin; n < end; ++n) {
                                sm::ShiftedLogSum<acc_t> lse;
                                if constexpr (std::is_same_v<scalar_t, acc_t>) {
                                  lse = sm::row_log_sum_exp<sm::Shift::kMax, acc_t>(x + n * C, C);
                                } else {
                                  cpu::widen(x + n * C, staged.data(), C);
                                  lse = sm::row_log_sum_exp<sm::Shift::kMax, acc_t>(staged.data(), C);
                                }
                                shift[n] = lse.shift, log_sum[n] = lse.log_sum;
                              }
                            });
    return;
  }
  const int64_t blocks = (S + sm::kColumnBlock - 1) / sm::kColumnBlock;
  structgen::parallel_for(
      0, N * blocks, std::max<int64_t>(1, cpu::kGrainSize / (std::max<int64_t>(C, 1) * sm::kColumnBlock)),
      [&](int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; ++b) {
          const int64_t n = b / blocks, s0 = (b % blocks) * sm::kColumnBlock;
          const int64_t width = std::min(sm::kColumnBlock, S - s0);
          sm::column_log_sum_exp<sm::Shift::kMax>(x + n * C * S + s0, C, S, width, shift + n * S + s0,
                                                  log_sum + n * S + s0);
        }
      });
}

void cross_entropy_loss_out_cpu(const at::Tensor& self, const at::Tensor& target,
                                const std::optional<at::Tensor>& weight, int64_t reduction,
                                c10::SymInt ignore_index, double label_smoothing, const at::Tensor& out) {
  const bool batched = self.dim() >= 2;
  const int64_t N = batched ? self.size(0) : 1, C = self.size(batched ? 1 : 0);
  const int64_t S = batched ? self.numel() / std::max<int64_t>(N * C, 1) : 1;
  const int64_t samples = N * S;
  const bool probabilities = at::isFloatingType(target.scalar_type());
  const int64_t ignore = ignore_index.expect_int();
  const double eps = label_smoothing;
  // Everything in the result dtype (class probabilities promote: the meta function).
  const at::ScalarType dtype = out.scalar_type();
  const at::Tensor x = self.to(dtype).contiguous(),
                   t = probabilities ? target.to(dtype).contiguous() : target.contiguous();
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
    std::vector<double> shift(samples), log_sum(samples);
    log_sum_exps(px, N, C, S, shift.data(), log_sum.data());
    // -log_softmax(x)[c] of sample i
    auto nll = [&](int64_t i, const scalar_t* xi, int64_t c) {
      return (shift[i] - static_cast<double>(xi[c * S])) + log_sum[i];
    };
    structgen::parallel_for(
        0, samples, std::max<int64_t>(1, cpu::kGrainSize / std::max<int64_t>(C, 1)),
        [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) {
            const int64_t n = i / S, s = i % S;
            const scalar_t* xi = px + n * C * S + s;  // class c at xi[c * S]
            if (probabilities) {
              const scalar_t* pt = t.const_data_ptr<scalar_t>() + n * C * S + s;
              double l = 0;
              for (int64_t c = 0; c < C; ++c) {
                const double p = static_cast<double>(pt[c * S]) * (1 - eps) + eps / static_cast<double>(C);
                l += (p * nll(i, xi, c)) *
                     wt(c);  // torch's order: p * 0 for the max class before a large weight
              }
              loss[i] = l, counted[i] = 1;
              continue;
            }
            const int64_t k = t.const_data_ptr<int64_t>()[i];
            if (k == ignore) {
              loss[i] = 0, counted[i] = 0;
              continue;
            }
            double l = (1 - eps) * wt(k) * nll(i, xi, k);
            if (eps > 0) {
              double smooth = 0;
              for (int64_t c = 0; c < C; ++c) smooth += wt(c) * nll(i, xi, c);
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
