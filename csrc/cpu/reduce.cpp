// CPU impl of sum over a dim list: the reduced dims are moved innermost, so every output
// element is the sum of one contiguous row, accumulated in a wider type (double for floating
// types, int64 for integers) and rows are split across threads.
#include <structops/ops/sum_dim_IntList.h>

#include <ATen/AccumulateType.h>
#include <ATen/Dispatch.h>
#include <structops/parallel.h>

#include <vector>

namespace structops::impl {

// keepdim and dtype are already applied by the meta function to out's shape and dtype.
void sum_IntList_out_cpu(const at::Tensor& self, at::IntArrayRef reduced_dims, bool /*keepdim*/,
                         std::optional<at::ScalarType> /*dtype*/, at::ScalarType /*compute_dtype*/,
                         const at::Tensor& out) {
  const int64_t ndim = self.dim();
  std::vector<bool> reduced(ndim, false);
  for (int64_t d : reduced_dims) reduced[d] = true;
  std::vector<int64_t> order;
  int64_t rows = 1, row_length = 1;
  for (int64_t d = 0; d < ndim; ++d) {
    if (!reduced[d]) {
      order.push_back(d);
      rows *= self.size(d);
    }
  }
  for (int64_t d = 0; d < ndim; ++d) {
    if (reduced[d]) {
      order.push_back(d);
      row_length *= self.size(d);
    }
  }
  if (rows == 0) return;
  // One contiguous copy in the result dtype: rows of `row_length` elements, row-major in the
  // kept dims, which is exactly out's (contiguous) element order.
  const at::Tensor x = self.permute(order).to(out.scalar_type()).contiguous();
  AT_DISPATCH_ALL_TYPES_AND_COMPLEX_AND3(at::kHalf, at::kBFloat16, at::kBool, out.scalar_type(), "sum", [&] {
    using acc_t = std::conditional_t<std::is_same_v<scalar_t, bool>, int64_t, at::acc_type<scalar_t, false>>;
    const scalar_t* in = x.const_data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(row_length, 1));
    structops::parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        acc_t acc = acc_t(0);
        const scalar_t* row = in + r * row_length;
        for (int64_t k = 0; k < row_length; ++k) acc += static_cast<acc_t>(row[k]);
        o[r] = static_cast<scalar_t>(acc);
      }
    });
  });
}

}  // namespace structops::impl
