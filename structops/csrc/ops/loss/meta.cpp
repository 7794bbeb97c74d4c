// Hand-written meta function of cross_entropy_loss (`meta: custom` in the manifest): the target's
// dtype decides its shape rule (class indices: self without the class dim; class probabilities:
// self's shape, and the result promotes with it), which the rule language cannot branch on. Reads
// no data.
#include <structops/ops/cross_entropy_loss.h>

#include <c10/core/ScalarType.h>
#include <c10/util/Exception.h>
#include <ops/runtime_names.h>

namespace structops::meta {

cross_entropy_loss_meta cross_entropy_loss(const at::Tensor& self, const at::Tensor& target,
                                           const std::optional<at::Tensor>& weight, int64_t reduction,
                                           c10::SymInt ignore_index, double label_smoothing) {
  constexpr std::string_view op = "cross_entropy_loss";
  TORCH_CHECK(self.dim() >= 1, op, ": 'self' must have a class dim, got a 0-dim tensor");
  TORCH_CHECK(at::isFloatingType(self.scalar_type()), op, ": 'self' must have a floating dtype, got ",
              self.scalar_type());
  const int64_t class_dim = self.dim() >= 2 ? 1 : 0;
  const bool probabilities = at::isFloatingType(target.scalar_type());
  c10::SymDimVector per_sample(self.sym_sizes().begin(), self.sym_sizes().end());
  per_sample.erase(per_sample.begin() + class_dim);
  if (probabilities) {
    TORCH_CHECK(target.sym_sizes() == self.sym_sizes(), op,
                ": class-probability 'target' must have the shape of 'self' ", self.sym_sizes(), ", got ",
                target.sym_sizes());
    TORCH_CHECK(ignore_index < 0, op,
                ": ignore_index applies to class indices, not to class probabilities; "
                "got ignore_index=",
                ignore_index, " with a ", target.scalar_type(),
                " 'target' (any negative "
                "ignore_index means none, as torch)");
  } else {
    TORCH_CHECK(target.scalar_type() == at::kLong, op, ": 'target' has dtype ", target.scalar_type(),
                ": class indices must be Long (or give class probabilities in self's dtype)");
    TORCH_CHECK(target.sym_sizes() == c10::SymIntArrayRef(per_sample), op,
                ": class-index 'target' must have shape ", c10::SymIntArrayRef(per_sample),
                " ('self' without its class dim ", class_dim, "), got ", target.sym_sizes());
  }
  if (weight.has_value()) {
    TORCH_CHECK(weight->dim() == 1 && weight->sym_size(0) == self.sym_size(class_dim), op,
                ": 'weight' must have shape [", self.sym_size(class_dim), "] (one per class), got ",
                weight->sym_sizes());
    TORCH_CHECK(probabilities || weight->scalar_type() == self.scalar_type(), op, ": 'weight' has dtype ",
                weight->scalar_type(), " but 'self' has ", self.scalar_type(),
                "; with class indices they must have the same dtype");
  }
  TORCH_CHECK(reduction >= 0 && reduction <= 2, op, ": reduction must be 0 (none), 1 (mean) or 2 (sum), got ",
              reduction);
  TORCH_CHECK(label_smoothing >= 0 && label_smoothing <= 1, op, ": label_smoothing must be in [0, 1], got ",
              label_smoothing);
  cross_entropy_loss_meta meta;
  if (reduction == 0) meta.out.sizes = per_sample;  // else a 0-dim result
  // Class probabilities promote with self and weight, as torch's -(log_softmax(self) * target * weight).
  at::ScalarType dtype = self.scalar_type();
  if (probabilities) dtype = c10::promoteTypes(dtype, target.scalar_type());
  if (probabilities && weight.has_value()) dtype = c10::promoteTypes(dtype, weight->scalar_type());
  TORCH_CHECK(at::isFloatingType(dtype), op, ": 'self' (", self.scalar_type(), "), 'target' (",
              target.scalar_type(), ")", weight.has_value() ? " and 'weight'" : "", " promote to ", dtype,
              ", which cross_entropy_loss does not support (supported: float16, bfloat16, float32, float64)");
  meta.out.dtype = dtype;
  return meta;
}

}  // namespace structops::meta
