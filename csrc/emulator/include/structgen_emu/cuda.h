// The CUDA device API that generated and hand-written kernels use, for a host C++ build of the same .cu
// files: the CPU emulator that runs every CUDA kernel in CI, where no GPU is (docs/cuda_emulation.md).
//
// Each CUDA thread is a fiber; a block's fibers run on one OS thread, so __syncthreads is a real
// barrier and warp shuffles/ballots exchange values only when every lane of their mask arrived.
// What is not defined here does not compile: device code that uses a CUDA feature the emulator
// lacks fails the emulated build, never runs differently. `__shared__` is one of them: shared
// memory is declared with SO_SHARED (structgen/cuda/launch.cuh), which the emulator places in a
// per-block arena poisoned (0xff bytes unless set_shared_poison says otherwise) before each block.
#pragma once

#include <math.h>  // the float overloads of sqrt, pow, exp, ... in the global namespace, as CUDA's

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <source_location>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

// --- qualifiers ------------------------------------------------------------------------------
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ SO_SHARED_declares_shared_memory_in_emulated_device_code

struct uint3 {
  unsigned x, y, z;
};
struct alignas(8) uint2 {
  unsigned x, y;
};
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};
struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
constexpr int warpSize = 32;

// --- runtime API (the subset the kernels' launchers call) ------------------------------------
struct CUstream_st;
using cudaStream_t = CUstream_st*;
enum cudaError_t : int {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorLaunchOutOfResources = 701,
  cudaErrorStreamCaptureUnsupported = 900,
};
enum cudaMemcpyKind : int {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};
enum cudaDeviceAttr : int { cudaDevAttrMultiProcessorCount = 16 };
cudaError_t cudaGetLastError();
const char* cudaGetErrorString(cudaError_t error);
cudaError_t cudaGetDevice(int* device);
// The multiprocessor count is STRUCTGEN_EMU_SMS (default 2): small, so grids sized to the device
// still take their grid-stride loops and multi-block paths on small test shapes.
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device);
// Host synchronisations: while the emulated stream captures a CUDA graph (set_capturing) they
// fail with cudaErrorStreamCaptureUnsupported, as on a GPU. The copies copy host memory (CPU
// tensors stand in for device memory); an async copy of another kind than device to device counts
// as one from or to pageable host memory, which a graph cannot capture.
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream = nullptr);

