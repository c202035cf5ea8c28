// One effective Settings from the four sources of lib/policy/sources.h.
//
// The rules (spec T7):
//   - profile and requireSandbox: the strictest source wins. "strict" from
//     any source makes the result strict; a project can turn strict on and
//     never off ("profile": "default" in a project does not undo a policy's
//     strict). requireSandbox true from any source stays true.
//   - A strict result implies requireSandbox.
//   - Other scalar settings: the first source that sets them, in the order
//     managed policy, user policy, project settings, user settings.
//   - Denied paths: the union of all sources (more denials are stricter).
//   - Writable paths: the union; a project may add only relative paths
//     inside itself, so a cloned project cannot open the home folder.
//   - Network: a policy file that sets it decides; otherwise the project,
//     then the user's settings.
//   - Sandbox limits (memory, processes, CPU, wall time, file size): each
//     the smallest value any source sets; a project can lower, not raise.
//   - Audit settings: only from policy files.
//   - permissions, model, knowledge and budget are not merged here yet.
// A value that is not allowed ("profile": "strickt") is an error naming the
// file and the field.
#ifndef GARUDA_LIB_POLICY_MERGE_H_
#define GARUDA_LIB_POLICY_MERGE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "lib/policy/sources.h"
#include "proto/settings.pb.h"

namespace garuda {

struct MergedSettings {
  Settings settings;  // profile is "default" or "strict"; require_sandbox set
  // The file that made the profile strict (empty when not strict), for the
  // message a person reads ("strict, from /etc/garuda/policy.json").
  std::string strict_source;
  // The file that required the sandbox, when one did (a strict one counts).
  std::string require_sandbox_source;
  // The policy file (managed or the user's) that turned the network off for
  // commands, when one did: then no flag may turn it on again.
  std::string network_off_policy_source;

  bool strict() const { return settings.profile() == "strict"; }
  bool require_sandbox() const { return settings.require_sandbox(); }
};

absl::StatusOr<MergedSettings> MergeSettings(const SettingsSources& sources);

// The stricter of two limits where 0 means "no limit": the smaller non-zero.
inline uint64_t StricterLimit(uint64_t a, uint64_t b) {
  return a != 0 && (b == 0 || a < b) ? a : b;
}

}  // namespace garuda

#endif  // GARUDA_LIB_POLICY_MERGE_H_
