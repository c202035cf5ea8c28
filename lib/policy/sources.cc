#include "lib/policy/sources.h"

#include <cstdlib>

#include "lib/base/files.h"
#include "lib/base/home.h"
#include "lib/base/json_message.h"
#include "lib/base/status_macros.h"

namespace garuda {
namespace {

// Reads `path` into `settings`; a missing file leaves it empty and `found`
// empty. Links are followed only in the person's and the system's own files
// (dotfile managers link them); a project's settings come with the
// repository, which can commit a link to /dev/zero or to a secret.
absl::Status ReadOptionalSource(const std::string& path, bool follow_links,
                                Settings* settings, std::string* found) {
  absl::Status status =
      ReadJsonMessageFile(path, settings, JsonFileOptions(follow_links));
  if (absl::IsNotFound(status)) {
    settings->Clear();
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(status);
  *found = path;
  return absl::OkStatus();
}

}  // namespace

SettingsLocations DefaultSettingsLocations(const std::string& project) {
  SettingsLocations locations;
  const char* managed = std::getenv("GARUDA_MANAGED_POLICY_DIR");
  if (managed != nullptr && managed[0] != '\0') locations.managed_dir = managed;
  locations.project = project;
  return locations;
}

absl::StatusOr<SettingsSources> LoadSettingsSources(
    const SettingsLocations& locations) {
  SettingsSources sources;
  std::string home = locations.home;
  if (home.empty()) {
    ASSIGN_OR_RETURN(home, HomeDirectory());
  }
  RETURN_IF_ERROR(
      ReadOptionalSource(ManagedPolicyFile(locations.managed_dir), true,
                         &sources.managed_policy,
                         &sources.managed_policy_path));
  RETURN_IF_ERROR(ReadOptionalSource(UserPolicyFile(home),
                                     true, &sources.user_policy,
                                     &sources.user_policy_path));
  RETURN_IF_ERROR(ReadOptionalSource(UserSettingsFile(home),
                                     true, &sources.user_settings,
                                     &sources.user_settings_path));
  if (!locations.project.empty()) {
    RETURN_IF_ERROR(ReadOptionalSource(
        ProjectSettingsFile(locations.project), false,
        &sources.project_settings, &sources.project_settings_path));
  }
  return sources;
}

}  // namespace garuda
