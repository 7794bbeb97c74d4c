// scaled_mm's CPU impl (structgen signature scaled_mm --manifest native_functions.yaml
// prints what to define): out = alpha * self @ mat2, accumulated in double.
#include <example_ops/ops/scaled_mm.h>

#include <ATen/Dispatch.h>

namespace example::impl {

void scaled_mm_out_cpu(const at::Tensor& self, const at::Tensor& mat2, double alpha,
                       at::ScalarType compute_dtype, const at::Tensor& out) {
  const int64_t n = self.size(0), k = self.size(1), m = mat2.size(1);
  AT_DISPATCH_FLOATING_TYPES(self.scalar_type(), "scaled_mm", [&] {
    const auto a = self.accessor<scalar_t, 2>();
    const auto b = mat2.accessor<scalar_t, 2>();
    auto c = out.accessor<scalar_t, 2>();
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < m; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p) sum += static_cast<double>(a[i][p]) * static_cast<double>(b[p][j]);
        c[i][j] = static_cast<scalar_t>(alpha * sum);
      }
    }
  });
}

}  // namespace example::impl
