// @generated from native_functions.yaml by codegen/templates/registration.cpp.j2 — DO NOT EDIT.
// Regenerate with: python -m codegen (run by the CMake build)
// The schemas of every structops operator, verbatim from the manifest; torch parses them again.
#include <torch/library.h>

TORCH_LIBRARY(structops, m) {
  m.def(R"schema(add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!))schema", {at::Tag::out, at::Tag::pointwise});
  m.def(R"schema(add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor)schema", {at::Tag::pointwise});
  m.def(R"schema(add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!))schema", {at::Tag::inplace, at::Tag::pointwise});
  m.def(R"schema(bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!))schema", {at::Tag::out});
  m.def(R"schema(amax.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out) -> Tensor(a!))schema", {at::Tag::out, at::Tag::reduction});
  m.def(R"schema(amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor)schema", {});
  m.def(R"schema(aminmax.out(Tensor self, *, int? dim=None, bool keepdim=False, Tensor(a!) min, Tensor(b!) max) -> (Tensor(a!) min, Tensor(b!) max))schema", {at::Tag::out});
  m.def(R"schema(aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max))schema", {});
  m.def(R"schema(my_fused(Tensor x, Tensor? bias, float scale=1.0, str mode="fast") -> Tensor)schema", {});
  m.def(R"schema(scaled_act.out(Tensor self, Tensor other, *, Scalar alpha=1, str mode='relu', Tensor(a!) out) -> Tensor(a!))schema", {at::Tag::out, at::Tag::pointwise});
  m.def(R"schema(scaled_act(Tensor self, Tensor other, *, Scalar alpha=1, str mode='relu') -> Tensor)schema", {at::Tag::pointwise});
}