namespace structgen::emu {

// --- the executing thread --------------------------------------------------------------------
const uint3& thread_idx();
const uint3& block_idx();
const dim3& block_dim();
const dim3& grid_dim();

// Waits until every thread of the block waits at a barrier, and checks that they all wait at
// this one (`file`:`line`): threads at two different __syncthreads are an error, not a barrier.
void syncthreads(const char* file, unsigned line);

enum class WarpOp : int8_t { ShflIdx, ShflUp, ShflDown, ShflXor, Ballot };
// Waits until every lane named in `mask` reaches a warp op, checks they all reached the same op
// with the same mask, and returns the bits this lane receives.
uint64_t warp_exchange(WarpOp op, unsigned mask, uint64_t bits, int arg, int width);

// The block's shared array for one SO_SHARED declaration (`site`), filled with the poison byte
// at first use in each block; the block's total is limited to 48 KiB, as static shared memory on
// the GPU.
void* shared(const void* site, std::size_t bytes, std::size_t align);

// The byte unwritten shared memory holds: `byte` in launches of `kernel` (as SO_LAUNCH spells it),
// or of every kernel where `kernel` is empty; 0xff (NaN, -1) in the others. A kernel that reads
// shared memory no thread wrote gives other bits under another poison
// (tests/cuda_emu/test_shared_poison.py).
void set_shared_poison(unsigned char byte, const std::string& kernel);
// The kernels that used shared memory since the last call, each once: the only ones whose results
// another poison can change.
std::vector<std::string> take_shared_memory_kernels();

// --- streams and graph capture ---------------------------------------------------------------
// The stream c10::cuda::getCurrentCUDAStream() returns: not the default (null) stream, as inside
// `with torch.cuda.stream(s)` or a graph capture, so a launch that forgets the current stream
// (a launch struct's stream left null) fails in every test instead of only there.
cudaStream_t current_stream();
// Whether the current stream captures a CUDA graph (c10::cuda::currentStreamCaptureStatusMayInitCtx).
void set_capturing(bool capturing);
bool capturing();

// --- launches --------------------------------------------------------------------------------
// With `reverse`, blocks, and the threads of a block, run last to first: a kernel whose result
// depends on the order (a missing barrier, a race between blocks) gives another result
// (tests/cuda_emu/test_schedule.py).
void set_reverse_schedule(bool reverse);

// With `wide`, index_fits() (structgen/cuda/launch.cuh) is false: launchers take their 64-bit
// index instantiations, which a GPU runs only on tensors over 2^31 elements.
void set_wide_indices(bool wide);
bool wide_indices();

// Runs body() as every thread of every block of grid x block, block after block. A launch the
// GPU would refuse (grid.y or grid.z > 65535, more than 1024 threads a block, ...) runs nothing
// and sets the error cudaGetLastError() returns; a kernel fault the GPU would hang or corrupt
// on (a barrier some threads never reach, a shuffle a lane of its mask skips) throws, as does a
// launch on a stream that is not the current one (on a GPU: unordered with the work around it).
// `parameters` names the kernel's parameter types (which instantiation ran): with
// STRUCTGEN_EMU_TRACE=<file>, each kernel instantiation that runs is appended to it once.
void run_grid(const char* kernel, const char* parameters, dim3 grid, dim3 block, std::size_t dynamic_shared,
              cudaStream_t stream, const std::function<void()>& body);

template <typename... P>
const char* parameter_types() {
  return __PRETTY_FUNCTION__;  // "... [with P = {const float*, float*, long int}]"
}

// SO_LAUNCH(grid, block, shared, stream, kernel)(args...): kernel parameters are copied once per
// launch and passed by value to each thread, as a launch does.
class Launch {
 public:
  Launch(dim3 grid, dim3 block, std::size_t dynamic_shared, cudaStream_t stream, const char* kernel)
      : grid_(grid), block_(block), shared_(dynamic_shared), stream_(stream), kernel_(kernel) {}

  template <typename Body>
  auto kernel(Body body) const {
    return [self = *this, body](auto&&... args) {
      std::tuple<std::decay_t<decltype(args)>...> params(std::forward<decltype(args)>(args)...);
      run_grid(self.kernel_, parameter_types<std::decay_t<decltype(args)>...>(), self.grid_, self.block_,
               self.shared_, self.stream_, [&] { std::apply(body, params); });
    };
  }

 private:
  dim3 grid_, block_;
  std::size_t shared_;
  cudaStream_t stream_;
  const char* kernel_;
};

template <typename T>
uint64_t to_bits(T v) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8,
                "warp shuffles move values of at most 8 bytes");
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  return bits;
}
template <typename T>
T from_bits(uint64_t bits) {
  T v;
  std::memcpy(&v, &bits, sizeof(T));
  return v;
}

