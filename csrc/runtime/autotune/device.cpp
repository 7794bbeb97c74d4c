#include <runtime/autotune/device.h>

#include <fstream>

namespace structgen::autotune {
namespace {

DeviceHooks& hooks() {
  static DeviceHooks h;
  return h;
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

}  // namespace

void register_cuda_hooks(const DeviceHooks& h) { hooks() = h; }
const DeviceHooks& cuda_hooks() { return hooks(); }

std::string device_name(at::Device d) {
  if (d.is_cuda() && hooks().device_name) return hooks().device_name(d);
  return d.is_cpu() ? cpu_name() : d.str();
}

}  // namespace structgen::autotune
