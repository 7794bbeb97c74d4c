// The boxed kernels' argument conversions (structgen/boxed.h).
#include <structgen/boxed.h>

#include <c10/util/Exception.h>

namespace structgen::boxed {

std::optional<at::Tensor> optional_tensor(const c10::IValue& v) {
  if (v.isNone()) return std::nullopt;
  return v.toTensor();
}

std::vector<c10::SymInt> sym_ints(const c10::IValue& v) {
  if (!v.isIntList()) return v.toSymIntVector();
  const c10::List<int64_t> ints = v.toIntList();
  std::vector<c10::SymInt> out;
  out.reserve(ints.size());
  for (const int64_t i : ints) out.emplace_back(i);
  return out;
}

c10::OptionalArray<int64_t> optional_ints(const c10::IValue& v) {
  if (v.isNone()) return {};
  return c10::OptionalArray<int64_t>(v.toIntVector());
}

c10::OptionalArray<c10::SymInt> optional_sym_ints(const c10::IValue& v) {
  if (v.isNone()) return {};
  return c10::OptionalArray<c10::SymInt>(sym_ints(v));
}

c10::OptionalArray<double> optional_doubles(const c10::IValue& v) {
  if (v.isNone()) return {};
  return c10::OptionalArray<double>(v.toDoubleVector());
}

std::vector<at::Scalar> scalars(const c10::IValue& v) {
  std::vector<at::Scalar> out;
  for (const c10::IValue& e : v.toListRef()) out.push_back(e.toScalar());
  return out;
}

void check_bools(const c10::List<bool>& list, size_t n) {
  TORCH_CHECK_VALUE(list.size() == n, "expected a list of ", n, " bools, got ", list.size());
}

}  // namespace structgen::boxed
