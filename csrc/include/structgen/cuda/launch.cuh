// The two things device code spells through a macro so that the same .cu files also build as host
// C++ and run on the CPU emulator in CI (tests/cuda_emu, docs/cuda_emulation.md):
//   SO_LAUNCH(grid, block, shared_bytes, stream, kernel<...>)(args...)  every kernel launch;
//   SO_SHARED(T, name, [N][M]);                                         every shared array.
// Under nvcc they are the plain `kernel<<<...>>>(args...)` and `__shared__ T name[N][M]`.
// index_fits() picks between a kernel's 32- and 64-bit index instantiations.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace structgen::cuda_kernels {
// Whether a launch may take its 32-bit index instantiation: `largest`, the largest index it
// computes (grid-stride overshoot included), is below `limit` (2^31 or 2^32 per kernel). The
// emulator can force the 64-bit ones (structgen::emu::set_wide_indices), so that CI runs them on
// small tensors instead of never.
inline bool index_fits(int64_t largest, int64_t limit) {
#if defined(__CUDACC__)
  return largest < limit;
#else
  return !::structgen::emu::wide_indices() && largest < limit;
#endif
}
}  // namespace structgen::cuda_kernels

#if defined(__CUDACC__)
#define SO_LAUNCH(grid, block, shared_bytes, stream, ...) __VA_ARGS__<<<grid, block, shared_bytes, stream>>>
#define SO_SHARED(type, name, dims) __shared__ type name dims
#else
#define SO_LAUNCH(grid, block, shared_bytes, stream, ...)                                                    \
  ::structgen::emu::Launch(grid, block, shared_bytes, stream, #__VA_ARGS__).kernel([&](auto&... so_params) { \
    __VA_ARGS__(so_params...);                                                                               \
  })
#define SO_SHARED(type, name, dims)                                          \
  using so_shared_##name##_t = type dims;                                    \
  static char so_shared_##name##_site; /* identifies the declaration */      \
  auto& name = *static_cast<so_shared_##name##_t*>(::structgen::emu::shared( \
      &so_shared_##name##_site, sizeof(so_shared_##name##_t), alignof(so_shared_##name##_t)))
#endif
