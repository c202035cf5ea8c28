// The auditor's settings, taken from the settings sources by the rule of the
// spec: "checkpoint" and "checkpointCommand" count only in policy files (the
// managed policy, then ~/.garuda/policy.json); a project's settings can turn
// nothing on or off. The fsync group size may also come from the user's own
// settings, never from a project.
#ifndef GARUDA_LIB_AUDIT_AUDIT_CONFIG_H_
#define GARUDA_LIB_AUDIT_AUDIT_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "lib/policy/sources.h"

namespace garuda {

struct AuditConfig {
  bool checkpoint = false;
  std::string checkpoint_command;    // empty: no witness
  uint32_t checkpoint_every = 1000;  // lines between heads sent to a witness
  uint32_t fsync_max_lines = 1000;   // a group holds at most this many lines
  uint32_t fsync_max_ms = 100;       // ... or lines this old
  // With checkpoint: the project's Merkle tree, and its checkpoints signed
  // with the key in this file (empty: no tree).
  std::string signing_key;
  // Where each value came from, for messages; and settings that were
  // present but do not count ("... in <project>/.garuda/settings.json is
  // ignored: audit settings count only in policy files").
  std::string checkpoint_source;
  std::string checkpoint_command_source;
  std::string signing_key_source;
  std::vector<std::string> ignored;
};

AuditConfig AuditConfigFromSources(const SettingsSources& sources);

}  // namespace garuda

#endif  // GARUDA_LIB_AUDIT_AUDIT_CONFIG_H_
