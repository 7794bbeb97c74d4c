// @generated from native_functions.yaml by codegen/templates/registration.cpp.j2 — DO NOT EDIT.
// Regenerate with: python -m codegen (run by the CMake build)
// The schemas of every structops operator, verbatim from the manifest; torch parses them again.
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

#include <utility>
#include <vector>

// Tag::out and Tag::inplace exist from torch 2.12/2.13 on; CMake defines these where they do.
#ifndef STRUCTOPS_TORCH_HAS_TAG_OUT
#define STRUCTOPS_TORCH_HAS_TAG_OUT 0
#endif
#ifndef STRUCTOPS_TORCH_HAS_TAG_INPLACE
#define STRUCTOPS_TORCH_HAS_TAG_INPLACE 0
#endif

namespace {

enum class KindTag { none, out, inplace };

void define(torch::Library& m, const char* schema, KindTag kind, std::vector<at::Tag> tags) {
#if STRUCTOPS_TORCH_HAS_TAG_OUT
  if (kind == KindTag::out) tags.insert(tags.begin(), at::Tag::out);
#endif
#if STRUCTOPS_TORCH_HAS_TAG_INPLACE
  if (kind == KindTag::inplace) tags.insert(tags.begin(), at::Tag::inplace);
#endif
  m.def(schema, std::as_const(tags));  // const: a non-const vector would bind to def(schema, Func&&)
}

}  // namespace

TORCH_LIBRARY(structops, m) {
  define(m, R"schema(add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!))schema", KindTag::out, {at::Tag::pointwise});
  define(m, R"schema(add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor)schema", KindTag::none, {at::Tag::pointwise});
  define(m, R"schema(add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!))schema", KindTag::inplace, {at::Tag::pointwise});
  define(m, R"schema(bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!))schema", KindTag::out, {});
  define(m, R"schema(amax.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!))schema", KindTag::out, {at::Tag::reduction});
  define(m, R"schema(amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor)schema", KindTag::none, {});
  define(m, R"schema(aminmax.out(Tensor self, *, int? dim=None, bool keepdim=False, Tensor(a!) min, Tensor(b!) max) -> (Tensor(a!) min, Tensor(b!) max))schema", KindTag::out, {});
  define(m, R"schema(aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max))schema", KindTag::none, {});
  define(m, R"schema(my_fused(Tensor x, Tensor? bias, float scale=1.0, str mode="fast") -> Tensor)schema", KindTag::none, {});
  define(m, R"schema(scaled_act.out(Tensor self, Tensor other, *, Scalar alpha=1, str mode='relu', Tensor(a!) out) -> Tensor(a!))schema", KindTag::out, {at::Tag::pointwise});
  define(m, R"schema(scaled_act(Tensor self, Tensor other, *, Scalar alpha=1, str mode='relu') -> Tensor)schema", KindTag::none, {at::Tag::pointwise});
}

// Functional overloads have no derivative (the manifest declares none): backward through them
// raises. torch's C++ fallback redispatches at once when no input requires grad, so it costs
// an eager call next to nothing (a Python autograd kernel cost ~8 us per call).
TORCH_LIBRARY_IMPL(structops, Autograd, m) {
  m.impl("add.Tensor", torch::autograd::autogradNotImplementedFallback());
  m.impl("amax", torch::autograd::autogradNotImplementedFallback());
  m.impl("aminmax", torch::autograd::autogradNotImplementedFallback());
  m.impl("my_fused", torch::autograd::autogradNotImplementedFallback());
  m.impl("scaled_act", torch::autograd::autogradNotImplementedFallback());
}