// --- 16-bit floats: round to nearest even from float and double, as CUDA's conversions -------
// A binary format with M mantissa bits and E exponent bits.
template <int M, int E>
uint16_t encode(double v) {
  constexpr int bias = (1 << (E - 1)) - 1;
  constexpr uint32_t inf = ((1u << E) - 1) << M;
  const uint16_t sign = std::signbit(v) ? static_cast<uint16_t>(1u << (M + E)) : 0;
  if (std::isnan(v)) return static_cast<uint16_t>(sign | inf | (1u << (M - 1)));
  const double a = std::fabs(v);
  if (a == 0) return sign;
  if (std::isinf(a)) return static_cast<uint16_t>(sign | inf);
  int e = 0;
  std::frexp(a, &e);
  e = std::max(e - 1, 1 - bias);                    // a = 1.f * 2^e, or a subnormal's scale
  double q = std::nearbyint(std::ldexp(a, M - e));  // the significand, rounded to nearest even
  if (q >= static_cast<double>(2u << M)) q /= 2, e += 1;
  if (e > bias) return static_cast<uint16_t>(sign | inf);
  const auto bits = static_cast<uint32_t>(q);
  if (bits < (1u << M)) return static_cast<uint16_t>(sign | bits);  // subnormal
  return static_cast<uint16_t>(sign | (static_cast<uint32_t>(e + bias) << M) | (bits - (1u << M)));
}
template <int M, int E>
float decode(uint16_t h) {
  constexpr int bias = (1 << (E - 1)) - 1;
  const bool negative = (h >> (M + E)) & 1;
  const uint32_t exponent = (h >> M) & ((1u << E) - 1), mantissa = h & ((1u << M) - 1);
  float v;
  if (exponent == (1u << E) - 1) {
    v = mantissa ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  } else if (exponent == 0) {
    v = std::ldexp(static_cast<float>(mantissa), 1 - bias - M);
  } else {
    v = std::ldexp(static_cast<float>(mantissa | (1u << M)), static_cast<int>(exponent) - bias - M);
  }
  return negative ? -v : v;
}

template <int M, int E>
struct Float16Format {
  uint16_t __x;
  Float16Format() = default;
  Float16Format(float f) : __x(encode<M, E>(f)) {}
  Float16Format(double d) : __x(encode<M, E>(d)) {}
  template <typename I>
    requires std::is_integral_v<I>
  Float16Format(I i) : __x(encode<M, E>(static_cast<double>(i))) {}
  operator float() const { return decode<M, E>(__x); }
};

}  // namespace structgen::emu

using __half = structgen::emu::Float16Format<10, 5>;
using __nv_bfloat16 = structgen::emu::Float16Format<7, 8>;
inline __half __float2half(float f) { return __half(f); }
inline float __half2float(__half h) { return static_cast<float>(h); }
inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
inline float __bfloat162float(__nv_bfloat16 h) { return static_cast<float>(h); }

// --- thread indices --------------------------------------------------------------------------
#define threadIdx (::structgen::emu::thread_idx())
#define blockIdx (::structgen::emu::block_idx())
#define blockDim (::structgen::emu::block_dim())
#define gridDim (::structgen::emu::grid_dim())

// The call site names the barrier: device code spells it __syncthreads(), and the default
// argument is evaluated where it is called.
inline void __syncthreads(std::source_location site = std::source_location::current()) {
  structgen::emu::syncthreads(site.file_name(), site.line());
}

// On the GPU a trap ends the kernel and poisons the context (as a device-side assert); here the
// launch raises, naming kernel, block and thread.
[[noreturn]] inline void __trap() { throw std::runtime_error("__trap() (on a GPU: a device-side error)"); }

// --- warp intrinsics -------------------------------------------------------------------------
template <typename T>
T __shfl_sync(unsigned mask, T v, int src_lane, int width = warpSize) {
  using namespace structgen::emu;
  return from_bits<T>(warp_exchange(WarpOp::ShflIdx, mask, to_bits(v), src_lane, width));
}
template <typename T>
T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = warpSize) {
  using namespace structgen::emu;
  return from_bits<T>(warp_exchange(WarpOp::ShflUp, mask, to_bits(v), static_cast<int>(delta), width));
}
template <typename T>
T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = warpSize) {
  using namespace structgen::emu;
  return from_bits<T>(warp_exchange(WarpOp::ShflDown, mask, to_bits(v), static_cast<int>(delta), width));
}
template <typename T>
T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = warpSize) {
  using namespace structgen::emu;
  return from_bits<T>(warp_exchange(WarpOp::ShflXor, mask, to_bits(v), lane_mask, width));
}
inline unsigned __ballot_sync(unsigned mask, int predicate) {
  using namespace structgen::emu;
  return static_cast<unsigned>(warp_exchange(WarpOp::Ballot, mask, predicate != 0, 0, warpSize));
}
inline unsigned __umulhi(unsigned a, unsigned b) {
  return static_cast<unsigned>((static_cast<unsigned long long>(a) * b) >> 32);
}
// CUDA's standard normal CDF (device math API), from the host's erfc.
inline float normcdff(float x) { return 0.5f * std::erfc(-x * 0.70710678118654752f); }
inline double normcdf(double x) { return 0.5 * std::erfc(-x * 0.70710678118654752440); }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }

