// The autotune switches: environment variables, read once when first asked (docs/multi_kernel.md).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace structgen::autotune {

struct Config {
  bool enabled = true;                      // <PREFIX>_AUTOTUNE=0: the first eligible variant
  bool log = false;                         // <PREFIX>_AUTOTUNE_LOG=1: a line per decision
  std::map<std::string, std::string> pins;  // <PREFIX>_AUTOTUNE_PIN: op or op@device -> variant
  std::string cache_dir;                    // empty: decisions stay in memory
  std::string fail;                         // <PREFIX>_AUTOTUNE_FAIL: "op:variant" raises (tests)
  // <PREFIX>_AUTOTUNE_FAKE_US="op:variant=100/12000;...": that variant's time in successive
  // rounds, cycled, instead of timing it (tests: a loaded machine's timings, made repeatable)
  std::map<std::string, std::vector<double>> fake_us;
};

const Config& config();

}  // namespace structgen::autotune
