// Kernels that check the CPU emulator itself (tests/cuda_emu/test_emulator.py): each fault the
// emulator must report, each launch limit it must enforce, the host synchronisations a graph
// capture refuses, and the warp ops, atomics, shared memory and 16-bit conversions the real
// kernels rely on. Device code and its launchers only, like csrc/ops/*/cuda.cu.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <string>

#include <structgen/cuda/launch.cuh>

namespace structgen::emu_checks {
namespace {

__global__ void divergent_shuffle(int* out) {
  if (threadIdx.x >= 16) return;
  out[threadIdx.x] = __shfl_down_sync(0xffffffffu, static_cast<int>(threadIdx.x), 1);
}

__global__ void barrier_skipped(int* out) {
  if (threadIdx.x == 0) return;
  __syncthreads();
  out[threadIdx.x] = 1;
}

// Two different barriers, each reached by half the block.
__global__ void divergent_barrier(int* out) {
  if (threadIdx.x < 16) {
    out[threadIdx.x] = 1;
    __syncthreads();
  } else {
    out[threadIdx.x] = 2;
    __syncthreads();
  }
}

// The same barrier in a loop, a different number of times per thread: the odd threads are still
// in the loop when the even ones reach the barrier after it.
__global__ void barrier_in_uneven_loop(int* out) {
  for (unsigned i = 0; i <= threadIdx.x % 2; ++i) __syncthreads();
  __syncthreads();
  out[threadIdx.x] = 1;
}

__global__ void on_default_stream(int* out) { out[threadIdx.x] = 1; }

__global__ void barrier_vs_shuffle(int* out) {
  if (threadIdx.x < 16) {
    __syncthreads();
  } else {
    out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1, 1);
  }
}

__global__ void shuffle_beyond_block(int* out) {  // a 48-thread block: the second warp has 16 lanes
  out[threadIdx.x] = __shfl_down_sync(0xffffffffu, 1, 1);
}

__global__ void read_outside_mask(int* out) { out[threadIdx.x] = __shfl_sync(0x0000ffffu, 1, 20); }

__global__ void too_much_shared(float* out) {
  SO_SHARED(float, big, [49 * 1024 / 4]);
  big[threadIdx.x] = 1;
  out[threadIdx.x] = big[threadIdx.x];
}

__global__ void unwritten_shared(float* out) {
  SO_SHARED(float, s, [64]);
  out[threadIdx.x] = s[threadIdx.x];
}

// What the real kernels do: a block scan of ballots (masked_select), shuffles of every kind,
// atomics, and shared memory through barriers. out[0..4] are checked by the test.
__global__ void collectives(long long* out) {
  SO_SHARED(int, warp_counts, [8]);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const unsigned ballot = __ballot_sync(0xffffffffu, threadIdx.x % 3 == 0);
  if (lane == 0) warp_counts[warp] = __popc(ballot);
  __syncthreads();
  if (threadIdx.x == 0) {
    long long total = 0;
    for (int w = 0; w < 8; ++w) total += warp_counts[w];
    out[0] = total;  // multiples of 3 below 256: 86
  }
  int v = lane;
  for (int d = 1; d < 32; d *= 2) {  // inclusive prefix sum of lanes by shuffles up
    const int u = __shfl_up_sync(0xffffffffu, v, d);
    if (lane >= d) v += u;
  }
  if (threadIdx.x == 31) out[1] = v;  // 0 + ... + 31 = 496
  if (threadIdx.x == 5)
    out[2] = __shfl_xor_sync(0xffffffffu, lane, 16, 32);  // lane 21
  else
    __shfl_xor_sync(0xffffffffu, lane, 16, 32);
  const int broadcast = __shfl_sync(0xffffffffu, lane * 10, 7, 8);  // lane 7 of each group of 8
  if (threadIdx.x == 12) out[3] = broadcast;                        // lane 15: 150
  atomicAdd(reinterpret_cast<unsigned long long*>(out + 4), 1ull);  // 256 per block
  atomicMin(out + 5, static_cast<long long>(1000 - threadIdx.x - blockIdx.x));
}

__global__ void last_block_wins(int* out) {  // a race between blocks, on purpose
  if (threadIdx.x == 0) out[0] = static_cast<int>(blockIdx.x);
}

std::string text(cudaError_t error) { return error == cudaSuccess ? "ok" : cudaGetErrorString(error); }

std::string result() { return text(cudaGetLastError()); }

// The host synchronisations a graph capture refuses, as the runtime API returns them.
std::string synchronise(const std::string& name, char* buffer, cudaStream_t stream) {
  if (name == "stream_synchronize") return text(cudaStreamSynchronize(stream));
  if (name == "device_synchronize") return text(cudaDeviceSynchronize());
  if (name == "memcpy_to_host") return text(cudaMemcpy(buffer, buffer + 64, 64, cudaMemcpyDeviceToHost));
  if (name == "memcpy_async_to_host")
    return text(cudaMemcpyAsync(buffer, buffer + 64, 64, cudaMemcpyDeviceToHost, stream));
  if (name == "memcpy_async_on_device")
    return text(cudaMemcpyAsync(buffer, buffer + 64, 64, cudaMemcpyDeviceToDevice, stream));
  return "unknown case " + name;
}

}  // namespace

