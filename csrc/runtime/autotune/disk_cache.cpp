#include <runtime/autotune/config.h>
#include <runtime/autotune/device.h>
#include <runtime/autotune/disk_cache.h>
#include <runtime/autotune/json.h>
#include <runtime/autotune/build_info.h>

#include <c10/util/Exception.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <random>
#include <set>

#include <unistd.h>

namespace structgen::autotune {
namespace {

namespace fs = std::filesystem;

constexpr int kFormat = 1;
// Files of other builds unused this long are removed (another install may share the cache).
constexpr int kStaleDays = 30;

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (const unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string hex16(uint64_t h) {
  char hash[17];
  std::snprintf(hash, sizeof(hash), "%016llx", static_cast<unsigned long long>(h));
  return hash;
}

// `<op>-<device>-<dtype>-`: what every decision file of one op, device type and dtype starts with.
std::string decision_prefix(const OpKernels& op, at::Device device, at::ScalarType dtype) {
  std::string name =
      op.op + "-" + c10::DeviceTypeName(device.type(), true) + "-" + c10::toString(dtype) + "-";
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  }
  return name;
}

}  // namespace

std::string key_json(const Key& key) {
  std::string s = "[";
  for (size_t i = 0; i < key.size(); ++i) s += (i ? ", " : "") + std::to_string(key[i]);
  return s + "]";
}

Fingerprint Fingerprint::of(const OpKernels& op, at::Device device, at::ScalarType dtype, const Key& key,
                            c10::ArrayRef<bool> eligible) {
  using json::quoted;
  std::string variants = "[";
  for (size_t i = 0; i < op.variants.size(); ++i) {
    if (!eligible[i]) continue;
    if (variants.size() > 1) variants += ", ";
    variants += "{\"name\": " + quoted(op.variants[i].name) +
                ", \"source_hash\": " + quoted(op.variants[i].source_hash) + "}";
  }
  variants += "]";
  const auto& hooks = cuda_hooks();
  return Fingerprint{{
      {"op", quoted(op.op)},
      {"device_type", quoted(c10::DeviceTypeName(device.type(), /*lower_case=*/true))},
      {"device_name", quoted(device_name(device))},
      {"dtype", quoted(c10::toString(dtype))},
      {"key_text", quoted(op.key_text)},
      {"key", key_json(key)},
      {"variants", variants},
      {"compile_flags", quoted(build_info::compile_flags)},
      {"torch", quoted(build_info::torch_version)},
      {"cuda", quoted(device.is_cuda() && hooks.runtime_version ? hooks.runtime_version() : "")},
  }};
}

std::string Fingerprint::text(bool with_key) const {
  std::string s;
  for (const auto& [k, v] : fields) {
    if (with_key || k != "key") s += k + "=" + v + ";";
  }
  return s;
}

DecisionName decision_name(const OpKernels& op, at::Device device, at::ScalarType dtype,
                           const Fingerprint& fp) {
  return {decision_prefix(op, device, dtype), hex16(fnv1a(fp.text(false))), hex16(fnv1a(fp.text()))};
}

// Once per process and op, so the cache does not grow with every rebuild. Younger files stay
// (another install may share the cache and still use them).
void remove_stale(const fs::path& dir, const DecisionName& current) {
  static std::mutex mutex;
  static std::set<std::string> swept;
  {
    std::lock_guard lock(mutex);
    if (!swept.insert(current.prefix).second) return;
  }
  const size_t length = current.file().size();
  const auto cutoff = fs::file_time_type::clock::now() - std::chrono::hours(24 * kStaleDays);
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const bool same_op = name.size() == length && name.rfind(current.prefix, 0) == 0;
    if (!same_op || name.compare(current.prefix.size(), 16, current.build) == 0) continue;
    std::error_code e;
    if (it->is_regular_file(e) && fs::last_write_time(it->path(), e) < cutoff && !e)
      fs::remove(it->path(), e);
  }
}

