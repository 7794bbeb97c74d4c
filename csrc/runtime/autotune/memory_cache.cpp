#include <runtime/autotune/memory_cache.h>

#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

namespace structgen::autotune {
namespace {

struct MemoryKeyHash {
  size_t operator()(const MemoryKey& k) const {
    uint64_t h = reinterpret_cast<uintptr_t>(k.op) ^ (static_cast<uint64_t>(k.device_index) << 8) ^
                 (static_cast<uint64_t>(k.dtype) << 16) ^ (k.eligible << 24);
    for (const int64_t v : k.key) h = (h ^ static_cast<uint64_t>(v)) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

struct Memory {
  std::shared_mutex mutex;                                  // guards picks and log
  std::unordered_map<MemoryKey, int, MemoryKeyHash> picks;  // -> variant index
  std::vector<Decision> log;
};

Memory& memory() {
  static Memory m;
  return m;
}

}  // namespace

MemoryKey memory_key(const OpKernels& op, at::Device device, at::ScalarType dtype, const Key& key,
                     c10::ArrayRef<bool> eligible) {
  uint64_t mask = 0;
  for (size_t i = 0; i < eligible.size() && i < 64; ++i) mask |= static_cast<uint64_t>(eligible[i]) << i;
  return MemoryKey{&op, device.index(), dtype, mask, key};
}

std::optional<int> remembered(const MemoryKey& key) {
  std::shared_lock lock(memory().mutex);
  if (auto it = memory().picks.find(key); it != memory().picks.end()) return it->second;
  return std::nullopt;
}

void remember(const MemoryKey& key, int pick, Decision decision) {
  std::unique_lock lock(memory().mutex);
  memory().picks.emplace(key, pick);
  memory().log.push_back(std::move(decision));
}

std::vector<Decision> decisions() {
  std::shared_lock lock(memory().mutex);
  return memory().log;
}

void clear_memory() {
  std::unique_lock lock(memory().mutex);
  memory().picks.clear();
  memory().log.clear();
}

}  // namespace structgen::autotune
