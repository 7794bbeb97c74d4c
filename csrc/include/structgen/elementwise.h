// Shape and layout of elementwise results, as PyTorch's TensorIterator computes them, on SymInt.
#pragma once

#include <ATen/core/Tensor.h>

#include <initializer_list>
#include <string_view>

#include <structgen/structured.h>

namespace structgen {

// Output strides for an elementwise result of `shape`, following TensorIterator: all inputs
// contiguous -> contiguous; all channels_last -> channels_last; all dense with equal strides ->
// those strides; otherwise the inputs' stride order (broadcast dims ignored), ties kept in
// dimension order. Returns empty strides for "contiguous" (see TensorSpec).
c10::SymDimVector elementwise_strides(c10::SymIntArrayRef shape, std::initializer_list<NamedTensor> inputs);

}  // namespace structgen
