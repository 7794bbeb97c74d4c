// CPU impl of dropout, with torch's CPU bits: torch's native_dropout draws bernoulli_(1 - p) into a
// tensor like the input (empty_like) from the default generator, so the same call here, on the same
// generator state, keeps the same elements (and leaves the generator where torch's leaves it).
// One pass then writes the mask and (x * mask) * scale in the compute dtype, the scale rounded to
// the input's dtype first: torch's two multiplications in one (a dropped inf or NaN gives NaN, a
// dropped -x gives -0, as torch's).
#include <structgen/cpu/rows.h>  // kGrainSize
#include <structgen/parallel.h>
#include <structops/ops/dropout.h>
#include <ops/random/probability.h>

#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/empty_like.h>

#include <ops/runtime_names.h>

namespace structops::impl {

void dropout_out_cpu(const at::Tensor& input, double p, std::optional<bool> train,
                     at::ScalarType /*compute_dtype*/, const at::Tensor& out, const at::Tensor& mask) {
  check_probability(p);
  if (input.numel() == 0) return;  // torch draws nothing either
  if (!training(train)) {
    out.copy_(input);
    mask.fill_(true);
    return;
  }
  // torch's draw: empty_like(input) keeps a dense input's layout, and the bits follow it
  const at::Tensor keep = at::empty_like(input).bernoulli_(1.0 - p).contiguous();
  const at::Tensor x = input.contiguous();
  const bool direct = out.is_contiguous() && mask.is_contiguous();
  const at::Tensor o = direct ? out : at::empty(x.sizes(), out.options());
  const at::Tensor m = direct ? mask : at::empty(x.sizes(), mask.options());
  AT_DISPATCH_FLOATING_TYPES_AND2(at::kHalf, at::kBFloat16, out.scalar_type(), "dropout", [&] {
    using acc_t = at::opmath_type<scalar_t>;
    // torch multiplies by the scale as a number of the tensor's dtype (1 / 0.9 is 1.1113 in float16)
    const acc_t scale = static_cast<acc_t>(static_cast<scalar_t>(dropout_scale(p, train)));
    const scalar_t* in = x.const_data_ptr<scalar_t>();
    const scalar_t* k = keep.const_data_ptr<scalar_t>();
    scalar_t* op = o.data_ptr<scalar_t>();
    bool* mp = m.data_ptr<bool>();
    structgen::parallel_for(0, x.numel(), cpu::kGrainSize, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const acc_t kept = static_cast<acc_t>(k[i]);  // 0 or 1
        mp[i] = kept != acc_t(0);
        op[i] = static_cast<scalar_t>(static_cast<acc_t>(in[i]) * kept * scale);
      }
    });
  });
  if (!direct) {
    out.copy_(o);
    mask.copy_(m);
  }
}

}  // namespace structops::impl
