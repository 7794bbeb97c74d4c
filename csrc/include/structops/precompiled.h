// The precompiled header of structops' libraries (CMakeLists.txt: target_precompile_headers):
// the torch headers most translation units include, parsed once per build instead of once per
// file. torch's headers only, so editing structops never rebuilds it; a file still includes what
// it uses (this header is an optimisation the build may drop, never a dependency).
#pragma once

#include <ATen/Dispatch.h>
#include <ATen/OpMathType.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/util/Exception.h>
#include <c10/util/SmallVector.h>
