// Functionalization of out= and inplace overloads: what torchgen generates for ATen's
// RegisterFunctionalization.cpp, as one boxed kernel for every generated op.
//
// torch.compile (and torch.export, opcheck's AOT tests) traces functional graphs. A written
// overload (`add.out`, `add_.Tensor`) becomes a call of its functional sibling (`add.Tensor`) on
// the unwrapped inputs, whose result replaces the written tensors. So the graph holds only
// functional calls, which every backend lowers as a plain fallback kernel; no Tag.out or
// Tag.inplace is needed (torch 2.11 has neither), and Inductor never rewrites the functional
// call back into the out= overload (its out-variant lowering in 2.13 mis-orders arguments, cannot
// size symbolic outputs and has no AOTInductor path for custom ops).
#pragma once

#include <torch/library.h>

#include <string>

namespace structgen {

// The Functionalize kernel of a written overload whose functional sibling is `functional`
// (`"add.Tensor"`, `"add"` for the default overload). The functional's returns replace the
// written arguments in schema order: `self` for an inplace overload, the outs for an out= one.
// `dtype_from_written` (the manifest's `out_dtype: dtype_argument`): a missing `dtype=` becomes
// the first written tensor's dtype in the functional call, as the written overload computes it.
torch::CppFunction functionalize_as(std::string functional, bool dtype_from_written = false);

}  // namespace structgen
