// The CPU emulator's runtime (structgen_emu/cuda.h): blocks run one after another on the calling
// thread; a block's CUDA threads are ucontext fibers that a scheduler switches between at
// __syncthreads and at warp shuffles/ballots. Deterministic: a fault reproduces on every run.
#include <structgen_emu/cuda.h>

#include <sys/mman.h>
#include <ucontext.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace structgen::emu {
namespace {

constexpr std::size_t kStackBytes = 256 * 1024;
constexpr std::size_t kSharedLimit = 48 * 1024;  // static shared memory per block
constexpr unsigned kMaxThreads = 1024;

enum class State : int8_t { Ready, AtBarrier, AtWarp, Done };

struct Fiber {
  ucontext_t context;
  uint3 idx{};
  State state = State::Ready;
  // The __syncthreads this thread waits at (AtBarrier): its call site.
  const char* barrier_file = nullptr;
  unsigned barrier_line = 0;
  // A pending warp op and, after the exchange, what this lane receives.
  WarpOp op{};
  unsigned mask = 0;
  uint64_t bits = 0, result = 0;
  int arg = 0, width = 0;
};

struct SharedArray {
  const void* site;
  std::size_t offset;
};

struct Grid {
  const char* kernel = "";
  dim3 grid, block;
  uint3 block_idx{};
  const std::function<void()>* body = nullptr;
  std::vector<Fiber> fibers;
  Fiber* current = nullptr;
  ucontext_t scheduler;
  alignas(16) unsigned char shared[kSharedLimit];
  std::size_t shared_used = 0;
  std::vector<SharedArray> shared_arrays;
  unsigned char poison = 0xff;
  bool used_shared = false;
  std::string fault;  // set by a fiber; the scheduler throws it
};

thread_local Grid* g_grid = nullptr;

// AddressSanitizer must be told when the stack changes (tools/sanitize.sh runs the emulator).
#if defined(__SANITIZE_ADDRESS__)
thread_local const void* g_scheduler_stack = nullptr;
thread_local std::size_t g_scheduler_stack_size = 0;
void* enter(const void* stack, std::size_t size) {
  void* fake = nullptr;
  __sanitizer_start_switch_fiber(&fake, stack, size);
  return fake;
}
void entered(void* fake) {
  __sanitizer_finish_switch_fiber(fake, &g_scheduler_stack, &g_scheduler_stack_size);
}
void* leave() { return enter(g_scheduler_stack, g_scheduler_stack_size); }
void left(void* fake) { __sanitizer_finish_switch_fiber(fake, nullptr, nullptr); }
void leave_for_good() { __sanitizer_start_switch_fiber(nullptr, g_scheduler_stack, g_scheduler_stack_size); }
#else
void* enter(const void*, std::size_t) { return nullptr; }
void entered(void*) {}
void* leave() { return nullptr; }
void left(void*) {}
void leave_for_good() {}
#endif
thread_local cudaError_t g_last_error = cudaSuccess;
std::atomic<bool> g_reverse{false};
std::atomic<bool> g_wide_indices{false};
// set_shared_poison and take_shared_memory_kernels: read and updated once per launch.
struct Poison {
  std::mutex mutex;
  unsigned char byte = 0xff;
  std::string kernel;  // empty: every kernel
  std::set<std::string> used;
} g_poison;
std::atomic<bool> g_capturing{false};

Grid& grid() {
  if (g_grid == nullptr) throw std::logic_error("cuda emulator: device code called outside a kernel launch");
  return *g_grid;
}

// Fiber stacks, one set per OS thread (ops may be called from several): mmap'd lazily, so
// untouched pages cost nothing, and unmapped when the thread ends.
struct Stacks {
  std::vector<void*> stacks;
  ~Stacks() {
    for (void* s : stacks) munmap(s, kStackBytes);
  }
};

void* stack_for(std::size_t i) {
  thread_local Stacks pool;
  while (pool.stacks.size() <= i) {
    void* s = mmap(nullptr, kStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (s == MAP_FAILED) throw std::runtime_error("cuda emulator: cannot map a fiber stack");
    pool.stacks.push_back(s);
  }
  return pool.stacks[i];
}

void fiber_main() {
  entered(nullptr);
  Grid& g = *g_grid;
  try {
    (*g.body)();
  } catch (const std::exception& e) {
    if (g.fault.empty()) g.fault = e.what();
  } catch (...) {
    if (g.fault.empty()) g.fault = "an exception";
  }
  g.current->state = State::Done;
  leave_for_good();
  // returns to uc_link: the scheduler
}

std::string block_name(const Grid& g) {
  std::ostringstream s;
  s << "block (" << g.block_idx.x << "," << g.block_idx.y << "," << g.block_idx.z << ")";
  return s.str();
}

std::string thread_name(const Fiber& f) {
  std::ostringstream s;
  s << "thread (" << f.idx.x << "," << f.idx.y << "," << f.idx.z << ")";
  return s.str();
}

std::string where(const Grid& g, const Fiber& f) { return block_name(g) + ", " + thread_name(f); }

const char* state_name(State s) {
  switch (s) {
    case State::Ready:
      return "running";
    case State::AtBarrier:
      return "waiting at __syncthreads";
    case State::AtWarp:
      return "waiting at a warp shuffle/ballot";
    case State::Done:
      return "exited";
  }
  return "?";
}

[[noreturn]] void fault(const Grid& g, const std::string& what) {
  throw std::runtime_error(std::string("cuda emulator: ") + g.kernel + ": " + what);
}

// Exchanges the values of one warp whose lanes all wait at a warp op; false if some lane of the
// mask has not arrived yet (it is still Ready), throws if one never can.
bool exchange(Grid& g, std::size_t warp_begin, std::size_t warp_end) {
  Fiber* first = nullptr;
  for (std::size_t i = warp_begin; i < warp_end; ++i) {
    if (g.fibers[i].state == State::AtWarp) {
      first = &g.fibers[i];
      break;
    }
  }
  if (first == nullptr) return false;
  const unsigned mask = first->mask;
  const std::size_t lanes = warp_end - warp_begin;
  for (std::size_t lane = 0; lane < 32; ++lane) {
    const bool named = (mask >> lane) & 1;
    if (lane >= lanes) {
      if (named)
        fault(g, where(g, *first) + ": the shuffle's mask names lane " + std::to_string(lane) +
                     ", which this block's last warp does not have");
      continue;
    }
    Fiber& f = g.fibers[warp_begin + lane];
    if (f.state == State::AtWarp && (f.mask != mask || f.op != first->op)) {
      fault(g, where(g, f) + ": lanes of one warp wait at different shuffles/ballots (divergent warp op)");
    }
    if (!named) {
      if (f.state == State::AtWarp)
        fault(g, where(g, f) + ": a lane calls a warp op whose mask does not name it");
      continue;
    }
    if (f.state == State::Ready) return false;
    if (f.state != State::AtWarp) {
      fault(g, where(g, *first) + ": lane " + std::to_string(lane) + " of the mask is " +
                   state_name(f.state) + " instead of reaching the same warp op (divergent warp op)");
    }
  }
  const uint64_t ballot = [&] {
    uint64_t b = 0;
    for (std::size_t lane = 0; lane < lanes; ++lane) {
      if (((mask >> lane) & 1) && g.fibers[warp_begin + lane].bits) b |= uint64_t{1} << lane;
    }
    return b;
  }();
  for (std::size_t lane = 0; lane < lanes; ++lane) {
    if (!((mask >> lane) & 1)) continue;
    Fiber& f = g.fibers[warp_begin + lane];
    const int width = f.width, l = static_cast<int>(lane);
    if (width <= 0 || width > 32 || (width & (width - 1)) != 0)
      fault(g, where(g, f) + ": a shuffle width must be a power of 2 up to 32");
    const int base = l & ~(width - 1);
    int src = l;
    switch (f.op) {
      case WarpOp::ShflIdx:
        src = base + (f.arg & (width - 1));
        break;
      case WarpOp::ShflUp:
        src = l - f.arg >= base ? l - f.arg : l;
        break;
      case WarpOp::ShflDown:
        src = l + f.arg < base + width ? l + f.arg : l;
        break;
      case WarpOp::ShflXor:
        src = (l ^ f.arg) < base + width ? l ^ f.arg : l;
        break;
      case WarpOp::Ballot:
        break;
    }
    if (f.op == WarpOp::Ballot) {
      f.result = ballot;
    } else {
      if (!((mask >> src) & 1) || static_cast<std::size_t>(src) >= lanes) {
        fault(g,
              where(g, f) + ": reads lane " + std::to_string(src) + ", which is not in the shuffle's mask");
      }
      f.result = g.fibers[warp_begin + src].bits;
    }
  }
  for (std::size_t lane = 0; lane < lanes; ++lane) {
    if ((mask >> lane) & 1) g.fibers[warp_begin + lane].state = State::Ready;
  }
  return true;
}

// "ops/reduce/cuda.cu:120": the last two parts of a barrier's file, and its line.
std::string site(const Fiber& f) {
  const std::string file = f.barrier_file;
  const auto last = file.rfind('/');
  const auto parent = last == std::string::npos || last == 0 ? std::string::npos : file.rfind('/', last - 1);
  return (parent == std::string::npos ? file : file.substr(parent + 1)) + ":" +
         std::to_string(f.barrier_line);
}

// Every thread of the block waits at a barrier: it must be the same __syncthreads. On a GPU,
// threads at two different ones is undefined behaviour (a hang, or a barrier that releases early).
void check_one_barrier(const Grid& g) {
  const Fiber& first = g.fibers.front();
  for (const Fiber& f : g.fibers) {
    if (f.barrier_line != first.barrier_line || std::strcmp(f.barrier_file, first.barrier_file) != 0) {
      fault(g, block_name(g) + ": threads wait at different __syncthreads (divergent barrier): " +
                   thread_name(first) + " at " + site(first) + ", " + thread_name(f) + " at " + site(f));
    }
  }
}

void run_block(Grid& g) {
  const std::size_t n = static_cast<std::size_t>(g.block.x) * g.block.y * g.block.z;
  g.fibers.assign(n, Fiber{});
  g.shared_used = 0;
  g.shared_arrays.clear();
  for (std::size_t i = 0; i < n; ++i) {
    Fiber& f = g.fibers[i];
    f.idx = {static_cast<unsigned>(i % g.block.x), static_cast<unsigned>(i / g.block.x % g.block.y),
             static_cast<unsigned>(i / (g.block.x * g.block.y))};
    getcontext(&f.context);
    f.context.uc_stack.ss_sp = stack_for(i);
    f.context.uc_stack.ss_size = kStackBytes;
    f.context.uc_link = &g.scheduler;
    makecontext(&f.context, fiber_main, 0);
  }
  for (;;) {
    bool ran = false;
    for (std::size_t k = 0; k < n; ++k) {
      Fiber& f = g.fibers[g_reverse ? n - 1 - k : k];
      if (f.state != State::Ready) continue;
      g.current = &f;
      void* fake = enter(f.context.uc_stack.ss_sp, kStackBytes);
      swapcontext(&g.scheduler, &f.context);
      left(fake);
      g.current = nullptr;
      ran = true;
      if (!g.fault.empty()) fault(g, where(g, f) + ": " + g.fault);
    }
    bool exchanged = false;
    for (std::size_t w = 0; w < n; w += 32) exchanged = exchange(g, w, std::min(n, w + 32)) || exchanged;
    if (ran || exchanged) continue;
    std::size_t done = 0, at_barrier = 0;
    for (const Fiber& f : g.fibers) {
      done += f.state == State::Done;
      at_barrier += f.state == State::AtBarrier;
    }
    if (done == n) return;
    if (at_barrier + done == n) {
      if (done > 0) {
        for (const Fiber& f : g.fibers) {
          if (f.state == State::Done)
            fault(g, where(g, f) +
                         ": exited while other threads wait at __syncthreads (a barrier not every thread "
                         "reaches)");
        }
      }
      check_one_barrier(g);
      for (Fiber& f : g.fibers) f.state = State::Ready;
      continue;
    }
    for (const Fiber& f : g.fibers) {
      if (f.state == State::AtWarp)
        fault(g, where(g, f) +
                     ": deadlock: waits at a warp op while its warp's other lanes wait at __syncthreads or "
                     "exited");
    }
    fault(g, "deadlock");
  }
}

// Hands control back to the scheduler until this fiber is Ready again.
void block_current(State state) {
  Grid& g = grid();
  Fiber* f = g.current;
  f->state = state;
  void* fake = leave();
  swapcontext(&f->context, &g.scheduler);
  entered(fake);
}

// What the GPU accepts: grid.x < 2^31, grid.y and grid.z <= 65535, at most 1024 threads a block
// (block.z <= 64); no dynamic shared memory, which the emulator does not have (SO_SHARED only).
bool launchable(dim3 grid, dim3 block, std::size_t dynamic_shared) {
  const uint64_t threads = static_cast<uint64_t>(block.x) * block.y * block.z;
  return grid.x > 0 && grid.y > 0 && grid.z > 0 && grid.x <= 2147483647u && grid.y <= 65535 &&
         grid.z <= 65535 && threads > 0 && threads <= kMaxThreads && block.z <= 64 && dynamic_shared == 0;
}

}  // namespace

const uint3& thread_idx() { return grid().current->idx; }
const uint3& block_idx() { return grid().block_idx; }
const dim3& block_dim() { return grid().block; }
const dim3& grid_dim() { return grid().grid; }

void syncthreads(const char* file, unsigned line) {
  Fiber* f = grid().current;
  f->barrier_file = file, f->barrier_line = line;
  block_current(State::AtBarrier);
}

uint64_t warp_exchange(WarpOp op, unsigned mask, uint64_t bits, int arg, int width) {
  Fiber* f = grid().current;
  f->op = op, f->mask = mask, f->bits = bits, f->arg = arg, f->width = width;
  block_current(State::AtWarp);
  return f->result;
}

void* shared(const void* site, std::size_t bytes, std::size_t align) {
  Grid& g = grid();
  for (const SharedArray& a : g.shared_arrays) {
    if (a.site == site) return g.shared + a.offset;
  }
  const std::size_t offset = (g.shared_used + align - 1) / align * align;
  if (offset + bytes > kSharedLimit) {  // thrown in the fiber: the scheduler reports it with the thread
    throw std::runtime_error("more than 48 KiB of shared memory in one block (" +
                             std::to_string(offset + bytes) + " bytes)");
  }
  std::memset(g.shared + offset, g.poison, bytes);  // a read before any write gives the poison
  g.used_shared = true;
  g.shared_used = offset + bytes;
  g.shared_arrays.push_back({site, offset});
  return g.shared + offset;
}

namespace {

// STRUCTGEN_EMU_TRACE: which kernel instantiations the tests ran (docs/cuda_emulation.md).
void trace(const char* kernel, const char* parameters) {
  static const char* path = std::getenv("STRUCTGEN_EMU_TRACE");
  if (path == nullptr || *path == '\0') return;
  static std::mutex mutex;
  static std::set<std::string> seen;
  std::string types = parameters;
  if (const auto at = types.find("P = {"); at != std::string::npos)
    types = types.substr(at + 5, types.rfind('}') - at - 5);
  const std::lock_guard lock(mutex);
  if (!seen.insert(std::string(kernel) + "\t" + types).second) return;
  if (std::FILE* f = std::fopen(path, "a")) {
    std::fprintf(f, "%s\t%s\n", kernel, types.c_str());
    std::fclose(f);
  }
}

}  // namespace

void run_grid(const char* kernel, const char* parameters, dim3 grid, dim3 block, std::size_t dynamic_shared,
              cudaStream_t stream, const std::function<void()>& body) {
  if (g_grid != nullptr) throw std::logic_error("cuda emulator: a kernel launched from device code");
  if (stream != current_stream()) {
    std::ostringstream s;
    s << "cuda emulator: " << kernel << ": launched on ";
    if (stream == nullptr)
      s << "the default stream";
    else
      s << "stream " << static_cast<const void*>(stream);
    s << ", not on the current stream (c10::cuda::getCurrentCUDAStream()): on a GPU it would run unordered "
         "with the "
         "work around it";
    throw std::runtime_error(s.str());
  }
  if (!launchable(grid, block, dynamic_shared)) {
    g_last_error = cudaErrorInvalidConfiguration;
    return;
  }
  trace(kernel, parameters);
  auto g = std::make_unique<Grid>();
  g->kernel = kernel;
  g->grid = grid;
  g->block = block;
  g->body = &body;
  {
    const std::lock_guard lock(g_poison.mutex);
    if (g_poison.kernel.empty() || g_poison.kernel == kernel) g->poison = g_poison.byte;
  }
  g_grid = g.get();
  struct Reset {
    ~Reset() {
      if (g_grid->used_shared) {
        const std::lock_guard lock(g_poison.mutex);
        g_poison.used.insert(g_grid->kernel);
      }
      g_grid = nullptr;
    }
  } reset;
  const uint64_t blocks = static_cast<uint64_t>(grid.x) * grid.y * grid.z;
  for (uint64_t k = 0; k < blocks; ++k) {
    const uint64_t b = g_reverse ? blocks - 1 - k : k;
    g->block_idx = {static_cast<unsigned>(b % grid.x), static_cast<unsigned>(b / grid.x % grid.y),
                    static_cast<unsigned>(b / (static_cast<uint64_t>(grid.x) * grid.y))};
    run_block(*g);
  }
}

}  // namespace structgen::emu

