// @generated from native_functions.yaml by codegen/templates/composites.cpp.j2 (generator 0.6.0) — DO NOT EDIT.
// Regenerate with: python -m structgen.codegen (run by the CMake build)
// Overloads that are calls of other overloads (the manifest's `composite:`, codegen/composite.py),
// registered as CompositeImplicitAutograd as torch registers its own: the dispatcher runs the
// call, so meta tensors, autograd, torch.compile, vmap and DTensor see the target op. An overload
// of cases calls the first whose optional arguments are given.
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/result_type.h>
#include <ATen/ops/scalar_tensor.h>
#include <structgen/boxed.h>
#include <torch/library.h>

namespace fixture::ops {
using namespace ::structgen;  // the runtime's names, unqualified (codegen/project.py)
namespace {

}  // namespace
}  // namespace fixture::ops

TORCH_LIBRARY_IMPL(fixture_ops, CompositeImplicitAutograd, m) {
}

// vmap decomposes them too (as torch's own composites): the target's batching rule runs once,
// instead of functorch's fallback looping over the batch.
TORCH_LIBRARY_IMPL(fixture_ops, FuncTorchBatchedDecomposition, m) {
}
