// Multi-kernel: several kernels for one op, the fastest kept per (op, device, dtype, tuning key).
//
// The generator writes, for every op whose manifest entry lists `kernels:`, an impl that computes
// the op's tuning key and each variant's eligibility, then asks `choose` which variant to run
// (templates/multi_kernel.cpp.j2). `choose`:
//   1. a pin (<PREFIX>_AUTOTUNE_PIN, or <package>.autotune.pin()) of an eligible variant wins;
//   2. tuning disabled (<PREFIX>_AUTOTUNE=0): the first eligible variant;
//   3. the decision in memory, else the one on disk (one JSON file per decision), else
//   4. one eligible variant: that one, untimed; several: they are timed (into the call's own
//      outputs where no input overlaps them, else on scratch outputs: scratch_like) in
//      interleaved rounds (each a warm-up, then repeats, the fastest; the order rotates), at least
//      kMinRounds and, while `judge` cannot tell them apart, up to kMaxRounds. judge keeps the
//      fastest, a true tie going to the earlier declared one (so picks do not flip with noise);
//      a pick the rounds did not resolve (a loaded machine) is kept in memory, never saved. A
//      variant that throws is excluded. Never while a CUDA graph is being captured.
// The decision is kept in memory and written to disk atomically (temporary file + rename), keyed
// by the variants' source hashes, compile flags, torch/CUDA versions, device name, variant list
// and tuning key; the file holds every variant's timing. A corrupt file warns once and is
// re-tuned; an unwritable cache dir warns once and keeps decisions in memory.
//
// The runtime is csrc/runtime/autotune/: choose.cpp (pins, tuning), measure.cpp (timing),
// memory_cache.cpp and disk_cache.cpp (decisions, the files' JSON in json.cpp), config.cpp (the
// environment), device.cpp and cuda_host.cpp (what CUDA torch answers), test_hooks.cpp.
#pragma once

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>
#include <c10/util/ArrayRef.h>
#include <c10/util/FunctionRef.h>
#include <c10/util/SmallVector.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace at {
class Tensor;
}

namespace structgen::autotune {

// Variants closer than this to the fastest count as ties (resolved to declaration order).
constexpr double kTie = 0.03;
constexpr int kMinRounds = 3;
constexpr int kMaxRounds = 9;

struct Variant {
  std::string name;
  std::string source_hash;  // of its manifest entry and its code, from the build (build_info.h)
};

// One op's variants on one device type; generated code builds one per (op, key) as a static.
struct OpKernels {
  std::string op;  // "sum.IntList_out"
  c10::DeviceType device_type;
  std::string key_text;  // the manifest's tuning key expression
  std::vector<Variant> variants;
};

using Key = c10::SmallVector<int64_t, 6>;

// The variant to run for this call. eligible[i]: variant i's condition holds (at least one does).
// time_variant(i) runs variant i on scratch outputs and returns its time in microseconds
// (see measure); it may throw, which excludes the variant.
int choose(const OpKernels& op, at::Device device, at::ScalarType dtype, const Key& key,
           c10::ArrayRef<bool> eligible, c10::function_ref<double(int)> time_variant);

// The fastest call of `run` in microseconds (a busy machine only adds time): two warm-up calls,
// then repeats until about kBudgetMs of work or kMaxRepeats calls (at least kMinRepeats); on
// CUDA each call is timed with events on the current stream.
double measure(at::Device device, c10::function_ref<void()> run);

// Whether `t` is an output of the current call that no input overlaps: one the wrapper allocated,
// or a user's out= that prepare_out found apart from every input (the wrapper runtime,
// csrc/runtime/structured.cpp, which sees the inputs, keeps them). Forgotten when the next call on
// this thread starts (check_devices, the first thing every wrapper does), so it never names a
// tensor of an earlier call.
bool is_private_output(const at::Tensor& t);

// Where a timed variant writes the output `t`: `t` itself when no input of the call overlaps it
// (is_private_output: a functional call's output, most out=), since every variant
// overwrites its outputs whole, so timing needs no memory beyond the call's own; else an
// uninitialised tensor with t's sizes, strides, dtype and device, up to kMaxScratchBytes.
// Larger, it throws NotTimed: the call runs untimed and decides nothing (choose).
constexpr int64_t kMaxScratchBytes = int64_t{16} << 20;
struct NotTimed : std::runtime_error {
  using std::runtime_error::runtime_error;
};
at::Tensor scratch_like(const at::Tensor& t);

// --- controls and introspection (Python: <package>.autotune) --------------------------------

struct Timing {
  std::string variant;
  double us;          // its best round; negative when the variant was not timed
  std::string error;  // why it was excluded (not eligible, or what it threw)
};

// How a tuning ends, from rounds[r][i]: variant i's time in round r (negative: not timed).
// Per variant, its best round (lo; load only adds time) and its median round (mid). The pick is
// the lowest lo; another variant is clearly slower when its lo exceeds the pick's mid by kTie,
// truly tied when each one's mid is within kTie of the other's lo (then the earlier declared one
// wins). Resolved when every other variant is one or the other; an unresolved pick (timings too
// noisy to tell, a loaded machine) runs in this process but is not saved.
struct Verdict {
  int pick = -1;  // -1: no variant was timed
  bool resolved = false;
};
Verdict judge(const std::vector<std::vector<double>>& rounds);

struct Decision {
  std::string op;
  std::string device;  // "cpu", "cuda:0"
  std::string dtype;
  Key key;
  std::string key_text;
  std::string pick;
  std::string source;  // tuned | tuned, unresolved (not saved) | disk | only eligible
  double tuning_ms = 0;
  std::vector<Timing> timings;
};

std::vector<Decision> decisions();  // in the order they were made in this process
void clear_memory();                // forget in-memory decisions (the disk cache stays)
// Pins op's variant `name` in this process (empty: remove the pin); overrides <PREFIX>_AUTOTUNE_PIN.
void set_pin(const std::string& op, const std::string& name);
std::string cache_dir();
// Defined by the generated registration.cpp from the project header, so that two extensions built
// on this runtime keep their decisions apart and each names itself: the cache folder's name (its
// autotune_cache), the prefix of its environment variables (its name in capitals:
// <PREFIX>_AUTOTUNE_PIN) and the Python package its messages name (<package>.autotune: ...).
const char* project_cache_name();
const char* project_env_prefix();
const char* project_package();
// Counted since load: variants timed, decisions read from disk; for tests and the benchmark.
int64_t timed_count();
int64_t disk_hits();

}  // namespace structgen::autotune
