// Hand-written meta functions of the indexing ops whose rules the rule language cannot state
// (native_functions.yaml says why for each): gather and masked_select.
#include <structops/ops/gather.h>
#include <structops/ops/masked_select.h>

#include "meta.h"

#include <ATen/ops/count_nonzero.h>

#include <structops/parallel.h>
#include <structops/rules.h>

#include <atomic>

namespace structops::meta {


// torch.gather's shape rules: index has self's rank (a 0-dim tensor counts as 1-dim) and is no
// larger than self in every dim but `dim` (unchecked when index is empty); the result has index's
// shape and self's dtype.
gather_meta gather(const at::Tensor& self, int64_t dim, const at::Tensor& index, bool /*sparse_grad*/) {
  static constexpr std::string_view op = "gather";
  const int64_t rank = std::max<int64_t>(self.dim(), 1);
  const int64_t d = rules::wrap_dim(op, "self", dim, self.dim());
  rules::check_allowed(op, "index", index.scalar_type(), rules::bit(at::kInt) | rules::bit(at::kLong), "int32, int64");
  TORCH_CHECK(std::max<int64_t>(index.dim(), 1) == rank, op, ": 'index' must have as many dims as 'self' (",
              self.dim(), "), got ", index.dim());
  if (index.sym_numel() != 0 && self.dim() > 0 && index.dim() > 0) {
    const auto s = self.sym_sizes(), i = index.sym_sizes();
    for (int64_t k = 0; k < rank; ++k) {
      if (k == d) continue;
      TORCH_CHECK(i[k] <= s[k], op, ": index.size(", k, ")=", i[k], " must be at most self.size(", k, ")=", s[k],
                  " (every dim but dim ", d, "); shapes: self=", rules::show(s), ", index=", rules::show(i));
    }
  }
  return {TensorSpec{rules::sizes(index), {}, self.scalar_type()}};
}

rules::Dims masked_select_shape(const at::Tensor& self, const at::Tensor& mask) {
  static constexpr std::string_view op = "masked_select";
  rules::check_allowed(op, "mask", mask.scalar_type(), rules::bit(at::kBool), "bool");
  return rules::broadcast(op, {{"self", self.sym_sizes()}, {"mask", mask.sym_sizes()}});
}

// torch.masked_select: a bool mask that broadcasts with self; the result is 1-D with one entry per
// true element of the broadcast mask. Counting them is the one data read a meta function does here.
masked_select_meta masked_select(const at::Tensor& self, const at::Tensor& mask) {
  static constexpr std::string_view op = "masked_select";
  const rules::Dims shape = masked_select_shape(self, mask);
  TORCH_CHECK(!mask.is_meta() && !self.is_meta(), op,
              ": the output size is the number of true elements of 'mask', which a meta tensor does not have; "
              "use FakeTensorMode with a ShapeEnv for a symbolic size");
  int64_t total = 1;
  for (const auto& s : shape) total *= s.expect_int();
  const int64_t n = mask.numel();
  if (total == 0 || n == 0) return {TensorSpec{{c10::SymInt(0)}, {}, self.scalar_type()}};
  // Broadcasting repeats every mask element total / n times, so the count scales.
  if (!mask.is_cpu()) {  // device memory: counted there (one synchronisation, as torch's)
    return {TensorSpec{{c10::SymInt(at::count_nonzero(mask).item<int64_t>() * (total / n))}, {}, self.scalar_type()}};
  }
  const at::Tensor m = mask.contiguous();
  const bool* p = m.const_data_ptr<bool>();
  std::atomic<int64_t> count{0};
  structops::parallel_for(0, n, 1 << 16, [&](int64_t b, int64_t e) {
    int64_t c = 0;
    for (int64_t i = b; i < e; ++i) c += p[i];
    count += c;
  });
  return {TensorSpec{{c10::SymInt(count.load() * (total / n))}, {}, self.scalar_type()}};
}

}  // namespace structops::meta
