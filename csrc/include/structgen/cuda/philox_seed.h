// Where a philox draw's bits start (structgen/cuda/philox.cuh): plain data the host glue fills
// (structgen/cuda/random.h) and hands to the device code, so it includes nothing of CUDA or torch.
#pragma once

#include <cstdint>

namespace structgen::cuda_kernels {

// The generator's seed and offset, as values, or (graph capture) as device pointers written
// before each replay plus the offset within the graph.
struct PhiloxSeed {
  uint64_t seed = 0, offset = 0;
  const int64_t* seed_ptr = nullptr;
  const int64_t* offset_ptr = nullptr;
  uint64_t offset_intragraph = 0;
};

}  // namespace structgen::cuda_kernels
