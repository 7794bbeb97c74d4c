// The multi-kernel runtime: see structops/autotune.h for what it decides and why.
#include <structops/autotune.h>

#include <ATen/core/Tensor.h>
#include <ATen/ops/empty_strided.h>
#include <c10/util/Exception.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <shared_mutex>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>
#include <unordered_map>
#include <variant>

#ifndef STRUCTOPS_TORCH_VERSION
#define STRUCTOPS_TORCH_VERSION "unknown"
#endif
#ifndef STRUCTOPS_COMPILE_FLAGS
#define STRUCTOPS_COMPILE_FLAGS "unknown"
#endif

namespace structops::autotune {
namespace {

namespace fs = std::filesystem;

constexpr int kFormat = 1;
constexpr double kBudgetMs = 20;
constexpr int kMinRepeats = 5;
constexpr int kMaxRepeats = 25;

// --- a minimal JSON value: what the cache files hold ----------------------------------------

struct Json {
  std::variant<std::nullptr_t, bool, double, std::string, std::vector<Json>, std::vector<std::pair<std::string, Json>>> v;
  const Json* get(const std::string& k) const {
    const auto* obj = std::get_if<std::vector<std::pair<std::string, Json>>>(&v);
    if (obj == nullptr) return nullptr;
    for (const auto& [key, value] : *obj) {
      if (key == k) return &value;
    }
    return nullptr;
  }
  const std::string* str() const { return std::get_if<std::string>(&v); }
  const double* num() const { return std::get_if<double>(&v); }
  const std::vector<Json>* arr() const { return std::get_if<std::vector<Json>>(&v); }
};

// A recursive-descent parser; nullopt on any syntax error (a truncated or corrupt file).
class Parser {
 public:
  explicit Parser(const std::string& s) : s_(s) {}
  std::optional<Json> document() {
    auto v = value(0);
    skip();
    if (!v || i_ != s_.size()) return std::nullopt;
    return v;
  }

 private:
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(char c) {
    skip();
    if (i_ < s_.size() && s_[i_] == c) return ++i_, true;
    return false;
  }
  bool literal(const char* word) {
    const size_t n = std::char_traits<char>::length(word);
    if (s_.compare(i_, n, word) != 0) return false;
    i_ += n;
    return true;
  }
  std::optional<std::string> string() {
    if (!eat('"')) return std::nullopt;
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      char c = s_[i_++];
      if (c == '\\') {
        if (i_ >= s_.size()) return std::nullopt;
        const char e = s_[i_++];
        if (e == 'n') c = '\n';
        else if (e == 't') c = '\t';
        else if (e == '"' || e == '\\' || e == '/') c = e;
        else return std::nullopt;  // we never write \u escapes
      }
      out += c;
    }
    if (i_ >= s_.size()) return std::nullopt;
    ++i_;
    return out;
  }
  std::optional<Json> value(int depth) {
    skip();
    if (depth > 16 || i_ >= s_.size()) return std::nullopt;
    const char c = s_[i_];
    if (c == '{') {
      ++i_;
      std::vector<std::pair<std::string, Json>> obj;
      if (eat('}')) return Json{std::move(obj)};
      do {
        auto k = string();
        if (!k || !eat(':')) return std::nullopt;
        auto v = value(depth + 1);
        if (!v) return std::nullopt;
        obj.emplace_back(std::move(*k), std::move(*v));
      } while (eat(','));
      if (!eat('}')) return std::nullopt;
      return Json{std::move(obj)};
    }
    if (c == '[') {
      ++i_;
      std::vector<Json> arr;
      if (eat(']')) return Json{std::move(arr)};
      do {
        auto v = value(depth + 1);
        if (!v) return std::nullopt;
        arr.push_back(std::move(*v));
      } while (eat(','));
      if (!eat(']')) return std::nullopt;
      return Json{std::move(arr)};
    }
    if (c == '"') {
      auto s = string();
      if (!s) return std::nullopt;
      return Json{std::move(*s)};
    }
    if (literal("true")) return Json{true};
    if (literal("false")) return Json{false};
    if (literal("null")) return Json{nullptr};
    const char* begin = s_.c_str() + i_;
    char* end = nullptr;
    const double d = std::strtod(begin, &end);
    if (end == begin) return std::nullopt;
    i_ += end - begin;
    return Json{d};
  }
  const std::string& s_;
  size_t i_ = 0;
};

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (static_cast<unsigned char>(c) < 0x20) out += ' ';
    else out += c;
  }
  return out + "\"";
}

