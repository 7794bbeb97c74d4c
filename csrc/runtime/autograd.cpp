// The helpers of structgen/autograd.h: what derivative formulas and autograd kernels call.
#include <structgen/autograd.h>

#include <ATen/ExpandUtils.h>
#include <ATen/ops/clamp_max.h>
#include <ATen/ops/clamp_min.h>
#include <ATen/ops/div.h>
#include <ATen/ops/empty_strided.h>
#include <ATen/ops/eq.h>
#include <ATen/ops/ge.h>
#include <ATen/ops/imag.h>
#include <ATen/ops/real.h>
#include <ATen/ops/le.h>
#include <ATen/ops/logical_and.h>
#include <ATen/ops/maximum.h>
#include <ATen/ops/minimum.h>
#include <ATen/ops/ones_like.h>
#include <ATen/ops/scalar_tensor.h>
#include <ATen/ops/zeros_like.h>
#include <c10/util/Exception.h>
#include <torch/csrc/autograd/VariableTypeUtils.h>

#include <cmath>

namespace structgen::autograd {

at::Tensor sum_to(const at::Tensor& grad, const TensorMeta& like) {
  at::Tensor g = at::sum_to(grad, c10::SymIntArrayRef(like.sizes));
  return g.scalar_type() == like.dtype ? g : g.to(like.dtype);
}

at::Tensor as_tensor(const at::Scalar& value, const at::Tensor& like) {
  return at::scalar_tensor(value, like.options());
}

at::Tensor nonneg_real(const at::Tensor& x) {
  if (!x.is_complex()) return at::ge(x, 0);
  return at::logical_and(at::eq(at::imag(x), 0), at::ge(at::real(x), 0));
}
bool nonneg_real(const at::Scalar& x) {
  if (x.isComplex()) return x.toComplexDouble().imag() == 0 && x.toComplexDouble().real() >= 0;
  return x.toDouble() >= 0;
}

at::Tensor maximum(const at::Tensor& a, const at::Tensor& b) { return at::maximum(a, b); }
at::Tensor maximum(const at::Tensor& a, const at::Scalar& b) { return at::clamp_min(a, b); }
at::Tensor maximum(const at::Scalar& a, const at::Tensor& b) { return at::clamp_min(b, a); }
at::Tensor minimum(const at::Tensor& a, const at::Tensor& b) { return at::minimum(a, b); }
at::Tensor minimum(const at::Tensor& a, const at::Scalar& b) { return at::clamp_max(a, b); }
at::Tensor minimum(const at::Scalar& a, const at::Tensor& b) { return at::clamp_max(b, a); }
at::Tensor trunc_div(const at::Tensor& a, const at::Tensor& b) { return at::div(a, b, "trunc"); }
at::Tensor trunc_div(const at::Tensor& a, const at::Scalar& b) { return at::div(a, b, "trunc"); }

namespace {

// a op b in the wider of the two kinds: complex, else floating, else integral (bool as integral).
template <class Op>
at::Scalar arithmetic(const at::Scalar& a, const at::Scalar& b, Op op) {
  if (a.isComplex() || b.isComplex()) return at::Scalar(op(a.toComplexDouble(), b.toComplexDouble()));
  if (a.isFloatingPoint() || b.isFloatingPoint()) return at::Scalar(op(a.toDouble(), b.toDouble()));
  return at::Scalar(op(a.toLong(), b.toLong()));
}

}  // namespace

at::Scalar scalar_add(const at::Scalar& a, const at::Scalar& b) {
  return arithmetic(a, b, [](auto x, auto y) { return x + y; });
}
at::Scalar scalar_sub(const at::Scalar& a, const at::Scalar& b) {
  return arithmetic(a, b, [](auto x, auto y) { return x - y; });
}
at::Scalar scalar_mul(const at::Scalar& a, const at::Scalar& b) {
  return arithmetic(a, b, [](auto x, auto y) { return x * y; });
}
at::Scalar scalar_div(const at::Scalar& a, const at::Scalar& b) {
  if (a.isComplex() || b.isComplex()) return at::Scalar(a.toComplexDouble() / b.toComplexDouble());
  return at::Scalar(a.toDouble() / b.toDouble());  // true division, as the formula language's '/'
}
at::Scalar scalar_neg(const at::Scalar& a) { return -a; }
bool scalar_eq(const at::Scalar& a, const at::Scalar& b) {
  if (a.isComplex() || b.isComplex()) return a.toComplexDouble() == b.toComplexDouble();
  return a.toDouble() == b.toDouble();
}
bool scalar_ne(const at::Scalar& a, const at::Scalar& b) { return !scalar_eq(a, b); }
bool scalar_lt(const at::Scalar& a, const at::Scalar& b) { return a.toDouble() < b.toDouble(); }
bool scalar_le(const at::Scalar& a, const at::Scalar& b) { return a.toDouble() <= b.toDouble(); }
bool scalar_gt(const at::Scalar& a, const at::Scalar& b) { return a.toDouble() > b.toDouble(); }
bool scalar_ge(const at::Scalar& a, const at::Scalar& b) { return a.toDouble() >= b.toDouble(); }

at::Tensor on_meta(const at::Tensor& t) {
  if (!t.defined()) return t;
  return at::empty_strided_symint(t.sym_sizes(), t.sym_strides(), t.options().device(at::kMeta));
}
std::optional<at::Tensor> on_meta(const std::optional<at::Tensor>& t) {
  return t.has_value() ? std::optional<at::Tensor>(on_meta(*t)) : std::nullopt;
}
std::vector<at::Tensor> on_meta(at::TensorList ts) {
  std::vector<at::Tensor> out;
  out.reserve(ts.size());
  for (const auto& t : ts) out.push_back(on_meta(t));
  return out;
}

at::Tensor not_implemented(std::string_view op, std::string_view input) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "the derivative for '", input, "' of ", op, " is not implemented.");
  return at::Tensor();
}

