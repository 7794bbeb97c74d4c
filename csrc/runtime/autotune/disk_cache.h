// Decisions on disk: one JSON file per decision, named by what it depends on, written atomically
// (docs/multi_kernel.md, "At run time"). No lock: a process never waits on another.
#pragma once

#include <structgen/autotune.h>

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace structgen::autotune {

// Everything a decision depends on besides the call's key: in the file, and hashed into its name.
struct Fingerprint {
  std::vector<std::pair<std::string, std::string>> fields;  // name -> JSON text

  static Fingerprint of(const OpKernels& op, at::Device device, at::ScalarType dtype, const Key& key,
                        c10::ArrayRef<bool> eligible);
  // Every field (with_key) or every field but the call's key: what the build and machine decide.
  std::string text(bool with_key = true) const;
};

// <prefix><build>-<decision>.json, prefix `<op>-<device>-<dtype>-`: build hashes the fingerprint
// without the key (variants and their sources, flags, torch, device), decision hashes all of it.
struct DecisionName {
  std::string prefix, build, decision;
  std::string file() const { return prefix + build + "-" + decision + ".json"; }
};
DecisionName decision_name(const OpKernels& op, at::Device device, at::ScalarType dtype,
                           const Fingerprint& fp);

// Removes decision files of the same op, device type and dtype from other builds that no process
// has read or written for kStaleDays; once per process and op.
void remove_stale(const std::filesystem::path& dir, const DecisionName& current);

// The picked variant's index; nullopt when absent or for other code (a fingerprint mismatch:
// re-tuned and overwritten). A corrupt file warns and counts as absent. Fills `timings` from it.
std::optional<int> read_decision(const std::filesystem::path& path, const OpKernels& op,
                                 const Fingerprint& fp, c10::ArrayRef<bool> eligible,
                                 std::vector<Timing>& timings);

// Written to a private temporary file and renamed; an unwritable dir warns once.
void write_decision(const std::filesystem::path& path, const Fingerprint& fp, const Decision& d);

std::string key_json(const Key& key);  // "[1024, 1]"

}  // namespace structgen::autotune