std::string number(double d) {
  std::ostringstream os;
  os.precision(6);
  os << d;
  return os.str();
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (const unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// --- configuration, read once ----------------------------------------------------------------

struct Config {
  bool enabled = true;
  bool log = false;
  std::map<std::string, std::string> pins;  // op -> variant
  std::string cache_dir;
  std::string fail;  // "op:variant" to raise while timing (tests)
};

const Config& config() {
  static const Config c = [] {
    Config c;
    if (const char* e = std::getenv("STRUCTOPS_AUTOTUNE")) c.enabled = std::string(e) != "0";
    if (const char* e = std::getenv("STRUCTOPS_AUTOTUNE_LOG")) c.log = std::string(e) != "0" && *e;
    if (const char* e = std::getenv("STRUCTOPS_AUTOTUNE_PIN")) {  // "sum.IntList_out=rows,mm.out=aten"
      std::stringstream items(e);
      std::string item;
      while (std::getline(items, item, ',')) {
        const auto eq = item.find('=');
        if (eq != std::string::npos) c.pins[item.substr(0, eq)] = item.substr(eq + 1);
      }
    }
    if (const char* e = std::getenv("STRUCTOPS_AUTOTUNE_FAIL")) c.fail = e;
    if (const char* e = std::getenv("STRUCTOPS_AUTOTUNE_CACHE_DIR")) {
      c.cache_dir = e;  // set but empty: no disk cache, decisions stay in memory
    } else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
      c.cache_dir = std::string(x) + "/structops/autotune";
    } else if (const char* h = std::getenv("HOME"); h && *h) {
      c.cache_dir = std::string(h) + "/.cache/structops/autotune";
    } else {
      c.cache_dir = (fs::temp_directory_path() / "structops-autotune").string();
    }
    return c;
  }();
  return c;
}

DeviceHooks& cuda_hooks() {
  static DeviceHooks hooks;
  return hooks;
}

std::string cpu_name() {
  static const std::string name = [] {
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line)) {
      if (line.rfind("model name", 0) == 0) {
        const auto colon = line.find(':');
        if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
      }
    }
    return std::string("cpu");
  }();
  return name;
}

std::string device_name(at::Device d) {
  if (d.is_cuda() && cuda_hooks().device_name) return cuda_hooks().device_name(d);
  return d.is_cpu() ? cpu_name() : d.str();
}

// --- process state ---------------------------------------------------------------------------


// What a decision in memory is looked up by, on every call: no allocation, no string building.
struct MemoryKey {
  const OpKernels* op;  // generated statics: one per (op, device type)
  int8_t device_index;
  at::ScalarType dtype;
  uint64_t eligible;  // bit i: variant i is eligible
  Key key;
  bool operator==(const MemoryKey& o) const {
    return op == o.op && device_index == o.device_index && dtype == o.dtype && eligible == o.eligible && key == o.key;
  }
};

