// Host runtime of generated pointwise kernels: the iteration geometry (structgen/cpu/pointwise.h),
// the walk over rows (structgen/cpu/rows.h) and the integer-division error of
// structgen/pointwise/math.h.
#include <structgen/cpu/pointwise.h>

#include <ATen/Dispatch_v2.h>
#include <ATen/OpMathType.h>
#include <ATen/ScalarOps.h>
#include <ATen/ops/full.h>
#include <c10/core/DynamicCast.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <cstring>
#include <numeric>

namespace structgen {

namespace pw {
void throw_zero_division() { TORCH_CHECK(false, "ZeroDivisionError"); }
}  // namespace pw

namespace cpu {

Geometry make_geometry(const at::Tensor& out, c10::ArrayRef<at::Tensor> inputs) {
  const int64_t ndim = out.dim();
  const auto sizes = out.sizes();
  const int operands = static_cast<int>(inputs.size()) + 1;
  TORCH_INTERNAL_ASSERT(operands <= kMaxOperands);

  // Element strides of every operand over the output's dims; broadcast dims get stride 0.
  std::array<c10::SmallVector<int64_t, 8>, kMaxOperands> full;
  full[0].assign(out.strides().begin(), out.strides().end());
  for (int k = 1; k < operands; ++k) {
    const auto t_sizes = inputs[k - 1].sizes();
    const auto t_strides = inputs[k - 1].strides();
    full[k].assign(ndim, 0);
    const int64_t shift = ndim - static_cast<int64_t>(t_sizes.size());
    for (size_t d = 0; d < t_sizes.size(); ++d) {
      if (t_sizes[d] != 1 || sizes[d + shift] == 1) full[k][d + shift] = t_strides[d];
    }
  }

  // Innermost first: the output's dims by increasing stride (memory order), size-1 dims dropped.
  // A stable insertion sort: a handful of dims, and std::stable_sort allocates a buffer per call.
  c10::SmallVector<int64_t, 8> order;
  for (int64_t d = ndim - 1; d >= 0; --d) {
    if (sizes[d] == 1) continue;
    size_t at = order.size();
    order.push_back(d);
    for (; at > 0 && full[0][d] < full[0][order[at - 1]]; --at) order[at] = order[at - 1];
    order[at] = d;
  }

  Geometry g;
  g.operands = operands;
  g.numel = out.numel();
  for (int64_t d : order) {
    const int cur = g.ndim - 1;
    bool merge = cur >= 0;
    for (int k = 0; k < operands && merge; ++k) {
      merge = full[k][d] == g.strides[k][cur] * g.sizes[cur];
    }
    if (merge) {
      g.sizes[cur] *= sizes[d];
    } else {
      g.sizes.push_back(sizes[d]);
      for (int k = 0; k < operands; ++k) g.strides[k].push_back(full[k][d]);
      ++g.ndim;
    }
  }
  // A short innermost dim that some operand strides through ([10, 1000] after a transpose, each
  // row 10 elements: the scalar strided loop and a row's setup per 10 elements, 0.48x torch) goes
  // second: the rows along the longer dim are gathered in chunks and computed vectorised. Not
  // where the output's short rows follow each other: rows.h runs a block of them as one row.
  const bool output_rows_follow = g.ndim >= 2 && g.strides[0][0] == 1 && g.strides[0][1] == g.sizes[0];
  if (g.ndim >= 2 && g.sizes[0] < detail::kShortRow && g.sizes[1] >= 64 && !output_rows_follow) {
    bool strided = false;
    for (int k = 0; k < operands; ++k) strided = strided || (g.strides[k][0] != 1 && g.strides[k][0] != 0);
    if (strided) {
      std::swap(g.sizes[0], g.sizes[1]);
      for (int k = 0; k < operands; ++k) std::swap(g.strides[k][0], g.strides[k][1]);
    }
  }
  if (g.ndim == 0) {  // a single element
    g.ndim = 1;
    g.sizes.push_back(1);
    for (int k = 0; k < operands; ++k) g.strides[k].push_back(1);
  }
  return g;
}

at::Tensor operand(const at::Tensor& t, at::ScalarType dtype, at::Device device) {
  if (t.scalar_type() == dtype && t.device() == device) return t;
  // A CPU scalar on its way to a GPU: filled there by value, no copy from pageable host memory
  // (which synchronises, and fails while a CUDA graph is captured).
  if (t.device().is_cpu() && t.dim() == 0 && !device.is_cpu()) {
    return at::full({}, t.item(), at::TensorOptions().dtype(dtype).device(device));
  }
  return t.to(device, dtype);
}

void detail::walk_rows(const Geometry& g, int64_t grain, RowFn row, const void* ctx) {
  const int operands = g.operands;
  // Elements [begin, end) of the merged iteration space, row by row.
  structgen::parallel_for(0, g.numel, grain, [&](int64_t begin, int64_t end) {
    const int nd = g.ndim;
    c10::SmallVector<int64_t, 8> index(nd, 0);
    detail::Offsets offset{};
    int64_t rest = begin;
    for (int d = 0; d < nd; ++d) {
      index[d] = rest % g.sizes[d];
      rest /= g.sizes[d];
      for (int k = 0; k < operands; ++k) offset[k] += index[d] * g.strides[k][d];
    }
    detail::Offsets step{};  // from a row to the next along dim 1
    if (nd > 1) {
      for (int k = 0; k < operands; ++k) step[k] = g.strides[k][1];
    }
    for (int64_t i = begin; i < end;) {
      const int64_t n = std::min(g.sizes[0] - index[0], end - i);
      // Whole rows in one call: as many as dim 1 has left and this chunk holds.
      const int64_t rows =
          index[0] == 0 && nd > 1 ? std::max<int64_t>(1, std::min(g.sizes[1] - index[1], (end - i) / n)) : 1;
      row(ctx, n, rows, offset, step);
      if (pw::zero_division_flag) {
        pw::zero_division_flag = false;
        pw::throw_zero_division();
      }
      if (rows > 1) {  // to the start of the last row, which the step below finishes
        for (int k = 0; k < operands; ++k) offset[k] += (rows - 1) * step[k];
        index[1] += rows - 1;
        i += (rows - 1) * n;
      }
      i += n;
      for (int k = 0; k < operands; ++k) offset[k] += n * g.strides[k][0];
      index[0] += n;
      for (int d = 0; d + 1 < nd && index[d] == g.sizes[d]; ++d) {
        for (int k = 0; k < operands; ++k) offset[k] += g.strides[k][d + 1] - g.sizes[d] * g.strides[k][d];
        index[d] = 0;
        ++index[d + 1];
      }
    }
  });
}

at::Tensor wrapped_number(const at::Scalar& s) {
  at::Tensor t = at::scalar_to_tensor(s);
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

namespace {
// Operand 0 is the output, the inputs follow.
void fill_data(const at::Tensor& out, c10::ArrayRef<at::Tensor> inputs, void** data) {
  data[0] = out.data_ptr();
  for (size_t k = 0; k < inputs.size(); ++k) data[k + 1] = const_cast<void*>(inputs[k].const_data_ptr());
}
}  // namespace

RowLaunch make_row_launch(const at::Tensor& out, c10::ArrayRef<at::Tensor> inputs, at::ScalarType dtype,
                          int64_t grain) {
  RowLaunch p;
  p.dtype = static_cast<Dtype>(dtype);
  p.geometry = make_geometry(out, inputs);
  p.grain = grain;
  fill_data(out, inputs, p.data.data());
  return p;
}

at::Tensor launch_operand(const at::Tensor& t, at::ScalarType dtype, at::Device device) {
  if (t.dim() == 0 && t.device().is_cpu()) return t;
  return operand(t, dtype, device);
}

PointwiseLaunch make_launch(const at::Tensor& out, c10::ArrayRef<at::Tensor> inputs, at::ScalarType dtype,
                            c10::ArrayRef<at::ScalarType> dtypes) {
  const Geometry g = make_geometry(out, inputs);
  TORCH_CHECK(g.ndim <= kPointwiseMaxDims, "pointwise kernels support up to ", kPointwiseMaxDims,
              " dims after merging, got ", g.ndim);
  PointwiseLaunch p{};
  p.dtype = static_cast<Dtype>(dtype);
  p.ndim = g.ndim;
  p.numel = g.numel;
  for (int d = 0; d < g.ndim; ++d) {
    p.sizes[d] = g.sizes[d];
    for (int k = 0; k < g.operands; ++k) p.strides[k][d] = g.strides[k][d];
  }
  fill_data(out, inputs, p.data);
  for (size_t k = 0; k < inputs.size(); ++k) {
    const at::Tensor& t = inputs[k];
    if (t.dim() != 0 || !t.device().is_cpu()) continue;
    // Converted unchecked to the input's opmath type (float for half and bfloat16), as torch's
    // CUDA kernels read a CPU scalar (fetch_and_cast<opmath_t>): the kernel reads it so.
    AT_DISPATCH_V2(dtypes[k], "pointwise value", AT_WRAP([&] {
                     using value_t = at::opmath_type<scalar_t>;
                     const value_t v = c10::fetch_and_cast<value_t>(t.scalar_type(), t.const_data_ptr());
                     static_assert(sizeof(v) <= sizeof(p.values[0]));
                     std::memcpy(p.values[k + 1], &v, sizeof(v));
                   }),
                   AT_EXPAND(AT_ALL_TYPES_AND_COMPLEX), at::kHalf, at::kBFloat16, at::kBool);
    p.is_value[k + 1] = true;
    p.data[k + 1] = nullptr;
  }
  return p;
}

void set_value(RowLaunch& launch, size_t input, const at::Tensor& t) {
  if (t.dim() != 0 || !t.device().is_cpu() || t.is_complex()) return;
  if (launch.dtype != Dtype::Float16 && launch.dtype != Dtype::BFloat16) return;
  launch.is_value[input] = true;
  launch.values[input] = c10::fetch_and_cast<float>(t.scalar_type(), t.const_data_ptr());
}

pw::ScalarArg scalar_arg(const at::Scalar& s, at::ScalarType dtype) {
  // Scalar::to<T>() of the compute type raises where the number does not fit (the kernels convert
  // it unchecked).
  switch (dtype) {
    case at::kHalf:
    case at::kBFloat16:
    case at::kFloat:
      (void)s.to<float>();
      break;
    case at::kDouble:
      (void)s.to<double>();
      break;
    case at::kComplexFloat:
      (void)s.to<c10::complex<float>>();
      break;
    case at::kComplexDouble:
      (void)s.to<c10::complex<double>>();
      break;
    case at::kByte:
      (void)s.to<uint8_t>();
      break;
    case at::kChar:
      (void)s.to<int8_t>();
      break;
    case at::kShort:
      (void)s.to<int16_t>();
      break;
    case at::kInt:
      (void)s.to<int32_t>();
      break;
    case at::kLong:
      (void)s.to<int64_t>();
      break;
    case at::kBool:
      (void)s.to<bool>();
      break;
    default:
      break;
  }
  return scalar_arg(s);
}

pw::ScalarArg scalar_arg(const at::Scalar& s) {
  pw::ScalarArg a;
  a.is_integral = s.isIntegral(/*includeBool=*/true);
  if (a.is_integral) {
    a.integral = s.toLong();
  } else if (s.isComplex()) {
    const c10::complex<double> z = s.toComplexDouble();
    a.real = z.real();
    a.imag = z.imag();
  } else {
    a.real = s.toDouble();
  }
  return a;
}

pw::ScalarArg scalar_arg(const std::optional<at::Scalar>& s, at::ScalarType dtype) {
  if (s.has_value()) return scalar_arg(*s, dtype);
  return scalar_arg(s);
}

pw::ScalarArg scalar_arg(const std::optional<at::Scalar>& s) {
  if (s.has_value()) return scalar_arg(*s);
  pw::ScalarArg absent;
  absent.present = false;
  return absent;
}

}  // namespace cpu
}  // namespace structgen
