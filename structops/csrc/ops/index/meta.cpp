// The hand-written meta function of masked_select, whose output size is data (the rule language
// cannot state it; native_functions.yaml says why).
#include <structops/ops/masked_select.h>

#include "meta.h"

#include <structgen/parallel.h>
#include <structgen/rules.h>

#include <atomic>
#include <ops/runtime_names.h>

namespace structops::meta {

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
  TORCH_CHECK(
      !mask.is_meta() && !self.is_meta(), op,
      ": the output size is the number of true elements of 'mask', which a meta tensor does not have; "
      "use FakeTensorMode with a ShapeEnv for a symbolic size");
  int64_t total = 1;
  for (const auto& s : shape) total *= s.expect_int();
  const int64_t n = mask.numel();
  if (total == 0 || n == 0) return {TensorSpec{{c10::SymInt(0)}, {}, self.scalar_type()}};
  // Broadcasting repeats every mask element total / n times, so the count scales.
  if (!mask.is_cpu()) {  // device memory: counted there (one synchronisation, as torch's)
    return {TensorSpec{
        {c10::SymInt(mask.count_nonzero().item<int64_t>() * (total / n))}, {}, self.scalar_type()}};
  }
  const at::Tensor m = mask.contiguous();
  const bool* p = m.const_data_ptr<bool>();
  std::atomic<int64_t> count{0};
  structgen::parallel_for(0, n, 1 << 16, [&](int64_t b, int64_t e) {
    int64_t c = 0;
    for (int64_t i = b; i < e; ++i) c += p[i];
    count += c;
  });
  return {TensorSpec{{c10::SymInt(count.load() * (total / n))}, {}, self.scalar_type()}};
}

}  // namespace structops::meta
