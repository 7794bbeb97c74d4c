#include <runtime/autotune/config.h>

#include <structgen/autotune.h>

#include <c10/util/Exception.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string_view>

namespace structgen::autotune {
namespace {

// <PREFIX>_AUTOTUNE_FAKE_US, checked whole: a test that mistyped it would otherwise run on other
// timings than it meant, or stop with std::stod's bare "stod".
std::map<std::string, std::vector<double>> parse_fake_us(std::string_view text) {
  constexpr std::string_view kFormat =
      "expected entries op:variant=us[/us...] separated by ';' (each variant's time per round, in "
      "microseconds), e.g. sum.IntList_out:rows=100/12000;mm.out:aten=40";
  std::map<std::string, std::vector<double>> fake;
  size_t number = 0;
  for (size_t begin = 0; begin <= text.size(); ++number) {
    const size_t end = std::min(text.find(';', begin), text.size());
    const std::string_view entry = text.substr(begin, end - begin);
    begin = end + 1;
    if (entry.empty()) continue;  // "...;" or ";;"
    const auto where = [&] {
      return c10::str(project_env_prefix(), "_AUTOTUNE_FAKE_US: entry ", number + 1, " '", entry, "'");
    };
    const size_t eq = entry.find('=');
    TORCH_CHECK(eq != std::string_view::npos, where(), " has no '='; ", kFormat);
    const std::string name(entry.substr(0, eq));
    const size_t colon = name.find(':');
    TORCH_CHECK(colon != std::string::npos && colon > 0 && colon + 1 < name.size(), where(),
                " does not start with op:variant; ", kFormat);
    TORCH_CHECK(!fake.count(name), where(), " gives ", name, " a second time; ", kFormat);
    std::vector<double>& times = fake[name];
    for (size_t lo = eq + 1; lo <= entry.size();) {
      const size_t hi = std::min(entry.find('/', lo), entry.size());
      const std::string_view value = entry.substr(lo, hi - lo);
      double us = -1;
      const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), us);
      TORCH_CHECK(ec == std::errc() && ptr == value.data() + value.size() && std::isfinite(us) && us >= 0,
                  where(), ": time ", times.size() + 1, " '", value,
                  "' is not a number of microseconds >= 0; ", kFormat);
      times.push_back(us);
      lo = hi + 1;
    }
  }
  return fake;
}

// The project's variable <PREFIX>_<name>: MYOPS_AUTOTUNE_PIN for the project named myops.
const char* env(const char* name) {
  return std::getenv((std::string(project_env_prefix()) + "_" + name).c_str());
}

}  // namespace

const Config& config() {
  static const Config c = [] {
    Config c;
    if (const char* e = env("AUTOTUNE")) c.enabled = std::string(e) != "0";
    if (const char* e = env("AUTOTUNE_LOG")) c.log = std::string(e) != "0" && *e;
    if (const char* e = env("AUTOTUNE_PIN")) {  // "sum.IntList_out=rows,mm.out=aten"
      std::stringstream items(e);
      std::string item;
      while (std::getline(items, item, ',')) {
        const auto eq = item.find('=');
        if (eq != std::string::npos) c.pins[item.substr(0, eq)] = item.substr(eq + 1);
      }
    }
    if (const char* e = env("AUTOTUNE_FAIL")) c.fail = e;
    if (const char* e = env("AUTOTUNE_FAKE_US")) c.fake_us = parse_fake_us(e);
    if (const char* e = env("AUTOTUNE_CACHE_DIR")) {
      c.cache_dir = e;  // set but empty: no disk cache, decisions stay in memory
    } else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
      c.cache_dir = std::string(x) + "/" + project_cache_name() + "/autotune";
    } else if (const char* h = std::getenv("HOME"); h && *h) {
      c.cache_dir = std::string(h) + "/.cache/" + project_cache_name() + "/autotune";
    } else {
      c.cache_dir =
          (std::filesystem::temp_directory_path() / (std::string(project_cache_name()) + "-autotune"))
              .string();
    }
    return c;
  }();
  return c;
}

std::string cache_dir() { return config().cache_dir; }

}  // namespace structgen::autotune
