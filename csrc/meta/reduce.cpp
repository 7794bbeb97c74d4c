// Meta functions of reductions: which dims are reduced, the result's shape and dtype.
#include <structops/ops/sum_dim_IntList.h>

#include <vector>

namespace structops::meta {

namespace {

// Reduced-dim mask with PyTorch's rules: negative dims wrap, a 0-dim tensor accepts 0 and -1,
// duplicates are an error, and no dims (None or []) means all dims.
std::vector<bool> reduced_dims(const char* op, int64_t ndim, at::OptionalIntArrayRef dim) {
  std::vector<bool> mask(ndim, false);
  if (!dim.has_value() || dim->empty()) {
    mask.assign(ndim, true);
    return mask;
  }
  std::vector<bool> seen(std::max<int64_t>(ndim, 1), false);
  for (int64_t d : *dim) {
    // IndexError, as torch raises for a bad dim, but naming the op and the argument.
    const int64_t lo = -std::max<int64_t>(ndim, 1), hi = std::max<int64_t>(ndim, 1) - 1;
    TORCH_CHECK_INDEX(lo <= d && d <= hi, op, ": dim ", d, " is out of range for 'self' with ", ndim,
                      " dims (expected to be in range of [", lo, ", ", hi, "])");
    int64_t wrapped = d < 0 ? d + std::max<int64_t>(ndim, 1) : d;
    TORCH_CHECK(!seen[wrapped], op, ": dim ", wrapped, " appears multiple times in the list of dims");
    seen[wrapped] = true;
    if (ndim > 0) mask[wrapped] = true;
  }
  return mask;
}

}  // namespace

sum_dim_IntList_meta sum_dim_IntList(const at::Tensor& self, at::OptionalIntArrayRef dim,
                                     bool keepdim, std::optional<at::ScalarType> dtype) {
  const auto mask = reduced_dims("sum", self.dim(), dim);
  c10::SymDimVector sizes;
  auto in = self.sym_sizes();
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (!mask[d]) {
      sizes.push_back(in[d]);
    } else if (keepdim) {
      sizes.push_back(1);
    }
  }
  // Integral (and bool) inputs sum to int64 unless a dtype is asked for, as in torch.sum.
  at::ScalarType out_dtype = dtype.value_or(
      at::isIntegralType(self.scalar_type(), /*includeBool=*/true) ? at::kLong : self.scalar_type());
  std::vector<int64_t> reduced;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (mask[d]) reduced.push_back(d);
  }
  return {TensorSpec{std::move(sizes), {}, out_dtype}, std::move(reduced)};
}

}  // namespace structops::meta
