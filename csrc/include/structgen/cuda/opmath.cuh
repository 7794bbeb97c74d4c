// The type CUDA kernels compute in for a storage type: float for half and bfloat16, the type
// itself otherwise (torch's opmath). Shared by the generated pointwise kernels (pointwise.cuh) and
// the hand-written reductions (block_reduce.cuh). CUDA headers only, no torch.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace structgen::cuda_kernels {

template <typename T>
struct OpMath {
  using type = T;
};
template <>
struct OpMath<__half> {
  using type = float;
};
template <>
struct OpMath<__nv_bfloat16> {
  using type = float;
};
template <typename T>
using opmath_t = typename OpMath<T>::type;

}  // namespace structgen::cuda_kernels
