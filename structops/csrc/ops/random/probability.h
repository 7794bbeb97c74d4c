// dropout's arguments, read alike by the CPU impl and the CUDA host glue.
#pragma once

#include <c10/util/Exception.h>

#include <optional>

namespace structops::impl {

// p must be a probability (torch's bernoulli_ refuses others, as a RuntimeError). Not a rule
// (which could say 'p >= 0 and p <= 1' now): torch's meta takes any p, so structops' does too.
inline void check_probability(double p) {
  TORCH_CHECK(p >= 0.0 && p <= 1.0, "dropout: p=", p, " must be a probability, in [0, 1]");
}

// torch's native_dropout: train None means training.
inline bool training(std::optional<bool> train) { return !train.has_value() || *train; }

// What a kept element is multiplied by: 1 / (1 - p) in training (0 for p = 1: everything is
// dropped), 1 out of it.
inline double dropout_scale(double p, std::optional<bool> train) {
  return !training(train) ? 1.0 : (p == 1.0 ? 0.0 : 1.0 / (1.0 - p));
}

}  // namespace structops::impl
