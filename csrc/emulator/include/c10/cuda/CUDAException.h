// Stand-in for c10/cuda/CUDAException.h in the CPU emulator's build (tests/cuda_emu).
#pragma once

#include <c10/util/Exception.h>
#include <cuda_runtime.h>

#define C10_CUDA_CHECK(expr)                                                            \
  do {                                                                                  \
    const cudaError_t so_error = (expr);                                                \
    TORCH_CHECK(so_error == cudaSuccess, "CUDA error: ", cudaGetErrorString(so_error)); \
  } while (0)
#define C10_CUDA_KERNEL_LAUNCH_CHECK() C10_CUDA_CHECK(cudaGetLastError())
