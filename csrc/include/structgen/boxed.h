// What a generated boxed kernel (codegen/api/boxed.py) needs beyond IValue's own accessors to read
// its arguments off the dispatcher's stack: the conversions c10's unboxing templates would
// instantiate once per kernel signature, here plain functions compiled once (runtime/boxed.cpp).
#pragma once

#include <ATen/core/ivalue.h>

#include <array>
#include <cstddef>
#include <optional>
#include <vector>

namespace structgen::boxed {

std::optional<at::Tensor> optional_tensor(const c10::IValue& v);
// int lists arrive as ints or SymInts (an int[] passed where SymInt[] is declared, and back).
std::vector<c10::SymInt> sym_ints(const c10::IValue& v);
c10::OptionalArray<int64_t> optional_ints(const c10::IValue& v);
c10::OptionalArray<c10::SymInt> optional_sym_ints(const c10::IValue& v);
c10::OptionalArray<double> optional_doubles(const c10::IValue& v);
std::vector<at::Scalar> scalars(const c10::IValue& v);
// bool[N]: its length checked, as the schema fixes it.
void check_bools(const c10::List<bool>& list, size_t n);

template <size_t N>
std::array<bool, N> bools(const c10::IValue& v) {
  const c10::List<bool> list = v.toBoolList();
  check_bools(list, N);
  std::array<bool, N> out{};
  for (size_t i = 0; i < N; ++i) out[i] = list.get(i);
  return out;
}

}  // namespace structgen::boxed
