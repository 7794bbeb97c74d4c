// What the host glue of a generated CUDA pointwise kernel hands to its launcher: plain data, no
// torch types, so the .cu files that receive it compile without torch (ARCHITECTURE decision 6).
#pragma once

#include <cstdint>

#include <structgen/pointwise/math.h>

namespace structgen {

constexpr int kPointwiseMaxDims = 25;     // torch's MAX_DIMS
constexpr int kPointwiseMaxOperands = 4;  // out + three inputs

// at::ScalarType's numbering, which is part of torch's stable ABI.
enum class Dtype : int8_t {
  UInt8 = 0,
  Int8 = 1,
  Int16 = 2,
  Int32 = 3,
  Int64 = 4,
  Float16 = 5,
  Float32 = 6,
  Float64 = 7,
  ComplexFloat = 9,
  ComplexDouble = 10,
  Bool = 11,
  BFloat16 = 15,
};

struct PointwiseLaunch {
  Dtype dtype;  // the common dtype the promoted inputs have
  int ndim = 0;
  int64_t numel = 0;
  // Innermost dim first, after broadcasting, reordering and merging (cpu::make_geometry); strides
  // in elements; operand 0 is the output.
  int64_t sizes[kPointwiseMaxDims];
  int64_t strides[kPointwiseMaxOperands][kPointwiseMaxDims];
  void* data[kPointwiseMaxOperands];
  // An input given as a 0-dim CPU tensor (a Python number, a CPU scalar beside CUDA tensors): its
  // value, in the input's dtype, travels in the launch and the kernel reads it there (data null,
  // no copy to the device, as torch's CUDA kernels take CPU scalars).
  bool is_value[kPointwiseMaxOperands] = {};
  alignas(16) unsigned char values[kPointwiseMaxOperands][16] = {};
  pw::ScalarArg scalars[kPointwiseMaxOperands];
  bool conditions[kPointwiseMaxOperands];
  void* stream = nullptr;  // cudaStream_t
};

}  // namespace structgen
