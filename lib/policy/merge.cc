#include "lib/policy/merge.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/base/status_macros.h"

namespace garuda {
namespace {

struct Source {
  const Settings* settings;
  std::string path;  // the file, or a description when there is none
  bool policy;       // a policy file (managed or user)
  bool project;
};

// Sources from the highest precedence to the lowest.
std::vector<Source> Ordered(const SettingsSources& s) {
  auto name = [](const std::string& path, const char* fallback) {
    return path.empty() ? std::string(fallback) : path;
  };
  return {
      {&s.managed_policy, name(s.managed_policy_path, "the managed policy"),
       true, false},
      {&s.user_policy, name(s.user_policy_path, "the user's policy"), true,
       false},
      {&s.project_settings,
       name(s.project_settings_path, "the project's settings"), false, true},
      {&s.user_settings, name(s.user_settings_path, "the user's settings"),
       false, false},
  };
}

absl::Status CheckChoice(const Source& source, const std::string& field,
                         const std::string& value,
                         std::initializer_list<const char*> allowed) {
  if (value.empty()) return absl::OkStatus();
  std::string list;
  for (const char* choice : allowed) {
    if (value == choice) return absl::OkStatus();
    absl::StrAppend(&list, list.empty() ? "" : ", ", "\"", choice, "\"");
  }
  return absl::InvalidArgumentError(absl::StrCat(
      source.path, ": ", field, ": \"", value, "\" is not one of ", list));
}

// A project's writable path must stay inside the project: relative, no "..".
absl::Status CheckProjectWritePath(const Source& source,
                                   const std::string& path) {
  bool escapes = path.empty() || path[0] == '/' || path[0] == '~';
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (part == "..") escapes = true;
  }
  if (escapes) {
    return absl::InvalidArgumentError(absl::StrCat(
        source.path, ": sandbox.writePaths: \"", path,
        "\": a project may add only relative paths inside itself (no \"/\", "
        "\"~\" or \"..\"); put other paths in ~/.garuda/policy.json"));
  }
  return absl::OkStatus();
}

// Each limit: the smallest non-zero value of any source.
void LowerLimits(const SandboxLimits& in, SandboxLimits* out) {
  out->set_memory_mb(StricterLimit(in.memory_mb(), out->memory_mb()));
  out->set_processes(StricterLimit(in.processes(), out->processes()));
  out->set_cpu_seconds(StricterLimit(in.cpu_seconds(), out->cpu_seconds()));
  out->set_wall_time_seconds(
      StricterLimit(in.wall_time_seconds(), out->wall_time_seconds()));
  out->set_file_size_mb(StricterLimit(in.file_size_mb(), out->file_size_mb()));
}

}  // namespace

absl::StatusOr<MergedSettings> MergeSettings(const SettingsSources& sources) {
  MergedSettings merged;
  Settings& out = merged.settings;
  out.set_profile("default");
  out.set_require_sandbox(false);
  bool mode_set = false, backend_set = false, network_set = false;
  bool audit_set = false;

  for (const Source& source : Ordered(sources)) {
    const Settings& in = *source.settings;
    RETURN_IF_ERROR(
        CheckChoice(source, "profile", in.profile(), {"default", "strict"}));
    RETURN_IF_ERROR(CheckChoice(source, "commands.mode", in.commands().mode(),
                                {"direct", "staged"}));
    RETURN_IF_ERROR(CheckChoice(source, "commands.backend",
                                in.commands().backend(),
                                {"auto", "overlay", "copy"}));

    // Strictest wins: a later (lower) source can add strict, never remove it.
    if (in.profile() == "strict" && !merged.strict()) {
      out.set_profile("strict");
      merged.strict_source = source.path;
    }
    if (in.has_require_sandbox() && in.require_sandbox() &&
        merged.require_sandbox_source.empty()) {
      out.set_require_sandbox(true);
      merged.require_sandbox_source = source.path;
    }

    if (!mode_set && !in.commands().mode().empty()) {
      out.mutable_commands()->set_mode(in.commands().mode());
      mode_set = true;
    }
    if (!backend_set && !in.commands().backend().empty()) {
      out.mutable_commands()->set_backend(in.commands().backend());
      backend_set = true;
    }
    if (!network_set && in.sandbox().has_network()) {
      out.mutable_sandbox()->set_network(in.sandbox().network());
      network_set = true;
      if (source.policy && !in.sandbox().network()) {
        merged.network_off_policy_source = source.path;
      }
    }
    for (const std::string& path : in.sandbox().write_paths()) {
      if (source.project) RETURN_IF_ERROR(CheckProjectWritePath(source, path));
      out.mutable_sandbox()->add_write_paths(path);
    }
    for (const std::string& path : in.sandbox().deny_paths()) {
      out.mutable_sandbox()->add_deny_paths(path);
    }
    LowerLimits(in.sandbox().limits(), out.mutable_sandbox()->mutable_limits());
    if (source.policy && !audit_set && in.has_audit()) {
      *out.mutable_audit() = in.audit();
      audit_set = true;
    }
  }

  if (merged.strict()) {
    out.set_require_sandbox(true);
    if (merged.require_sandbox_source.empty()) {
      merged.require_sandbox_source = merged.strict_source;
    }
  }
  if (!mode_set) out.mutable_commands()->set_mode("direct");
  if (!backend_set) out.mutable_commands()->set_backend("auto");
  if (!network_set) out.mutable_sandbox()->set_network(false);
  return merged;
}

}  // namespace garuda