struct MemoryKeyHash {
  size_t operator()(const MemoryKey& k) const {
    uint64_t h = reinterpret_cast<uintptr_t>(k.op) ^ (static_cast<uint64_t>(k.device_index) << 8) ^
                 (static_cast<uint64_t>(k.dtype) << 16) ^ (k.eligible << 24);
    for (const int64_t v : k.key) h = (h ^ static_cast<uint64_t>(v)) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

MemoryKey memory_key(const OpKernels& op, at::Device device, at::ScalarType dtype, const Key& key,
                     c10::ArrayRef<bool> eligible) {
  uint64_t mask = 0;
  for (size_t i = 0; i < eligible.size() && i < 64; ++i) mask |= static_cast<uint64_t>(eligible[i]) << i;
  return MemoryKey{&op, device.index(), dtype, mask, key};
}

struct State {
  std::shared_mutex mutex;  // guards picks, pins, log
  std::unordered_map<MemoryKey, int, MemoryKeyHash> picks;  // -> variant index
  std::map<std::string, std::string> pins;     // structops.autotune.pin(): op -> variant ("" = unpinned)
  std::vector<Decision> log;
  std::recursive_mutex tuning;  // one tuning at a time (timings must not overlap); recursive: a
                                // variant may itself call a tuned op
  std::atomic<int64_t> timed{0}, disk_hits{0};
  std::atomic<bool> has_pins{false};  // any autotune.pin(): lets unpinned calls skip the lookup
  std::once_flag unwritable_warned;
};

State& state() {
  static State s;
  return s;
}

std::string key_json(const Key& key) {
  std::string s = "[";
  for (size_t i = 0; i < key.size(); ++i) s += (i ? ", " : "") + std::to_string(key[i]);
  return s + "]";
}

// Everything a decision depends on besides the call's key: in the file, and hashed into its name.
struct Fingerprint {
  std::vector<std::pair<std::string, std::string>> fields;  // name -> JSON text

  static Fingerprint of(const OpKernels& op, at::Device device, at::ScalarType dtype, const Key& key,
                        c10::ArrayRef<bool> eligible) {
    std::string variants = "[";
    for (size_t i = 0; i < op.variants.size(); ++i) {
      if (!eligible[i]) continue;
      if (variants.size() > 1) variants += ", ";
      variants += "{\"name\": " + quoted(op.variants[i].name) + ", \"source_hash\": " +
                  quoted(op.variants[i].source_hash) + "}";
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
        {"compile_flags", quoted(STRUCTOPS_COMPILE_FLAGS)},
        {"torch", quoted(STRUCTOPS_TORCH_VERSION)},
        {"cuda", quoted(device.is_cuda() && hooks.runtime_version ? hooks.runtime_version() : "")},
    }};
  }

  // Every field (with_key) or every field but the call's key: what the build and machine decide.
  std::string text(bool with_key = true) const {
    std::string s;
    for (const auto& [k, v] : fields) {
      if (with_key || k != "key") s += k + "=" + v + ";";
    }
    return s;
  }
};

std::string hex16(uint64_t h) {
  char hash[17];
  std::snprintf(hash, sizeof(hash), "%016llx", static_cast<unsigned long long>(h));
  return hash;
}

// `<op>-<device>-<dtype>-`: what every decision file of one op, device type and dtype starts with.
std::string decision_prefix(const OpKernels& op, at::Device device, at::ScalarType dtype) {
  std::string name = op.op + "-" + c10::DeviceTypeName(device.type(), true) + "-" + c10::toString(dtype) + "-";
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  }
  return name;
}

// <prefix><build>-<decision>.json: build hashes the fingerprint without the key (variants and
// their sources, flags, torch, device), decision hashes all of it.
struct DecisionName {
  std::string prefix, build, decision;
  std::string file() const { return prefix + build + "-" + decision + ".json"; }
};

DecisionName decision_name(const OpKernels& op, at::Device device, at::ScalarType dtype, const Fingerprint& fp) {
  return {decision_prefix(op, device, dtype), hex16(fnv1a(fp.text(false))), hex16(fnv1a(fp.text()))};
}

// Decision files of the same op, device type and dtype from other builds that no process has read
// or written for kStaleDays: removed, once per process and op, so the cache does not grow with
// every rebuild. Younger ones stay (another install may share the cache and still use them).
constexpr int kStaleDays = 30;
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
    if (it->is_regular_file(e) && fs::last_write_time(it->path(), e) < cutoff && !e) fs::remove(it->path(), e);
  }
}

