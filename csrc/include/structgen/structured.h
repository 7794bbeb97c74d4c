// Runtime of structured kernels: what the generated functional / inplace / out= wrappers call.
//
// A meta function returns one TensorSpec per output; the wrappers turn it into a fresh tensor
// (functional), check and resize a user's `out` (out=), or check `self` (inplace) with PyTorch's
// rules and messages. Everything works on SymInt so fake tensors with symbolic shapes
// (torch.compile(dynamic=True), opcheck's dynamic AOT test) go through the same code.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/SymIntArrayRef.h>
#include <c10/util/ArrayRef.h>

#include <initializer_list>
#include <optional>
#include <string_view>
#include <vector>

namespace structgen {

// Shape, strides and dtype of one output, as computed by a meta function. Empty `strides`
// means contiguous (PyTorch's set_output_raw_strided convention), which also keeps symbolic
// shapes free of the max(size, 1) terms explicit contiguous strides would need.
struct TensorSpec {
  c10::SymDimVector sizes;
  c10::SymDimVector strides;
  at::ScalarType dtype;
};

// A tensor argument with the name the user knows it by, for error messages.
struct NamedTensor {
  std::string_view name;
  const at::Tensor& tensor;
};

// Equality (order) of sizes or strides. SymInt's operator== goes through an out-of-line SymBool guard
// even for plain integers (a few ns each, and a pointwise call compares every dim of every operand
// several times: +0.25 us on a 6-dim 1,000-element mul); eager tensors' values compare as integers,
// symbolic ones guard as before.
inline bool same(const c10::SymInt& a, const c10::SymInt& b) {
  if (!a.is_heap_allocated() && !b.is_heap_allocated()) return *a.maybe_as_int() == *b.maybe_as_int();
  return a == b;
}
inline bool same(const c10::SymInt& a, int64_t b) {
  if (!a.is_heap_allocated()) return *a.maybe_as_int() == b;
  return a == b;
}
inline bool less(const c10::SymInt& a, const c10::SymInt& b) {
  if (!a.is_heap_allocated() && !b.is_heap_allocated()) return *a.maybe_as_int() < *b.maybe_as_int();
  return a < b;
}

// Equal sizes (or strides); on symbolic sizes this guards, as comparing shapes must.
inline bool same_sizes(c10::SymIntArrayRef a, c10::SymIntArrayRef b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!same(a[i], b[i])) return false;
  }
  return true;
}

// What a written tensor (out=, inplace self) of another dtype than the result's gets: the result
// cast into it where at::canCast allows (TensorIterator's rule), or an error (torch's mm, gather,
// softmax, ...: the manifest's `out_dtype: exact`).
enum class OutDtype { castable, exact };

// A fresh output for a functional call.
at::Tensor allocate(const TensorSpec& spec, at::Device device);

// An absent Tensor? argument as an undefined tensor, so every tensor argument takes the checks.
const at::Tensor& tensor_or_undefined(const std::optional<at::Tensor>& t);

// The device a call runs on, as torch picks it: that of the first defined tensor that is not a CPU
// scalar (0-dim CPU tensor), else that of the first defined tensor, else `otherwise`.
at::Device device_of(c10::ArrayRef<NamedTensor> tensors, at::Device otherwise);

// All defined tensor arguments must live on `device` ("expected all tensors on cpu, but ...").
// `cpu_scalars`: 0-dim CPU tensors are accepted with any device, as TensorIterator (torch's
// pointwise ops) takes them; other ops reject them, as torch's do.
void check_devices(std::string_view op, at::Device device, c10::ArrayRef<NamedTensor> tensors,
                   bool cpu_scalars);

// out=: PyTorch's rules, in PyTorch's order: no grad through out=, device, dtype (OutDtype),
// internal overlap and overlap with inputs (full overlap, out=self, only where the op allows
// it: pointwise ops), then resize (with PyTorch's warning when `out` had elements).
void prepare_out(std::string_view op, std::string_view name, at::Tensor& out, const TensorSpec& spec,
                 at::Device device, bool allow_full_overlap, OutDtype out_dtype,
                 c10::ArrayRef<NamedTensor> inputs);

// inplace: the result must have self's shape and a dtype self takes (OutDtype); self must not
// overlap itself or partially overlap another input.
void check_inplace(std::string_view op, const at::Tensor& self, const TensorSpec& spec, OutDtype out_dtype,
                   c10::ArrayRef<NamedTensor> inputs);

// The impl contract: the tensor an impl writes has exactly the spec's sizes, strides and
// dtype. When the user's out (or self) does not, the impl writes a temporary that commit()
// copies back; otherwise it writes the user's tensor directly. An impl that walks any strides
// (`any_strides`: a generated pointwise kernel) writes the user's tensor in its own layout, as
// TensorIterator does: a contiguous out= with a transposed input had cost a temporary and a
// transposing copy, 0.4-0.5x torch.
class OutputTarget {
 public:
  OutputTarget(at::Tensor& dest, const TensorSpec& spec, bool must_not_alias_inputs,
               c10::ArrayRef<NamedTensor> inputs, bool any_strides);
  const at::Tensor& tensor() const { return target_; }
  void commit();

 private:
  at::Tensor& dest_;
  at::Tensor target_;
  bool proxy_ = false;
};

// Tensor(a!)[] outputs (split_with_sizes_copy): one spec per element.
std::vector<at::Tensor> allocate(const std::vector<TensorSpec>& specs, at::Device device);
// out= with a list: it must have one tensor per spec; then each element as prepare_out, named out[i].
void prepare_out(std::string_view op, std::string_view name, at::TensorList out,
                 const std::vector<TensorSpec>& specs, at::Device device, bool allow_full_overlap,
                 OutDtype out_dtype, c10::ArrayRef<NamedTensor> inputs);

// One OutputTarget per element of a list output; tensors() is what the impl writes.
class OutputTargets {
 public:
  OutputTargets(at::TensorList dest, const std::vector<TensorSpec>& specs);
  at::TensorList tensors() const { return tensors_; }
  void commit();

 private:
  std::vector<at::Tensor> dest_;  // handles sharing the user's tensors (targets_ refer to them)
  std::vector<OutputTarget> targets_;
  std::vector<at::Tensor> tensors_;
};

}  // namespace structgen