void bump_version(const at::Tensor& t) {
  if (t.defined()) torch::autograd::increment_version(t);
}

at::Tensor primal(const at::Tensor& t) { return has_tangent(t) ? t._fw_primal(/*level=*/0) : t; }
std::optional<at::Tensor> primal(const std::optional<at::Tensor>& t) {
  return t.has_value() ? std::optional<at::Tensor>(primal(*t)) : std::nullopt;
}
at::Tensor tangent(const at::Tensor& t) {
  if (!t.defined()) return t;
  const at::Tensor g = t._fw_grad(/*level=*/0);
  return g.defined() ? g : at::zeros_like(primal(t));
}
std::optional<at::Tensor> tangent(const std::optional<at::Tensor>& t) {
  return t.has_value() ? std::optional<at::Tensor>(tangent(*t)) : std::nullopt;
}
std::vector<at::Tensor> tangent(at::TensorList ts) {
  std::vector<at::Tensor> out;
  out.reserve(ts.size());
  for (const auto& t : ts) out.push_back(tangent(t));
  return out;
}
void set_tangent(const at::Tensor& result, const at::Tensor& tangent) {
  at::Tensor t = tangent.scalar_type() == result.scalar_type() ? tangent : tangent.to(result.scalar_type());
  if (!t.sym_sizes().equals(result.sym_sizes())) t = t.expand_symint(result.sym_sizes()).clone();
  result._set_fw_grad(t, /*level=*/0, /*is_inplace_op=*/false);
}
void set_tangents(const std::vector<at::Tensor>& results, const std::vector<at::Tensor>& tangents) {
  TORCH_INTERNAL_ASSERT(results.size() == tangents.size(), "a tangent per output element");
  for (size_t i = 0; i < results.size(); ++i) {
    if (tangents[i].defined() && torch::autograd::isDifferentiableType(results[i].scalar_type())) {
      set_tangent(results[i], tangents[i]);
    }
  }
}
void forward_not_implemented(std::string_view overload) {
  TORCH_CHECK_NOT_IMPLEMENTED(false, "Trying to use forward AD with ", overload,
                              " that does not support it (docs/autograd.md: its derivatives have no "
                              "'result:' formula)");
}

void check_out_not_differentiable(std::string_view overload, bool any_input_requires_grad) {
  TORCH_CHECK(!any_input_requires_grad, overload,
              "(): functions with out=... arguments don't support automatic differentiation, but one of "
              "the arguments requires grad.");
}

}  // namespace structgen::autograd
