// @generated from native_functions.yaml by codegen/templates/multi_kernel.cpp.j2 (generator 0.6.0) — DO NOT EDIT.
// Regenerate with: python -m structgen.codegen (run by the CMake build)
// CUDA impls of the ops in this shard that list several CUDA kernels (`kernels:` in the
// manifest): each computes its tuning key and which variants are eligible, and runs the variant
// structgen::autotune::choose picks (structgen/autotune.h).
#include <structgen/autotune.h>
#include <structgen/rules.h>

#include <array>
#include <string_view>

namespace fixture::ops::impl {
using namespace ::structgen;  // the runtime's names, unqualified (codegen/project.py)

}  // namespace fixture::ops::impl
