// What `garuda-stager run` and `garuda-stager serve` both read before a
// command: its merged settings, and whether they
// require the OS sandbox.
#ifndef GARUDA_LIB_STAGING_STAGER_SETTINGS_H_
#define GARUDA_LIB_STAGING_STAGER_SETTINGS_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "lib/policy/merge.h"
#include "sandbox/probe.h"

namespace garuda {

// The four settings sources of `project` (lib/policy/sources.h), merged.
absl::StatusOr<MergedSettings> LoadProjectSettings(const std::string& project);

// Why the settings require the OS sandbox, and how a person would undo that.
struct SandboxRequirement {
  // "the strict profile (from /etc/garuda/policy.json) requires the OS
  // sandbox"
  std::string why;
  // "remove \"profile\": \"strict\" from /etc/garuda/policy.json"
  std::string undo;
};

// nullopt when neither the strict profile nor requireSandbox is on.
std::optional<SandboxRequirement> RequiredSandbox(
    const MergedSettings& settings);

// The probe's first missing feature as "name: reason" and its fix; nullopt
// when the sandbox works.
struct SandboxProblem {
  std::string reason;
  std::string fix;
};
std::optional<SandboxProblem> FirstSandboxProblem(const ProbeReport& report);

}  // namespace garuda

#endif  // GARUDA_LIB_STAGING_STAGER_SETTINGS_H_
