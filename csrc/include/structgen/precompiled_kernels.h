// The precompiled header of the generated CPU pointwise kernels (cmake/generated_extension.cmake:
// <target>_kernels): c10's scalar types and the standard headers structgen/cpu/rows.h includes, nothing of
// ATen. A file that loads torch's precompiled header pays ~2.5 s for it even when it uses nothing (gcc redoes
// the headers' pending template instantiations in every file); this one costs ~0.3 s.
#pragma once

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>
#include <c10/util/SmallVector.h>
#include <c10/util/complex.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>
