// Stand-in for CUDA's <cuda_runtime_api.h> in the emulated build (tests/cuda_emu): see structops_emu/cuda.h.
#pragma once
#include <structops_emu/cuda.h>