std::optional<int> read_decision(const fs::path& path, const OpKernels& op, const Fingerprint& fp,
                                 c10::ArrayRef<bool> eligible, std::vector<Timing>& timings) {
  // Only a regular file of bounded size is read: a FIFO at the path would block the call forever
  // and a link to a device (/dev/zero) would read without end. A decision file is < 4 KiB.
  constexpr std::uintmax_t kMaxBytes = 1 << 16;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return std::nullopt;
  const bool regular = fs::is_regular_file(st);
  if (!regular || fs::file_size(path, ec) > kMaxBytes || ec) {
    TORCH_WARN(project_package(), ".autotune: ", path.string(),
               regular ? " is larger than a decision file" : " is not a regular file",
               "; ignoring it and re-tuning ", op.op);
    return std::nullopt;
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) return std::nullopt;
  std::string text(kMaxBytes + 1, '\0');
  f.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(f.gcount()));
  const std::optional<json::Value> doc = text.size() > kMaxBytes ? std::nullopt : json::parse(text);
  const json::Value* pick = doc ? doc->get("pick") : nullptr;
  const json::Value* format = doc ? doc->get("format") : nullptr;
  if (!doc || !pick || !pick->str() || !format || !format->num()) {
    TORCH_WARN(project_package(), ".autotune: the cache file ", path.string(),
               " is corrupt or truncated; re-tuning ", op.op, " and rewriting it");
    return std::nullopt;
  }
  if (*format->num() != kFormat) return std::nullopt;
  for (const auto& [k, v] : fp.fields) {  // compare as parsed values: whitespace may differ
    const json::Value* stored = doc->get(k);
    const std::optional<json::Value> want = json::parse(v);
    if (stored == nullptr || !want || !json::equal(*stored, *want)) return std::nullopt;
  }
  for (size_t i = 0; i < op.variants.size(); ++i) {
    if (eligible[i] && op.variants[i].name == *pick->str()) {
      if (const json::Value* t = doc->get("timings"); t && t->arr()) {
        for (const json::Value& e : *t->arr()) {
          const json::Value *name = e.get("variant"), *us = e.get("us"), *err = e.get("error");
          if (name && name->str() && us && us->num()) {
            timings.push_back({*name->str(), *us->num(), err && err->str() ? *err->str() : ""});
          }
        }
      }
      return static_cast<int>(i);
    }
  }
  return std::nullopt;
}

void write_decision(const fs::path& path, const Fingerprint& fp, const Decision& d) {
  using json::number;
  using json::quoted;
  std::string text = "{\n  \"format\": " + std::to_string(kFormat) + ",\n";
  for (const auto& [k, v] : fp.fields) text += "  " + quoted(k) + ": " + v + ",\n";
  text +=
      "  \"pick\": " + quoted(d.pick) + ",\n  \"tuning_ms\": " + number(d.tuning_ms) + ",\n  \"timings\": [";
  for (size_t i = 0; i < d.timings.size(); ++i) {
    const Timing& t = d.timings[i];
    text += std::string(i ? ",\n" : "\n") + "    {\"variant\": " + quoted(t.variant) +
            ", \"us\": " + number(t.us) + ", \"error\": " + quoted(t.error) + "}";
  }
  text += "\n  ]\n}\n";
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  // A private temporary name in the same directory, then rename: readers see the old file or the
  // whole new one, and concurrent writers of one decision each replace it atomically.
  thread_local std::mt19937_64 rng{std::random_device{}() ^ static_cast<uint64_t>(::getpid())};
  const fs::path tmp = path.string() + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(rng());
  bool ok = !ec;
  if (ok) {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << text;
    f.close();
    ok = static_cast<bool>(f);
  }
  if (ok) {
    fs::rename(tmp, path, ec);
    ok = !ec;
  }
  if (!ok) {
    fs::remove(tmp, ec);
    static std::once_flag unwritable_warned;
    std::call_once(unwritable_warned, [&] {
      TORCH_WARN(project_package(), ".autotune: cannot write the cache dir ", config().cache_dir,
                 "; kernel choices are kept in memory only (set ", project_env_prefix(),
                 "_AUTOTUNE_CACHE_DIR to a writable dir)");
    });
  }
}

}  // namespace structgen::autotune
