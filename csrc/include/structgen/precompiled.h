// The precompiled header of generated extensions (CMakeLists.txt: target_precompile_headers):
// the torch headers most translation units include, parsed once per build instead of once per
// file. torch's headers only, so editing the runtime or a project never rebuilds it; a file still includes
// what it uses (this header is an optimisation the build may drop, never a dependency). Only headers that
// leave few template instantiations pending: gcc does those in every file that loads the header, ~2 s more
// per file with ATen/ops/*.h's includes (DeviceGuard, IValue), which the glue's header (precompiled_glue.h)
// holds instead. A kernel family calls ATen through Tensor methods or at::_ops::<op>::call
// (ATen/ops/<op>_ops.h), not ATen/ops/<op>.h.
#pragma once

#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>
#include <c10/util/SmallVector.h>
