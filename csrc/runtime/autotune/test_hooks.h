// What tests observe and provoke in the autotune runtime besides its switches (config.h):
// counters of timed variants and of decisions read from disk (<package>.autotune.counters()),
// and a variant made to raise while it is timed (<PREFIX>_AUTOTUNE_FAIL).
#pragma once

#include <structgen/autotune.h>

#include <cstddef>
#include <optional>

namespace structgen::autotune {

void count_timed();
void count_disk_hit();

// Raises if <PREFIX>_AUTOTUNE_FAIL names op's variant `variant`: how the tests check that a
// failing variant is excluded (no kernel fails on demand).
void raise_if_injected(const OpKernels& op, size_t variant);

// The time <PREFIX>_AUTOTUNE_FAKE_US gives op's `variant` in round `round`, if it gives one.
std::optional<double> injected_time(const OpKernels& op, size_t variant, int round);

}  // namespace structgen::autotune
