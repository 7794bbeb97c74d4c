// @generated from native_functions.yaml by codegen/templates/autograd.cpp.j2 — DO NOT EDIT.
// Regenerate with: python -m codegen (run by the CMake build)
// Autograd kernels of the differentiable structured ops (codegen/dest/autograd.py): a backward
// Node per functional overload, recorded as ATen's own kernels record theirs, with the formulas
// of the manifest's `derivatives:` (or derived from a pointwise formula) in apply().
#include <structops/autograd.h>

#include <ATen/TensorOperators.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/copy.h>
#include <torch/csrc/autograd/VariableTypeUtils.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/library.h>

#include <array>
#include <memory>
#include <tuple>
#include <vector>

namespace structops {
namespace {

using torch::autograd::variable_list;

}  // namespace
}  // namespace structops

TORCH_LIBRARY_IMPL(structops, Autograd, m) {
}