// Runs one check case on `stream` (the current one); returns "ok" or the CUDA error a launch or
// call returned. Emulator faults throw.
std::string run(const std::string& name, void* buffer, cudaStream_t stream) {
  auto* ints = static_cast<int*>(buffer);
  auto* floats = static_cast<float*>(buffer);
  if (name == "divergent_shuffle")
    SO_LAUNCH(1, 32, 0, stream, divergent_shuffle)(ints);
  else if (name == "barrier_skipped")
    SO_LAUNCH(1, 64, 0, stream, barrier_skipped)(ints);
  else if (name == "barrier_vs_shuffle")
    SO_LAUNCH(1, 32, 0, stream, barrier_vs_shuffle)(ints);
  else if (name == "shuffle_beyond_block")
    SO_LAUNCH(1, 48, 0, stream, shuffle_beyond_block)(ints);
  else if (name == "read_outside_mask")
    SO_LAUNCH(1, 16, 0, stream, read_outside_mask)(ints);
  else if (name == "too_much_shared")
    SO_LAUNCH(1, 32, 0, stream, too_much_shared)(floats);
  else if (name == "unwritten_shared")
    SO_LAUNCH(1, 64, 0, stream, unwritten_shared)(floats);
  else if (name == "grid_y_65536")
    SO_LAUNCH(dim3(1, 65536), 32, 0, stream, unwritten_shared)(floats);
  else if (name == "grid_z_65536")
    SO_LAUNCH(dim3(1, 1, 65536), 32, 0, stream, unwritten_shared)(floats);
  else if (name == "block_1025")
    SO_LAUNCH(1, 1025, 0, stream, unwritten_shared)(floats);
  else if (name == "block_z_65")
    SO_LAUNCH(1, dim3(1, 1, 65), 0, stream, unwritten_shared)(floats);
  else if (name == "empty_grid")
    SO_LAUNCH(0, 32, 0, stream, unwritten_shared)(floats);
  else if (name == "last_block_wins")
    SO_LAUNCH(3, 32, 0, stream, last_block_wins)(ints);
  else if (name == "collectives")
    SO_LAUNCH(3, 256, 0, stream, collectives)(static_cast<long long*>(buffer));
  else if (name == "divergent_barrier")
    SO_LAUNCH(1, 32, 0, stream, divergent_barrier)(ints);
  else if (name == "barrier_in_uneven_loop")
    SO_LAUNCH(1, 32, 0, stream, barrier_in_uneven_loop)(ints);
  else if (name == "on_default_stream")
    SO_LAUNCH(1, 32, 0, nullptr, on_default_stream)(ints);  // not `stream`
  else
    return synchronise(name, static_cast<char*>(buffer), stream);
  return result();
}

namespace {

template <typename H, typename In>
void encode_all(const In* in, int16_t* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const H h(in[i]);
    std::memcpy(out + i, &h, 2);
  }
}

template <typename H>
void decode_all(const int16_t* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    H h;
    std::memcpy(&h, in + i, 2);
    out[i] = static_cast<float>(h);
  }
}

}  // namespace

void half_bits(const float* in, int16_t* out, int64_t n) { encode_all<__half>(in, out, n); }
void half_bits_from_double(const double* in, int16_t* out, int64_t n) { encode_all<__half>(in, out, n); }
void bfloat16_bits(const float* in, int16_t* out, int64_t n) { encode_all<__nv_bfloat16>(in, out, n); }
void half_values(const int16_t* in, float* out, int64_t n) { decode_all<__half>(in, out, n); }
void bfloat16_values(const int16_t* in, float* out, int64_t n) { decode_all<__nv_bfloat16>(in, out, n); }

}  // namespace structgen::emu_checks
