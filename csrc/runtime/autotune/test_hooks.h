// What tests observe and provoke in the autotune runtime besides its switches (config.h):
// counters of timed variants and of decisions read from disk (structops.autotune.counters()),
// and a variant made to raise while it is timed (STRUCTOPS_AUTOTUNE_FAIL).
#pragma once

#include <structops/autotune.h>

#include <cstddef>
#include <optional>

namespace structops::autotune {

void count_timed();
void count_disk_hit();

// Raises if STRUCTOPS_AUTOTUNE_FAIL names op's variant `variant`: how the tests check that a
// failing variant is excluded (no kernel fails on demand).
void raise_if_injected(const OpKernels& op, size_t variant);

// The time STRUCTOPS_AUTOTUNE_FAKE_US gives op's `variant` in round `round`, if it gives one.
std::optional<double> injected_time(const OpKernels& op, size_t variant, int round);

}  // namespace structops::autotune
