// CUDA host glue of sum, mean, prod, amax, amin, all, any, norm, argmax and argmin: device guard, current
// stream, the input cast to the result dtype and laid out as [outer, n, inner] for the torch-free kernels of
// cuda.cu (complex inputs: folds over their real parts, or cuda_complex.cu's complex rows). Compiled only
// when the installed torch has CUDA (CMakeLists.txt).
#include <structgen/cpu/pointwise.h>  // cpu::operand
#include <structgen/cpu/reduce.h>     // cpu::reduced_rows
#include <structops/ops/all_dims.h>
#include <structops/ops/amax.h>
#include <structops/ops/amin.h>
#include <structops/ops/any_dims.h>
#include <structops/ops/argmax.h>
#include <structops/ops/argmin.h>
#include <structops/ops/mean_dim.h>
#include <structops/ops/norm_ScalarOpt_dim.h>
#include <structops/ops/prod_dims.h>
#include <structops/ops/sum_dim_IntList.h>
#include <ops/reduce/launch.h>

#include <ATen/ops/empty.h>
#include <ATen/ops/view_as_complex.h>
#include <ATen/ops/view_as_real.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/util/SmallVector.h>

#include <algorithm>
#include <cmath>
#include <ops/runtime_names.h>

namespace structops::impl {
namespace {

bool has_kernel(at::ScalarType t) {
  return t == at::kFloat || t == at::kDouble || t == at::kHalf || t == at::kBFloat16 || t == at::kLong;
}

void complex_reduce_cuda(const char* name, ReduceOp op, const at::Tensor& self, at::IntArrayRef reduced_dims,
                         const at::Tensor& out, double p_norm, ReduceLaunch::Passes passes, int block);

// The [outer, n, inner] view of `x` (ops/reduce/launch.h) with its reduced dims along n, in
// their logical order (argmax's positions count in it): in place when memory holds [kept before,
// reduced, kept after] (each group in order), as rows when nothing is kept after, else columns;
// otherwise rows of a permuted copy, which replaces `x`.
ReduceLaunch reduce_layout(at::Tensor& x, at::IntArrayRef reduced_dims) {
  c10::SmallVector<int64_t, 8> kept, reduced;
  int64_t n_out = 1, n_red = 1;
  for (int64_t d = 0; d < x.dim(); ++d) {
    const bool r = std::find(reduced_dims.begin(), reduced_dims.end(), d) != reduced_dims.end();
    (r ? reduced : kept).push_back(d);
    (r ? n_red : n_out) *= x.size(d);
  }
  ReduceLaunch p;
  p.outer = n_out, p.n = n_red, p.inner = 1;
  bool in_place = false;
  for (size_t before = 0; before <= kept.size() && !in_place && !reduced.empty(); ++before) {
    c10::SmallVector<int64_t, 8> order(kept.begin(), kept.begin() + before);
    order.append(reduced.begin(), reduced.end());
    order.append(kept.begin() + before, kept.end());
    if (x.permute(order).is_contiguous()) {
      in_place = true;
      p.outer = 1;
      for (size_t k = 0; k < before; ++k) p.outer *= x.size(kept[k]);
      p.inner = n_out / p.outer;
    }
  }
  if (!in_place) {
    c10::SmallVector<int64_t, 8> rows_order(kept.begin(), kept.end());
    rows_order.append(reduced.begin(), reduced.end());
    x = x.permute(rows_order).contiguous();
  }
  p.in = x.const_data_ptr();
  return p;
}

// Launch-time scratch for the two-pass paths, on the current device.
at::Tensor workspace_for(ReduceLaunch& p, const at::Tensor& out) {
  const int64_t bytes = cuda_kernels::reduce_workspace_bytes(p);
  if (bytes == 0) return {};
  at::Tensor workspace = at::empty({bytes}, out.options().dtype(at::kByte));
  p.workspace = workspace.data_ptr();
  return workspace;
}

void reduce_cuda(const char* name, ReduceOp op, const at::Tensor& self, at::IntArrayRef reduced_dims,
                 const at::Tensor& out, double p_norm = 2,
                 ReduceLaunch::Passes passes = ReduceLaunch::Passes::Auto, int block = 256) {
  const c10::cuda::CUDAGuard guard(out.device());
  if (out.numel() == 0) return;
  // A bool result of a sum or product (dtype=) is any or all: torch casts the elements to bool first
  // (the int64 sum of 1 and -1 is zero, their bool sum true).
  if (out.scalar_type() == at::kBool && (op == ReduceOp::Sum || op == ReduceOp::Prod)) {
    op = op == ReduceOp::Sum ? ReduceOp::Any : ReduceOp::All;
  }
  // A complex input with a real out (sum(z, dtype=float64), or an out= of that dtype) is cast to
  // the out's dtype first, as torch does; the norms of a complex input are real.
  const bool folds_out_dtype = op == ReduceOp::Sum || op == ReduceOp::Mean || op == ReduceOp::Prod;
  if (at::isComplexType(out.scalar_type()) || (at::isComplexType(self.scalar_type()) && !folds_out_dtype)) {
    complex_reduce_cuda(name, op, self, reduced_dims, out, p_norm, passes, block);
    return;
  }
  // Small integers and bool (amax/amin) are reduced as int64, exactly, and cast back; all/any
  // reduce the input's own values (x != 0) and cast the 0/1 result to bool.
  const bool truth = op == ReduceOp::All || op == ReduceOp::Any;
  const at::ScalarType source = truth ? self.scalar_type() : out.scalar_type();
  const at::ScalarType t = has_kernel(source) ? source : at::kLong;
  // An integer or bool input of a sum or product in int64 is read as it is (no int64 copy).
  const at::ScalarType in = self.scalar_type();
  const bool widen_in =
      t == at::kLong && (op == ReduceOp::Sum || op == ReduceOp::Prod) &&
      (in == at::kBool || in == at::kByte || in == at::kChar || in == at::kShort || in == at::kInt);
  at::Tensor x = widen_in ? self : cpu::operand(self, t, out.device());
  ReduceLaunch p = reduce_layout(x, reduced_dims);
  const at::Tensor result = t == out.scalar_type() ? out : at::empty(out.sizes(), out.options().dtype(t));
  p.dtype = static_cast<Dtype>(t);
  p.widen_in = widen_in;
  p.in_dtype = static_cast<Dtype>(in);
  p.op = op;
  p.p = p_norm;
  p.passes = passes;
  p.block = block;
  p.out = result.data_ptr();
  const at::Tensor workspace = workspace_for(p, out);
  p.stream = c10::cuda::getCurrentCUDAStream().stream();
  const char* error = cuda_kernels::reduce(p);
  TORCH_CHECK(error == nullptr, name, ": CUDA kernel failed for dtype ", t, ": ", error);
  if (!result.is_same(out)) out.copy_(result);
}

// `dims` and the trailing dim of view_as_real (the parts).
c10::SmallVector<int64_t, 8> and_parts(at::IntArrayRef dims, int64_t rank) {
  c10::SmallVector<int64_t, 8> with(dims.begin(), dims.end());
  with.push_back(rank);
  return with;
}

// Complex inputs, reduced by the real kernels where a real fold computes it: sum and mean fold the
// real and imaginary parts apart (view_as_real's trailing dim, kept); any folds every part (a
// nonzero part makes a nonzero element); all folds any over each element's parts first; the
// norms fold the magnitudes (norm 2 over the parts; norm 2 of the whole in one pass). prod
// multiplies complex numbers: complex_rows (cuda_complex.cu).
void complex_reduce_cuda(const char* name, ReduceOp op, const at::Tensor& self, at::IntArrayRef reduced_dims,
                         const at::Tensor& out, double p_norm, ReduceLaunch::Passes passes, int block) {
  const int64_t rank = self.dim();
  switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Mean: {
      const at::Tensor x = cpu::operand(self, out.scalar_type(), out.device()).resolve_conj();
      const at::Tensor result = out.is_contiguous() ? out : at::empty(out.sizes(), out.options());
      reduce_cuda(name, op, at::view_as_real(x), reduced_dims, at::view_as_real(result), p_norm, passes,
                  block);
      if (!result.is_same(out)) out.copy_(result);
      return;
    }
    case ReduceOp::Any:
      reduce_cuda(name, op, at::view_as_real(self.resolve_conj()), and_parts(reduced_dims, rank), out);
      return;
    case ReduceOp::All: {
      const at::Tensor nonzero = at::empty(self.sizes(), out.options().dtype(at::kBool));
      reduce_cuda(name, ReduceOp::Any, at::view_as_real(self.resolve_conj()), {rank}, nonzero);
      reduce_cuda(name, op, nonzero, reduced_dims, out);
      return;
    }
    case ReduceOp::Prod: {
      const auto [x, n] =
          cpu::reduced_rows(cpu::operand(self, out.scalar_type(), out.device()).resolve_conj(), reduced_dims);
      const at::Tensor result = out.is_contiguous() ? out : at::empty(out.sizes(), out.options());
      ReduceLaunch p;
      p.dtype = static_cast<Dtype>(out.scalar_type());
      p.op = op;
      p.outer = out.numel(), p.n = n;
      p.in = x.const_data_ptr();
      p.out = result.data_ptr();
      p.stream = c10::cuda::getCurrentCUDAStream().stream();
      const char* error = cuda_kernels::complex_rows(p);
      TORCH_CHECK(error == nullptr, name, ": CUDA kernel failed for dtype ", out.scalar_type(), ": ", error);
      if (!result.is_same(out)) out.copy_(result);
      return;
    }
    case ReduceOp::Norm0:
    case ReduceOp::Norm1:
    case ReduceOp::Norm2:
    case ReduceOp::NormP:
    case ReduceOp::NormInf:
    case ReduceOp::NormNegInf: {
      const at::Tensor x = at::view_as_real(
          cpu::operand(self, c10::toComplexType(out.scalar_type()), out.device()).resolve_conj());
      if (op == ReduceOp::Norm2) {
        reduce_cuda(name, op, x, and_parts(reduced_dims, rank), out, p_norm);
        return;
      }
      // |z| by torch's abs (hypot): the parts' squares overflow float from 1e19 on
      const at::Tensor magnitude = at::view_as_complex(x).abs();
      reduce_cuda(name, op, magnitude, reduced_dims, out, p_norm);
      return;
    }
    default:
      TORCH_CHECK(false, name, ": no CUDA kernel for complex dtypes");
  }
}

void arg_reduce_cuda(const char* name, ReduceOp op, const at::Tensor& self, at::IntArrayRef reduced_dims,
                     const at::Tensor& out) {
  const c10::cuda::CUDAGuard guard(out.device());
  if (out.numel() == 0) return;
  const at::ScalarType t = has_kernel(self.scalar_type()) ? self.scalar_type() : at::kLong;  // exact for ints
  at::Tensor x = cpu::operand(self, t, out.device());
  ReduceLaunch p = reduce_layout(x, reduced_dims);
  p.dtype = static_cast<Dtype>(t);
  p.op = op;
  p.out = out.data_ptr();  // int64, contiguous: the meta layout
  const at::Tensor workspace = workspace_for(p, out);
  p.stream = c10::cuda::getCurrentCUDAStream().stream();
  const char* error = cuda_kernels::arg_reduce(p);
  TORCH_CHECK(error == nullptr, name, ": CUDA kernel failed for dtype ", t, ": ", error);
}

}  // namespace

