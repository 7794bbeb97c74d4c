// @generated from native_functions.yaml by codegen/templates/wrappers.cpp.j2 — DO NOT EDIT.
// Regenerate with: python -m codegen (run by the CMake build)
// CUDA kernels: the functional, inplace and out= variants of each structured op,
// derived from its meta function and impl, and their registration with the dispatcher.
#include <structops/structured.h>

#include <torch/library.h>

namespace structops {
namespace {

}  // namespace

TORCH_LIBRARY_IMPL(structops, CUDA, m) {
}

}  // namespace structops
