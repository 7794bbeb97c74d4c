// Philox4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as easy as 1, 2, 3",
// SC 2011): four random 32-bit words from a 128-bit counter and a 64-bit key in ten rounds of
// multiplies and xors. Counter-based: element i of a draw takes counter (i / 4, offset), so every
// thread finds its bits without a sequential state, and a draw repeats exactly from (seed, offset).
// The host glue takes (seed, offset) from the device's generator (structgen/cuda/random.h); while
// a CUDA graph is captured they are read here from device memory, so a replay draws anew, as
// torch's own random kernels do. CUDA headers only, no torch.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include <structgen/cuda/philox_seed.h>

namespace structgen::cuda_kernels {

struct PhiloxWords {
  uint32_t w[4];
};

__device__ inline void philox_unpack(const PhiloxSeed& s, uint64_t& seed, uint64_t& offset) {
  seed = s.seed_ptr ? static_cast<uint64_t>(*s.seed_ptr) : s.seed;
  offset = s.offset_ptr ? static_cast<uint64_t>(*s.offset_ptr) + s.offset_intragraph : s.offset;
}

// The four words of counter (lo, hi) under key `seed`.
__device__ inline PhiloxWords philox4x32_10(uint64_t lo, uint64_t hi, uint64_t seed) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;  // the round multipliers
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;  // the key's Weyl increments
  uint32_t c0 = static_cast<uint32_t>(lo), c1 = static_cast<uint32_t>(lo >> 32);
  uint32_t c2 = static_cast<uint32_t>(hi), c3 = static_cast<uint32_t>(hi >> 32);
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    const uint32_t hi0 = __umulhi(kM0, c0), lo0 = kM0 * c0;
    const uint32_t hi1 = __umulhi(kM1, c2), lo1 = kM1 * c2;
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += kW0;
    k1 += kW1;
  }
  return {{c0, c1, c2, c3}};
}

}  // namespace structgen::cuda_kernels