void argmax_out_cuda(const at::Tensor& self, at::IntArrayRef reduced_dims, bool /*keepdim*/,
                     at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  arg_reduce_cuda("argmax", ReduceOp::Max, self, reduced_dims, out);
}

void argmin_out_cuda(const at::Tensor& self, at::IntArrayRef reduced_dims, bool /*keepdim*/,
                     at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  arg_reduce_cuda("argmin", ReduceOp::Min, self, reduced_dims, out);
}

// sum's CUDA kernel variants (the manifest's `kernels:`; structgen::autotune times them per shape
// bucket): each row in one pass (a warp per short row, a block of 128, 256 or 512 threads per
// long row), or long rows split over several blocks and merged in a second pass. Column
// reductions run the same kernel in all of them.
#define STRUCTOPS_SUM_CUDA_VARIANT(name, passes, block)                                                 \
  void name(const at::Tensor& self, at::IntArrayRef reduced_dims, bool /*keepdim*/,                     \
            std::optional<at::ScalarType> /*dtype*/, at::ScalarType /*compute_dtype*/,                  \
            const at::Tensor& out) {                                                                    \
    reduce_cuda("sum", ReduceOp::Sum, self, reduced_dims, out, 2, ReduceLaunch::Passes::passes, block); \
  }
STRUCTOPS_SUM_CUDA_VARIANT(sum_out_cuda_one_pass, OnePass, 256)
STRUCTOPS_SUM_CUDA_VARIANT(sum_out_cuda_one_pass_b128, OnePass, 128)
STRUCTOPS_SUM_CUDA_VARIANT(sum_out_cuda_one_pass_b512, OnePass, 512)
STRUCTOPS_SUM_CUDA_VARIANT(sum_out_cuda_two_pass, TwoPass, 256)
#undef STRUCTOPS_SUM_CUDA_VARIANT

