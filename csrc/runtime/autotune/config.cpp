#include <runtime/autotune/config.h>

#include <structops/autotune.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace structops::autotune {

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
    if (const char* e = std::getenv("STRUCTOPS_AUTOTUNE_FAKE_US")) {
      std::stringstream items(e);
      std::string item, value;
      while (std::getline(items, item, ';')) {
        const auto eq = item.find('=');
        if (eq == std::string::npos) continue;
        std::stringstream values(item.substr(eq + 1));
        while (std::getline(values, value, '/')) c.fake_us[item.substr(0, eq)].push_back(std::stod(value));
      }
    }
    if (const char* e = std::getenv("STRUCTOPS_AUTOTUNE_CACHE_DIR")) {
      c.cache_dir = e;  // set but empty: no disk cache, decisions stay in memory
    } else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) {
      c.cache_dir = std::string(x) + "/structops/autotune";
    } else if (const char* h = std::getenv("HOME"); h && *h) {
      c.cache_dir = std::string(h) + "/.cache/structops/autotune";
    } else {
      c.cache_dir = (std::filesystem::temp_directory_path() / "structops-autotune").string();
    }
    return c;
  }();
  return c;
}

std::string cache_dir() { return config().cache_dir; }

}  // namespace structops::autotune