// The current stream's handle: any address but null (which is the default stream).
struct CUstream_st {};
namespace structgen::emu {
namespace {
CUstream_st g_current_stream;

cudaError_t unless_capturing() { return g_capturing ? cudaErrorStreamCaptureUnsupported : cudaSuccess; }
}  // namespace
}  // namespace structgen::emu

void structgen::emu::set_reverse_schedule(bool reverse) { g_reverse = reverse; }
void structgen::emu::set_shared_poison(unsigned char byte, const std::string& kernel) {
  const std::lock_guard lock(g_poison.mutex);
  g_poison.byte = byte, g_poison.kernel = kernel;
}

std::vector<std::string> structgen::emu::take_shared_memory_kernels() {
  const std::lock_guard lock(g_poison.mutex);
  std::vector<std::string> used(g_poison.used.begin(), g_poison.used.end());
  g_poison.used.clear();
  return used;
}
cudaStream_t structgen::emu::current_stream() { return &g_current_stream; }
void structgen::emu::set_capturing(bool capturing) { g_capturing = capturing; }
bool structgen::emu::capturing() { return g_capturing; }
void structgen::emu::set_wide_indices(bool wide) { g_wide_indices = wide; }
bool structgen::emu::wide_indices() { return g_wide_indices; }

cudaError_t cudaGetLastError() {
  const cudaError_t e = structgen::emu::g_last_error;
  structgen::emu::g_last_error = cudaSuccess;
  return e;
}