// --- atomics: a block's fibers never interleave within one call, so plain updates are atomic --
template <typename T, typename F>
T so_atomic_update(T* address, F f) {
  const T old = *address;
  *address = f(old);
  return old;
}
#define SO_EMU_ATOMICS(T)                                                   \
  inline T atomicAdd(T* a, T v) {                                           \
    return so_atomic_update(a, [&](T o) { return static_cast<T>(o + v); }); \
  }                                                                         \
  inline T atomicMin(T* a, T v) {                                           \
    return so_atomic_update(a, [&](T o) { return v < o ? v : o; });         \
  }                                                                         \
  inline T atomicMax(T* a, T v) {                                           \
    return so_atomic_update(a, [&](T o) { return v > o ? v : o; });         \
  }                                                                         \
  inline T atomicExch(T* a, T v) {                                          \
    return so_atomic_update(a, [&](T) { return v; });                       \
  }                                                                         \
  inline T atomicCAS(T* a, T compare, T v) {                                \
    return so_atomic_update(a, [&](T o) { return o == compare ? v : o; });  \
  }
SO_EMU_ATOMICS(int)
SO_EMU_ATOMICS(unsigned)
SO_EMU_ATOMICS(long long)
SO_EMU_ATOMICS(unsigned long long)
#undef SO_EMU_ATOMICS
#define SO_EMU_BITWISE_ATOMICS(T)                           \
  inline T atomicOr(T* a, T v) {                            \
    return so_atomic_update(a, [&](T o) { return o | v; }); \
  }                                                         \
  inline T atomicAnd(T* a, T v) {                           \
    return so_atomic_update(a, [&](T o) { return o & v; }); \
  }                                                         \
  inline T atomicXor(T* a, T v) {                           \
    return so_atomic_update(a, [&](T o) { return o ^ v; }); \
  }
SO_EMU_BITWISE_ATOMICS(int)
SO_EMU_BITWISE_ATOMICS(unsigned)
SO_EMU_BITWISE_ATOMICS(unsigned long long)
#undef SO_EMU_BITWISE_ATOMICS
inline float atomicAdd(float* a, float v) {
  return so_atomic_update(a, [&](float o) { return o + v; });
}
inline double atomicAdd(double* a, double v) {
  return so_atomic_update(a, [&](double o) { return o + v; });
}

// --- CUDA's min/max overloads, in the global namespace as in device code ---------------------
template <typename A, typename B>
  requires std::is_integral_v<A> && std::is_integral_v<B>
constexpr std::common_type_t<A, B> min(A a, B b) {
  using C = std::common_type_t<A, B>;
  return static_cast<C>(b) < static_cast<C>(a) ? static_cast<C>(b) : static_cast<C>(a);
}
template <typename A, typename B>
  requires std::is_integral_v<A> && std::is_integral_v<B>
constexpr std::common_type_t<A, B> max(A a, B b) {
  using C = std::common_type_t<A, B>;
  return static_cast<C>(a) < static_cast<C>(b) ? static_cast<C>(b) : static_cast<C>(a);
}
inline float min(float a, float b) { return std::fmin(a, b); }  // fminf: a NaN loses, as on the GPU
inline float max(float a, float b) { return std::fmax(a, b); }
inline double min(double a, double b) { return std::fmin(a, b); }
inline double max(double a, double b) { return std::fmax(a, b); }
