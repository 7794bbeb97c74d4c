// The second precompiled header (cmake/generated_extension.cmake: <target>_glue), next to precompiled.h: the
// torch headers the generated glue and the autograd runtime include, which the kernel files do not. As
// precompiled.h: torch's headers only, and an optimisation, never a dependency.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/empty.h>
#include <torch/csrc/autograd/VariableTypeUtils.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/library.h>
