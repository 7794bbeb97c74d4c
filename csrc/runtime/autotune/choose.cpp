// Which variant runs: pins, then the decision in memory or on disk, else timing the eligible
// variants (structgen/autotune.h says in what order and why).
#include <runtime/autotune/config.h>
#include <runtime/autotune/device.h>
#include <runtime/autotune/disk_cache.h>
#include <runtime/autotune/json.h>
#include <runtime/autotune/memory_cache.h>
#include <runtime/autotune/test_hooks.h>
#include <structgen/autotune.h>

#include <c10/util/Exception.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <mutex>
#include <shared_mutex>

namespace structgen::autotune {
namespace {

namespace fs = std::filesystem;

// <package>.autotune.pin(): op or op@device -> variant, over <PREFIX>_AUTOTUNE_PIN's.
struct Pins {
  std::shared_mutex mutex;
  std::map<std::string, std::string> by_op;
  std::atomic<bool> any{false};  // lets unpinned calls skip the lookup
};

Pins& pins() {
  static Pins p;
  return p;
}

// One tuning at a time (timings must not overlap); recursive: a variant may itself call a tuned op.
std::recursive_mutex& tuning_mutex() {
  static std::recursive_mutex m;
  return m;
}

std::optional<int> pinned(const OpKernels& op, c10::ArrayRef<bool> eligible) {
  if (config().pins.empty() && !pins().any.load(std::memory_order_relaxed)) return std::nullopt;
  // "op@cuda" pins one device type's variant, "op" every device's.
  const std::string qualified = op.op + "@" + c10::DeviceTypeName(op.device_type, /*lower_case=*/true);
  std::string name;
  {
    std::shared_lock lock(pins().mutex);
    for (const std::string& k : {qualified, op.op}) {
      if (auto it = pins().by_op.find(k); name.empty() && it != pins().by_op.end()) name = it->second;
    }
  }
  for (const std::string& k : {qualified, op.op}) {
    if (auto it = config().pins.find(k); name.empty() && it != config().pins.end()) name = it->second;
  }
  if (name.empty()) return std::nullopt;
  for (size_t i = 0; i < op.variants.size(); ++i) {
    if (op.variants[i].name == name) {
      if (eligible[i]) return static_cast<int>(i);
      return std::nullopt;  // not eligible for this call: chosen as if unpinned
    }
  }
  std::string known;
  for (const auto& v : op.variants) known += (known.empty() ? "" : ", ") + v.name;
  TORCH_CHECK(false, project_package(), ".autotune: ", op.op, " has no variant '", name, "' on ",
              c10::DeviceTypeName(op.device_type), " (pinned by ", project_env_prefix(),
              "_AUTOTUNE_PIN or autotune.pin()); its variants: ", known);
}

int first_eligible(const OpKernels& op, c10::ArrayRef<bool> eligible) {
  for (size_t i = 0; i < eligible.size(); ++i) {
    if (eligible[i]) return static_cast<int>(i);
  }
  TORCH_CHECK(
      false, project_package(), ".autotune: none of ", op.op, "'s ", c10::DeviceTypeName(op.device_type),
      " kernel variants is eligible for this call (see the manifest's `kernels:` conditions and dtypes)");
}

void log_decision(const Decision& d) {
  if (!config().log) return;
  std::string line = std::string(project_package()) + ".autotune: " + d.op + " " + d.device + " " + d.dtype +
                     " key=" + key_json(d.key) + " -> " + d.pick + " (" + d.source;
  for (const Timing& t : d.timings) {
    line += "; " + t.variant + " " + (t.us >= 0 ? json::number(t.us) + " us" : t.error);
  }
  if (d.source == "tuned") line += "; tuning " + json::number(d.tuning_ms) + " ms";
  std::fprintf(stderr, "%s)\n", line.c_str());
}

// Times the eligible variants in interleaved rounds until judge resolves them (or kMaxRounds);
// each variant's timing in d.timings is its best round. nullopt when every variant raised.
std::optional<Verdict> tune(const OpKernels& op, c10::ArrayRef<bool> eligible,
                            c10::function_ref<double(int)> time_variant, Decision& d) {
  const auto start = std::chrono::steady_clock::now();
  const size_t n = op.variants.size();
  std::vector<std::string> errors(n);
  for (size_t i = 0; i < n; ++i) {
    if (!eligible[i]) errors[i] = "not eligible";
  }
  std::vector<std::vector<double>> rounds;
  Verdict verdict;
  for (int r = 0; r < kMaxRounds; ++r) {
    std::vector<double> round(n, -1);
    for (size_t k = 0; k < n; ++k) {
      const size_t i = (k + static_cast<size_t>(r)) % n;  // rotated: no variant always runs first
      if (!errors[i].empty()) continue;
      try {
        raise_if_injected(op, i);
        const std::optional<double> fake = injected_time(op, i, r);
        round[i] = fake ? *fake : time_variant(static_cast<int>(i));
        count_timed();
      } catch (const NotTimed&) {
        throw;  // not this variant's failure: the call cannot be timed (choose)
      } catch (const std::exception& e) {
        std::string what = e.what();
        if (auto* c10e = dynamic_cast<const c10::Error*>(&e)) what = c10e->what_without_backtrace();
        errors[i] = "raised: " + what.substr(0, what.find('\n'));
        for (auto& earlier : rounds) earlier[i] = -1;
      }
    }
    rounds.push_back(std::move(round));
    verdict = judge(rounds);
    if (verdict.pick < 0 || (r + 1 >= kMinRounds && verdict.resolved)) break;
  }
  d.tuning_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  for (size_t i = 0; i < n; ++i) {
    double best = -1;
    for (const auto& round : rounds) {
      if (round[i] >= 0) best = best < 0 ? round[i] : std::min(best, round[i]);
    }
    d.timings.push_back({op.variants[i].name, errors[i].empty() ? best : -1, errors[i]});
  }
  if (verdict.pick < 0) return std::nullopt;
  return verdict;
}

}  // namespace

Verdict judge(const std::vector<std::vector<double>>& rounds) {
  const size_t n = rounds.empty() ? 0 : rounds.front().size();
  std::vector<double> lo(n, -1), mid(n, -1);
  for (size_t i = 0; i < n; ++i) {
    std::vector<double> t;
    for (const auto& round : rounds) {
      if (round[i] >= 0) t.push_back(round[i]);
    }
    if (t.empty()) continue;
    std::sort(t.begin(), t.end());
    lo[i] = t.front();
    mid[i] = t[(t.size() - 1) / 2];  // the lower median: one slow round of two does not count
  }
  Verdict v;
  for (size_t i = 0; i < n; ++i) {
    if (lo[i] >= 0 && (v.pick < 0 || lo[i] < lo[v.pick])) v.pick = static_cast<int>(i);
  }
  if (v.pick < 0) return v;
  const int b = v.pick;
  v.resolved = true;
  for (size_t i = 0; i < n; ++i) {
    if (lo[i] < 0 || static_cast<int>(i) == b) continue;
    const bool slower = lo[i] > mid[b] * (1 + kTie);
    const bool tied = mid[i] <= lo[b] * (1 + kTie) && mid[b] <= lo[i] * (1 + kTie);
    if (tied && static_cast<int>(i) < v.pick) v.pick = static_cast<int>(i);
    if (!slower && !tied) v.resolved = false;
  }
  return v;
}

int choose(const OpKernels& op, at::Device device, at::ScalarType dtype, const Key& key,
           c10::ArrayRef<bool> eligible, c10::function_ref<double(int)> time_variant) {
  if (auto p = pinned(op, eligible)) return *p;
  if (!config().enabled) return first_eligible(op, eligible);
  const MemoryKey mkey = memory_key(op, device, dtype, key, eligible);
  if (auto pick = remembered(mkey)) return *pick;
  const int n_eligible = static_cast<int>(std::count(eligible.begin(), eligible.end(), true));
  if (n_eligible > 1 && device.is_cuda() && cuda_hooks().capturing && cuda_hooks().capturing(device)) {
    return first_eligible(op, eligible);  // timing would record into the graph: decide after capture
  }

  std::lock_guard tuning(tuning_mutex());
  if (auto pick = remembered(mkey)) return *pick;  // tuned meanwhile
  Decision d{op.op, device.str(), c10::toString(dtype), key, op.key_text, "", "", 0, {}};
  int pick = first_eligible(op, eligible);
  if (n_eligible == 1) {
    d.source = "only eligible";
  } else {
    const Fingerprint fp = Fingerprint::of(op, device, dtype, key, eligible);
    const DecisionName name = decision_name(op, device, dtype, fp);
    const fs::path path = fs::path(config().cache_dir) / name.file();
    // No lock across processes: one stopped while tuning would stall every other. Processes that
    // miss the same decision at once each time it, and each publishes it by rename (whole files).
    const bool on_disk = !config().cache_dir.empty();
    if (on_disk) remove_stale(config().cache_dir, name);
    if (auto cached = on_disk ? read_decision(path, op, fp, eligible, d.timings) : std::nullopt) {
      pick = *cached;
      d.source = "disk";
      count_disk_hit();
      std::error_code ec;  // in use: not stale for another kStaleDays
      fs::last_write_time(path, fs::file_time_type::clock::now(), ec);
    } else {
      d.timings.clear();
      d.source = "tuned";
      std::optional<Verdict> fastest;
      try {
        fastest = tune(op, eligible, time_variant, d);
      } catch (const NotTimed& e) {
        // An inplace call (or an out= that is an input) too large to copy its output for timing:
        // it runs untimed and decides nothing, so a later call with an output of its own tunes.
        log_decision({op.op,
                      device.str(),
                      c10::toString(dtype),
                      key,
                      op.key_text,
                      op.variants[pick].name,
                      std::string("not timed: ") + e.what(),
                      0,
                      {}});
        return pick;
      }
      if (!fastest) {
        // Every variant raised: an error of the call itself (bad data), not of one kernel. Decide
        // nothing; the real call raises it.
        log_decision({op.op, device.str(), c10::toString(dtype), key, op.key_text, op.variants[pick].name,
                      "every variant raised", d.tuning_ms, d.timings});
        return pick;
      }
      pick = fastest->pick;
      d.pick = op.variants[pick].name;
      if (!fastest->resolved) {
        d.source = "tuned, unresolved (not saved)";  // a later process tunes again
      } else if (on_disk) {
        write_decision(path, fp, d);
      }
    }
  }
  d.pick = op.variants[pick].name;
  log_decision(d);
  remember(mkey, pick, std::move(d));
  return pick;
}

void set_pin(const std::string& op, const std::string& name) {
  std::unique_lock lock(pins().mutex);
  if (name.empty()) {
    pins().by_op.erase(op);
  } else {
    pins().by_op[op] = name;
  }
  pins().any = !pins().by_op.empty();
}

}  // namespace structgen::autotune
