#include "lib/staging/stager_settings.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/policy/sources.h"

namespace garuda {

absl::StatusOr<std::string> RealProjectPath(const std::string& project) {
  std::string path = project;
  if (path.empty()) {
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof cwd) == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("the current folder: ", std::strerror(errno)));
    }
    path = cwd;
  }
  char real[PATH_MAX];
  if (::realpath(path.c_str(), real) == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("project ", path, ": ", std::strerror(errno)));
  }
  return std::string(real);
}

absl::StatusOr<MergedSettings> LoadProjectSettings(const std::string& project) {
  ASSIGN_OR_RETURN(SettingsSources sources,
                   LoadSettingsSources(DefaultSettingsLocations(project)));
  return MergeSettings(sources);
}

std::optional<SandboxRequirement> RequiredSandbox(
    const MergedSettings& settings) {
  if (!settings.require_sandbox()) return std::nullopt;
  if (settings.strict()) {
    return SandboxRequirement{
        absl::StrCat("the strict profile (from ", settings.strict_source,
                     ") requires the OS sandbox"),
        absl::StrCat("remove \"profile\": \"strict\" from ",
                     settings.strict_source)};
  }
  return SandboxRequirement{
      absl::StrCat("requireSandbox (from ", settings.require_sandbox_source,
                   ") requires the OS sandbox"),
      absl::StrCat("remove \"requireSandbox\" from ",
                   settings.require_sandbox_source)};
}

std::optional<SandboxProblem> FirstSandboxProblem(const ProbeReport& report) {
  const ProbeFeature* missing = report.FirstMissing();
  if (missing == nullptr) return std::nullopt;
  return SandboxProblem{absl::StrCat(missing->name, ": ", missing->reason),
                        missing->fix};
}

}  // namespace garuda
