// Decisions made in this process: looked up on every call of a tuned op (no allocation, no
// string building), and kept in order for <package>.autotune.decisions().
#pragma once

#include <structgen/autotune.h>

#include <cstdint>
#include <optional>

namespace structgen::autotune {

struct MemoryKey {
  const OpKernels* op;  // generated statics: one per (op, device type)
  int8_t device_index;
  at::ScalarType dtype;
  uint64_t eligible;  // bit i: variant i is eligible
  Key key;
  bool operator==(const MemoryKey& o) const {
    return op == o.op && device_index == o.device_index && dtype == o.dtype && eligible == o.eligible &&
           key == o.key;
  }
};

MemoryKey memory_key(const OpKernels& op, at::Device device, at::ScalarType dtype, const Key& key,
                     c10::ArrayRef<bool> eligible);

std::optional<int> remembered(const MemoryKey& key);  // the variant index decided for key
void remember(const MemoryKey& key, int pick, Decision decision);

}  // namespace structgen::autotune
