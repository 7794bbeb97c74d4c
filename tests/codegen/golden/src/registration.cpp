// @generated from native_functions.yaml by codegen/templates/registration.cpp.j2 (generator 0.6.0) — DO NOT EDIT.
// Regenerate with: python -m structgen.codegen (run by the CMake build)
// The schemas of every fixture_ops operator, verbatim from the manifest; torch parses them again.
#include <structgen/autotune.h>
#include <structgen/functionalize.h>
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

#include <vector>

namespace {

// const: a non-const vector would bind to def(schema, Func&&).
void define(torch::Library& m, const char* schema, const std::vector<at::Tag>& tags) { m.def(schema, tags); }

}  // namespace

// The project header's names for this extension's autotuner (<structgen/autotune.h>).
const char* structgen::autotune::project_cache_name() { return "fixture-cache"; }
const char* structgen::autotune::project_env_prefix() { return "FIXTURE_OPS"; }
const char* structgen::autotune::project_package() { return "fixture_pkg.ops"; }

TORCH_LIBRARY(fixture_ops, m) {
  define(m, R"schema(add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor)schema", {at::Tag::pointwise});
  define(m, R"schema(add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!))schema", {at::Tag::pointwise});
  define(m, R"schema(amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor)schema", {});
  define(m, R"schema(aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max))schema", {});
  define(m, R"schema(my_fused(Tensor x, Tensor? bias, float scale=1.0, str mode="fast") -> Tensor)schema", {});
  define(m, R"schema(scaled_act(Tensor self, Tensor other, *, Scalar alpha=1, str mode='relu') -> Tensor)schema", {at::Tag::pointwise});
  define(m, R"schema(scaled_tanh(Tensor self, *, Scalar alpha=1) -> Tensor)schema", {at::Tag::pointwise});
  define(m, R"schema(cumprod(Tensor self, int dim) -> Tensor)schema", {});
  define(m, R"schema(tril(Tensor self, SymInt diagonal=0) -> Tensor)schema", {});
  define(m, R"schema(_scaled_tanh_backward_self(Tensor grad, Tensor self, Scalar alpha=1) -> Tensor)schema", {at::Tag::pointwise, at::Tag::generated});
  define(m, R"schema(add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!))schema", {at::Tag::pointwise});
  define(m, R"schema(bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!))schema", {});
  define(m, R"schema(amax.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!))schema", {at::Tag::reduction});
  define(m, R"schema(aminmax.out(Tensor self, *, int? dim=None, bool keepdim=False, Tensor(a!) min, Tensor(b!) max) -> (Tensor(a!) min, Tensor(b!) max))schema", {});
  define(m, R"schema(scaled_act.out(Tensor self, Tensor other, *, Scalar alpha=1, str mode='relu', Tensor(a!) out) -> Tensor(a!))schema", {at::Tag::pointwise});
  define(m, R"schema(scaled_tanh.out(Tensor self, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!))schema", {at::Tag::pointwise});
  define(m, R"schema(cumprod.out(Tensor self, int dim, *, Tensor(a!) out) -> Tensor(a!))schema", {});
  define(m, R"schema(tril.out(Tensor self, SymInt diagonal=0, *, Tensor(a!) out) -> Tensor(a!))schema", {});
  define(m, R"schema(_scaled_tanh_backward_self.out(Tensor grad, Tensor self, Scalar alpha=1, *, Tensor(a!) out) -> Tensor(a!))schema", {at::Tag::pointwise, at::Tag::generated});
}

// Functional overloads have no derivative (the manifest declares none): backward through them
// raises. torch's C++ fallback redispatches at once when no input requires grad, so it costs
// an eager call next to nothing (a Python autograd kernel cost ~8 us per call).
TORCH_LIBRARY_IMPL(fixture_ops, Autograd, m) {
  m.impl("amax", torch::autograd::autogradNotImplementedFallback());
  m.impl("aminmax", torch::autograd::autogradNotImplementedFallback());
  m.impl("my_fused", torch::autograd::autogradNotImplementedFallback());
  m.impl("scaled_act", torch::autograd::autogradNotImplementedFallback());
  m.impl("_scaled_tanh_backward_self", torch::autograd::autogradNotImplementedFallback());
}

// torch.compile traces out= and inplace overloads as their functional sibling (functionalize.h).
TORCH_LIBRARY_IMPL(fixture_ops, Functionalize, m) {
  m.impl("add.out", structgen::functionalize_as("add.Tensor"));
  m.impl("add_.Tensor", structgen::functionalize_as("add.Tensor"));
  m.impl("amax.out", structgen::functionalize_as("amax"));
  m.impl("aminmax.out", structgen::functionalize_as("aminmax"));
  m.impl("scaled_act.out", structgen::functionalize_as("scaled_act"));
  m.impl("scaled_tanh.out", structgen::functionalize_as("scaled_tanh"));
  m.impl("_scaled_tanh_backward_self.out", structgen::functionalize_as("_scaled_tanh_backward_self"));
  m.impl("cumprod.out", structgen::functionalize_as("cumprod"));
  m.impl("tril.out", structgen::functionalize_as("tril"));
}
