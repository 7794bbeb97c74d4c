#include <runtime/autotune/config.h>
#include <runtime/autotune/test_hooks.h>

#include <c10/util/Exception.h>

#include <atomic>

namespace structgen::autotune {
namespace {

std::atomic<int64_t> timed{0}, disk{0};

}  // namespace

void count_timed() { ++timed; }
void count_disk_hit() { ++disk; }
int64_t timed_count() { return timed.load(); }
int64_t disk_hits() { return disk.load(); }

void raise_if_injected(const OpKernels& op, size_t variant) {
  TORCH_CHECK(config().fail != op.op + ":" + op.variants[variant].name, "injected failure (",
              project_env_prefix(), "_AUTOTUNE_FAIL)");
}

std::optional<double> injected_time(const OpKernels& op, size_t variant, int round) {
  const auto& fake = config().fake_us;
  if (fake.empty()) return std::nullopt;
  const auto it = fake.find(op.op + ":" + op.variants[variant].name);
  if (it == fake.end() || it->second.empty()) return std::nullopt;
  return it->second[static_cast<size_t>(round) % it->second.size()];
}

}  // namespace structgen::autotune
