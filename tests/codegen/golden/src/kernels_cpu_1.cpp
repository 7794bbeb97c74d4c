// @generated from native_functions.yaml by codegen/templates/kernels_cpu.cpp.j2 — DO NOT EDIT.
// Regenerate with: python -m codegen (run by the CMake build)
// CPU kernels of the pointwise ops in this shard, generated from their formulas: the impl
// brings promoted inputs to the common dtype and runs the formula through cpu::run
// (csrc/include/structops/cpu/pointwise.h) for the dtype it dispatches to.
#include <structops/cpu/pointwise.h>

#include <ATen/OpMathType.h>
#include <c10/util/Exception.h>


namespace structops {
namespace {

}  // namespace

namespace impl {

}  // namespace impl
}  // namespace structops
