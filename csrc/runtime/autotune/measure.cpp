// Timing one variant: the fastest of repeated calls (load only adds time), on CUDA with events on
// the current stream.
#include <runtime/autotune/device.h>
#include <structgen/autotune.h>

#include <ATen/EmptyTensor.h>
#include <ATen/core/Tensor.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

namespace structgen::autotune {
namespace {

// Per round: tune() runs kMinRounds or more rounds of every variant.
constexpr double kBudgetMs = 7;
constexpr int kMinRepeats = 3;
constexpr int kMaxRepeats = 15;

}  // namespace

double measure(at::Device device, c10::function_ref<void()> run) {
  auto sync = [&] {
    if (device.is_cuda() && cuda_hooks().synchronize) cuda_hooks().synchronize(device);
  };
  using clock = std::chrono::steady_clock;
  sync();
  for (int i = 0; i < 2; ++i) run();  // warm-up: caches, lazy initialisation, first-touch pages of
  sync();                             // the scratch outputs and of the allocator's big blocks
  std::vector<double> times;
  const auto begin = clock::now();
  const auto time_once = device.is_cuda() ? cuda_hooks().time_once : nullptr;
  while (static_cast<int>(times.size()) < kMaxRepeats) {
    const auto t0 = clock::now();
    if (time_once != nullptr) {
      times.push_back(time_once(device, run));  // device time, not launch overhead plus a sync
    } else {
      run();
      sync();
      times.push_back(std::chrono::duration<double, std::micro>(clock::now() - t0).count());
    }
    const auto t1 = clock::now();
    if (static_cast<int>(times.size()) >= kMinRepeats &&
        std::chrono::duration<double, std::milli>(t1 - begin).count() >= kBudgetMs) {
      break;
    }
  }
  return *std::min_element(times.begin(), times.end());
}

at::Tensor scratch_like(const at::Tensor& t) {
  // A copy per timed variant had put a large add's first call at 1.5x torch's peak memory.
  if (is_private_output(t)) return t;
  const auto bytes = at::detail::computeStorageNbytes(t.sizes(), t.strides(), t.itemsize());
  if (bytes > static_cast<size_t>(kMaxScratchBytes)) {
    throw NotTimed("timing would need a scratch copy of an output the call also reads (" +
                   std::to_string(bytes >> 20) + " MiB)");
  }
  return t.new_empty_strided(t.sizes(), t.strides());
}

}  // namespace structgen::autotune