// Reads a decision file: the picked variant's index, nullopt when absent or for other code
// (a fingerprint mismatch: re-tuned and overwritten); a corrupt file warns and counts as absent.
// Holds the cache dir's lock file while a decision is read or tuned, so processes that share the
// cache time each decision once (and do not disturb each other's timings). The wait is bounded:
// a process stopped while tuning must not stall the others; past it they tune unlocked.
class TuningLock {
 public:
  explicit TuningLock(const std::string& dir) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    fd_ = ::open((fs::path(dir) / ".tuning.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    for (int tries = 0; fd_ >= 0 && tries < 600; ++tries) {
      if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) {
        locked_ = true;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ~TuningLock() {
    if (locked_) ::flock(fd_, LOCK_UN);
    if (fd_ >= 0) ::close(fd_);
  }
  TuningLock(const TuningLock&) = delete;
  TuningLock& operator=(const TuningLock&) = delete;

 private:
  int fd_ = -1;
  bool locked_ = false;
};

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
    TORCH_WARN("structops.autotune: ", path.string(), regular ? " is larger than a decision file" : " is not a regular file",
               "; ignoring it and re-tuning ", op.op);
    return std::nullopt;
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) return std::nullopt;
  std::string text(kMaxBytes + 1, '\0');
  f.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(f.gcount()));
  const std::optional<Json> doc = text.size() > kMaxBytes ? std::nullopt : Parser(text).document();
  const Json* pick = doc ? doc->get("pick") : nullptr;
  const Json* format = doc ? doc->get("format") : nullptr;
  if (!doc || !pick || !pick->str() || !format || !format->num()) {
    TORCH_WARN("structops.autotune: the cache file ", path.string(),
               " is corrupt or truncated; re-tuning ", op.op, " and rewriting it");
    return std::nullopt;
  }
  if (*format->num() != kFormat) return std::nullopt;
  for (const auto& [k, v] : fp.fields) {  // compare as parsed values: whitespace may differ
    const Json* stored = doc->get(k);
    const std::optional<Json> want = Parser(v).document();
    auto same = [](const Json& a, const Json& b, auto&& self) -> bool {
      if (a.v.index() != b.v.index()) return false;
      if (const auto* x = a.arr()) {
        const auto& y = *b.arr();
        if (x->size() != y.size()) return false;
        for (size_t i = 0; i < x->size(); ++i) {
          if (!self((*x)[i], y[i], self)) return false;
        }
        return true;
      }
      if (const auto* x = std::get_if<std::vector<std::pair<std::string, Json>>>(&a.v)) {
        const auto& y = std::get<std::vector<std::pair<std::string, Json>>>(b.v);
        if (x->size() != y.size()) return false;
        for (size_t i = 0; i < x->size(); ++i) {
          if ((*x)[i].first != y[i].first || !self((*x)[i].second, y[i].second, self)) return false;
        }
        return true;
      }
      if (const auto* x = a.str()) return *x == *b.str();
      if (const auto* x = a.num()) return *x == *b.num();
      if (const auto* x = std::get_if<bool>(&a.v)) return *x == std::get<bool>(b.v);
      return true;  // null
    };
    if (stored == nullptr || !want || !same(*stored, *want, same)) return std::nullopt;
  }
  for (size_t i = 0; i < op.variants.size(); ++i) {
    if (eligible[i] && op.variants[i].name == *pick->str()) {
      if (const Json* t = doc->get("timings"); t && t->arr()) {
        for (const Json& e : *t->arr()) {
          const Json *name = e.get("variant"), *us = e.get("us"), *err = e.get("error");
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
  std::string text = "{\n  \"format\": " + std::to_string(kFormat) + ",\n";
  for (const auto& [k, v] : fp.fields) text += "  " + quoted(k) + ": " + v + ",\n";
  text += "  \"pick\": " + quoted(d.pick) + ",\n  \"tuning_ms\": " + number(d.tuning_ms) + ",\n  \"timings\": [";
  for (size_t i = 0; i < d.timings.size(); ++i) {
    const Timing& t = d.timings[i];
    text += std::string(i ? ",\n" : "\n") + "    {\"variant\": " + quoted(t.variant) + ", \"us\": " + number(t.us) +
            ", \"error\": " + quoted(t.error) + "}";
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
    std::call_once(state().unwritable_warned, [&] {
      TORCH_WARN("structops.autotune: cannot write the cache dir ", config().cache_dir,
                 "; kernel choices are kept in memory only (set STRUCTOPS_AUTOTUNE_CACHE_DIR to a writable dir)");
    });
  }
}

void log_decision(const Decision& d) {
  if (!config().log) return;
  std::string line = "structops.autotune: " + d.op + " " + d.device + " " + d.dtype + " key=" + key_json(d.key) +
                     " -> " + d.pick + " (" + d.source;
  for (const Timing& t : d.timings) {
    line += "; " + t.variant + " " + (t.us >= 0 ? number(t.us) + " us" : t.error);
  }
  if (d.source == "tuned") line += "; tuning " + number(d.tuning_ms) + " ms";
  std::fprintf(stderr, "%s)\n", line.c_str());
}

std::optional<int> pinned(const OpKernels& op, c10::ArrayRef<bool> eligible) {
  if (config().pins.empty() && !state().has_pins.load(std::memory_order_relaxed)) return std::nullopt;
  // "op@cuda" pins one device type's variant, "op" every device's.
  const std::string qualified = op.op + "@" + c10::DeviceTypeName(op.device_type, /*lower_case=*/true);
  std::string name;
  {
    std::shared_lock lock(state().mutex);
    for (const std::string& k : {qualified, op.op}) {
      if (auto it = state().pins.find(k); name.empty() && it != state().pins.end()) name = it->second;
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
  TORCH_CHECK(false, "structops.autotune: ", op.op, " has no variant '", name, "' on ",
              c10::DeviceTypeName(op.device_type), " (pinned by STRUCTOPS_AUTOTUNE_PIN or autotune.pin()); its variants: ",
              known);
}

int first_eligible(const OpKernels& op, c10::ArrayRef<bool> eligible) {
  for (size_t i = 0; i < eligible.size(); ++i) {
    if (eligible[i]) return static_cast<int>(i);
  }
  TORCH_CHECK(false, "structops.autotune: none of ", op.op, "'s ", c10::DeviceTypeName(op.device_type),
              " kernel variants is eligible for this call (see the manifest's `kernels:` conditions and dtypes)");
}

}  // namespace

int choose(const OpKernels& op, at::Device device, at::ScalarType dtype, const Key& key,
           c10::ArrayRef<bool> eligible, c10::function_ref<double(int)> time_variant) {
  if (auto p = pinned(op, eligible)) return *p;
  if (!config().enabled) return first_eligible(op, eligible);
  State& s = state();
  const MemoryKey mkey = memory_key(op, device, dtype, key, eligible);
  {
    std::shared_lock lock(s.mutex);
    if (auto it = s.picks.find(mkey); it != s.picks.end()) return it->second;
  }
  const int n_eligible = static_cast<int>(std::count(eligible.begin(), eligible.end(), true));
  if (n_eligible > 1 && device.is_cuda() && cuda_hooks().capturing && cuda_hooks().capturing(device)) {
    return first_eligible(op, eligible);  // timing would record into the graph: decide after capture
  }

  std::lock_guard tuning(s.tuning);
  {
    std::shared_lock lock(s.mutex);
    if (auto it = s.picks.find(mkey); it != s.picks.end()) return it->second;  // tuned meanwhile
  }
  Decision d{op.op, device.str(), c10::toString(dtype), key, op.key_text, "", "", 0, {}};
  int pick = first_eligible(op, eligible);
  if (n_eligible == 1) {
    d.source = "only eligible";
  } else {
    const Fingerprint fp = Fingerprint::of(op, device, dtype, key, eligible);
    const DecisionName name = decision_name(op, device, dtype, fp);
    const fs::path path = fs::path(config().cache_dir) / name.file();
    const bool on_disk = !config().cache_dir.empty();
    std::optional<TuningLock> across_processes;
    if (on_disk) across_processes.emplace(config().cache_dir);
    if (on_disk) remove_stale(config().cache_dir, name);
    if (auto cached = on_disk ? read_decision(path, op, fp, eligible, d.timings) : std::nullopt) {
      pick = *cached;
      d.source = "disk";
      ++s.disk_hits;
      std::error_code ec;  // in use: not stale for another kStaleDays
      fs::last_write_time(path, fs::file_time_type::clock::now(), ec);
    } else {
      d.timings.clear();
      d.source = "tuned";
      const auto start = std::chrono::steady_clock::now();
      double best = -1;
      std::vector<double> us(op.variants.size(), -1);
      for (size_t i = 0; i < op.variants.size(); ++i) {
        if (!eligible[i]) {
          d.timings.push_back({op.variants[i].name, -1, "not eligible"});
          continue;
        }
        try {
          // STRUCTOPS_AUTOTUNE_FAIL=op:variant makes that variant raise while being timed: how the
          // tests check that a failing variant is excluded (no kernel fails on demand).
          TORCH_CHECK(config().fail != op.op + ":" + op.variants[i].name, "injected failure (STRUCTOPS_AUTOTUNE_FAIL)");
          us[i] = time_variant(static_cast<int>(i));
          ++s.timed;
          d.timings.push_back({op.variants[i].name, us[i], ""});
          best = best < 0 ? us[i] : std::min(best, us[i]);
        } catch (const std::exception& e) {
          std::string what = e.what();
          if (auto* c10e = dynamic_cast<const c10::Error*>(&e)) what = c10e->what_without_backtrace();
          d.timings.push_back({op.variants[i].name, -1, "raised: " + what.substr(0, what.find('\n'))});
        }
      }
      d.tuning_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      if (best < 0) {
        // Every variant raised: an error of the call itself (bad data), not of one kernel. Decide
        // nothing; the real call raises it.
        log_decision({op.op, device.str(), c10::toString(dtype), key, op.key_text, op.variants[pick].name,
                      "every variant raised", d.tuning_ms, d.timings});
        return pick;
      }
      for (size_t i = 0; i < op.variants.size(); ++i) {
        if (us[i] >= 0 && us[i] <= best * (1 + kTie)) {
          pick = static_cast<int>(i);  // the first declared within the tie band of the fastest
          break;
        }
      }
      d.pick = op.variants[pick].name;
      if (on_disk) write_decision(path, fp, d);
    }
  }
  d.pick = op.variants[pick].name;
  log_decision(d);
  std::unique_lock lock(s.mutex);
  s.picks.emplace(mkey, pick);
  s.log.push_back(std::move(d));
  return pick;
}

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
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

at::Tensor scratch_like(const at::Tensor& t) {
  return at::empty_strided(t.sizes(), t.strides(), t.options());
}

std::vector<Decision> decisions() {
  std::shared_lock lock(state().mutex);
  return state().log;
}

void clear_memory() {
  std::unique_lock lock(state().mutex);
  state().picks.clear();
  state().log.clear();
}

void set_pin(const std::string& op, const std::string& name) {
  std::unique_lock lock(state().mutex);
  if (name.empty()) {
    state().pins.erase(op);
  } else {
    state().pins[op] = name;
  }
  state().has_pins = !state().pins.empty();
}

std::string cache_dir() { return config().cache_dir; }
int64_t timed_count() { return state().timed.load(); }
int64_t disk_hits() { return state().disk_hits.load(); }

void register_cuda_hooks(const DeviceHooks& hooks) { cuda_hooks() = hooks; }

}  // namespace structops::autotune
