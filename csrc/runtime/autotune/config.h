// The autotune switches: environment variables, read once when first asked (docs/multi_kernel.md).
#pragma once

#include <map>
#include <string>

namespace structops::autotune {

struct Config {
  bool enabled = true;                      // STRUCTOPS_AUTOTUNE=0: the first eligible variant
  bool log = false;                         // STRUCTOPS_AUTOTUNE_LOG=1: a line per decision
  std::map<std::string, std::string> pins;  // STRUCTOPS_AUTOTUNE_PIN: op or op@device -> variant
  std::string cache_dir;                    // empty: decisions stay in memory
  std::string fail;                         // STRUCTOPS_AUTOTUNE_FAIL: "op:variant" raises (tests)
};

const Config& config();

}  // namespace structops::autotune