void mean_out_cuda(const at::Tensor& self, at::IntArrayRef reduced_dims, bool /*keepdim*/,
                   std::optional<at::ScalarType> /*dtype*/, at::ScalarType /*compute_dtype*/,
                   const at::Tensor& out) {
  reduce_cuda("mean", ReduceOp::Mean, self, reduced_dims, out);
}

void amax_out_cuda(const at::Tensor& self, at::IntArrayRef reduced_dims, bool /*keepdim*/,
                   at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  reduce_cuda("amax", ReduceOp::Max, self, reduced_dims, out);
}

void amin_out_cuda(const at::Tensor& self, at::IntArrayRef reduced_dims, bool /*keepdim*/,
                   at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  reduce_cuda("amin", ReduceOp::Min, self, reduced_dims, out);
}

void prod_dims_out_cuda(const at::Tensor& self, at::IntArrayRef reduced_dims, bool /*keepdim*/,
                        std::optional<at::ScalarType> /*dtype*/, at::ScalarType /*compute_dtype*/,
                        const at::Tensor& out) {
  reduce_cuda("prod", ReduceOp::Prod, self, reduced_dims, out);
}

void all_out_cuda(const at::Tensor& self, at::IntArrayRef reduced_dims, bool /*keepdim*/,
                  at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  reduce_cuda("all", ReduceOp::All, self, reduced_dims, out);
}

