// Stand-in for CUDA's <cuda_runtime_api.h> in the emulated build (tests/cuda_emu): see structgen_emu/cuda.h.
#pragma once
#include <structgen_emu/cuda.h>
