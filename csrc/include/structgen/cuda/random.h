// Where a CUDA random kernel's bits start (structgen/cuda/philox.cuh): the current device's
// default generator's seed and an offset advanced by `increment` (a multiple of 4), taken under
// the generator's lock, as torch's own random kernels take them. While a CUDA graph is captured
// the seed and offset are device pointers the graph's replays update. CUDA torch; the CPU
// emulator's build, which has no CUDA generator, seeds from torch's default CPU generator (its
// next 64 bits), so a seeded emulated run repeats.
#pragma once

#include <structgen/cuda/philox_seed.h>

#include <cstdint>
#include <mutex>

#ifdef STRUCTGEN_CUDA_EMULATION
#include <ATen/CPUGeneratorImpl.h>
#else
#include <ATen/cuda/CUDAGeneratorImpl.h>
#endif

namespace structgen::cuda_host {

inline cuda_kernels::PhiloxSeed philox_seed(uint64_t increment) {
  cuda_kernels::PhiloxSeed s;
#ifdef STRUCTGEN_CUDA_EMULATION
  auto* gen =
      at::get_generator_or_default<at::CPUGeneratorImpl>(std::nullopt, at::detail::getDefaultCPUGenerator());
  std::lock_guard<std::mutex> lock(gen->mutex_);
  s.seed = gen->random64();
#else
  auto* gen = at::get_generator_or_default<at::CUDAGeneratorImpl>(
      std::nullopt, at::cuda::detail::getDefaultCUDAGenerator());
  std::lock_guard<std::mutex> lock(gen->mutex_);
  const at::PhiloxCudaState state = gen->philox_cuda_state(increment);
  if (state.captured_) {
    s.seed_ptr = state.seed_.ptr;
    s.offset_ptr = state.offset_.ptr;
    s.offset_intragraph = static_cast<uint64_t>(state.offset_intragraph_);
  } else {
    s.seed = state.seed_.val;
    s.offset = state.offset_.val;
  }
#endif
  return s;
}

}  // namespace structgen::cuda_host