void any_out_cuda(const at::Tensor& self, at::IntArrayRef reduced_dims, bool /*keepdim*/,
                  at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  reduce_cuda("any", ReduceOp::Any, self, reduced_dims, out);
}

void norm_out_cuda(const at::Tensor& self, const std::optional<at::Scalar>& p, at::IntArrayRef reduced_dims,
                   bool /*keepdim*/, at::ScalarType /*compute_dtype*/, const at::Tensor& out) {
  const double pv = p.has_value() ? p->toDouble() : 2.0;
  if (self.numel() ==
      out.numel()) {  // one element per output: |x| (x != 0 for p = 0), exactly, as the CPU impl
    const at::Tensor real = self.is_complex() ? self.abs() : self;
    out.copy_((pv == 0 ? real.ne(0) : real.abs()).reshape(out.sizes()));
    return;
  }
  const ReduceOp op = pv == 0          ? ReduceOp::Norm0
                      : pv == 1        ? ReduceOp::Norm1
                      : pv == 2        ? ReduceOp::Norm2
                      : std::isinf(pv) ? (pv > 0 ? ReduceOp::NormInf : ReduceOp::NormNegInf)
                                       : ReduceOp::NormP;
  reduce_cuda("norm", op, self, reduced_dims, out, pv);
}

}  // namespace structops::impl
