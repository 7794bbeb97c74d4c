// What the hand-written meta functions of csrc/ops/index/meta.cpp share beyond their generated
// declarations: masked_select's data-free step, which its fake impl (python/structops/fake.py,
// through structops._C) runs too, so that fake and real calls check the same things.
#pragma once

#include <ATen/core/Tensor.h>
#include <structgen/rules.h>
#include <ops/runtime_names.h>

namespace structops::meta {

// masked_select's checks and the broadcast shape of self and mask; reads no data.
rules::Dims masked_select_shape(const at::Tensor& self, const at::Tensor& mask);

}  // namespace structops::meta
