#include "lib/staging/stager_settings.h"

#include "absl/strings/str_cat.h"
#include "lib/base/status_macros.h"
#include "lib/policy/sources.h"

namespace garuda {

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