const char* cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess:
      return "no error";
    case cudaErrorInvalidValue:
      return "invalid argument";
    case cudaErrorInvalidConfiguration:
      return "invalid configuration argument";
    case cudaErrorLaunchOutOfResources:
      return "too many resources requested for launch";
    case cudaErrorStreamCaptureUnsupported:
      return "operation not permitted when stream is capturing";
  }
  return "unknown error";
}

cudaError_t cudaGetDevice(int* device) {
  *device = 0;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int) {
  if (attr != cudaDevAttrMultiProcessorCount) return cudaErrorInvalidValue;
  const char* sms = std::getenv("STRUCTGEN_EMU_SMS");
  *value = sms != nullptr && std::atoi(sms) > 0 ? std::atoi(sms) : 2;
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t) { return structgen::emu::unless_capturing(); }
cudaError_t cudaDeviceSynchronize() { return structgen::emu::unless_capturing(); }

cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind) {
  if (const cudaError_t e = structgen::emu::unless_capturing(); e != cudaSuccess)
    return e;  // it synchronises
  std::memmove(dst, src, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t) {
  if (kind != cudaMemcpyDeviceToDevice) {  // a graph captures only copies between device buffers here
    if (const cudaError_t e = structgen::emu::unless_capturing(); e != cudaSuccess) return e;
  }
  std::memmove(dst, src, bytes);
  return cudaSuccess;
}
