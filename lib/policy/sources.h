// Where settings come from, read as they are written, before any merge.
//
//   /etc/garuda/policy.json        managed policy (highest)
//   ~/.garuda/policy.json          the user's policy
//   ~/.garuda/settings.json        the user's settings
//   <project>/.garuda/settings.json  the project's settings
//
// A missing file is an empty source; a file that does not parse stops the
// load with an error naming the file and the field.
#ifndef GARUDA_LIB_POLICY_SOURCES_H_
#define GARUDA_LIB_POLICY_SOURCES_H_

#include <string>

#include "absl/status/statusor.h"
#include "lib/base/home.h"
#include "proto/settings.pb.h"

namespace garuda {

struct SettingsLocations {
  // Folder of the managed policy; "/etc/garuda" unless a test points
  // elsewhere.
  std::string managed_dir = kManagedPolicyFolder;
  // The user's home folder; empty means HomeDirectory().
  std::string home;
  // The project's root; empty means no project settings.
  std::string project;
};

struct SettingsSources {
  Settings managed_policy;
  Settings user_policy;
  Settings user_settings;
  Settings project_settings;
  // The paths that were found and read, for messages ("strict, from
  // /etc/garuda/policy.json").
  std::string managed_policy_path;
  std::string user_policy_path;
  std::string user_settings_path;
  std::string project_settings_path;
};

absl::StatusOr<SettingsSources> LoadSettingsSources(
    const SettingsLocations& locations);

// The locations a program uses by default: GARUDA_MANAGED_POLICY_DIR, when
// set, replaces /etc/garuda (tests and packagers use it).
SettingsLocations DefaultSettingsLocations(const std::string& project);

}  // namespace garuda

#endif  // GARUDA_LIB_POLICY_SOURCES_H_
