#include "lib/policy/merge.h"

#include <optional>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/base/status_macros.h"
#include "lib/rules/sandbox_defaults.h"

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
  out->set_tmp_mb(StricterLimit(in.tmp_mb(), out->tmp_mb()));
  out->set_shm_mb(StricterLimit(in.shm_mb(), out->shm_mb()));
}

// A project's limit that would raise the person's (or the default) is left
// out, with a notice; one that lowers it is kept.
void LowerByProject(const Source& project, const SandboxLimits& in,
                    SandboxLimits* out, std::vector<std::string>* notices) {
  auto lower = [&](const char* name, uint64_t wanted, uint64_t current,
                   auto set) {
    if (wanted == 0) return;
    if (current != 0 && wanted > current) {
      notices->push_back(absl::StrCat(
          project.path, ": sandbox.limits.", name, " ", wanted,
          " is ignored: it would raise the limit of ", current,
          " that your files (or the defaults) set, and a project's settings "
          "can only lower limits; raise it in ~/.garuda/settings.json"));
      return;
    }
    set(wanted);
  };
  lower("memoryMb", in.memory_mb(), out->memory_mb(),
        [&](uint64_t v) { out->set_memory_mb(v); });
  lower("processes", in.processes(), out->processes(),
        [&](uint64_t v) { out->set_processes(static_cast<uint32_t>(v)); });
  lower("cpuSeconds", in.cpu_seconds(), out->cpu_seconds(),
        [&](uint64_t v) { out->set_cpu_seconds(static_cast<uint32_t>(v)); });
  lower("wallTimeSeconds", in.wall_time_seconds(), out->wall_time_seconds(),
        [&](uint64_t v) {
          out->set_wall_time_seconds(static_cast<uint32_t>(v));
        });
  lower("fileSizeMb", in.file_size_mb(), out->file_size_mb(),
        [&](uint64_t v) { out->set_file_size_mb(v); });
  lower("tmpMb", in.tmp_mb(), out->tmp_mb(),
        [&](uint64_t v) { out->set_tmp_mb(v); });
  lower("shmMb", in.shm_mb(), out->shm_mb(),
        [&](uint64_t v) { out->set_shm_mb(v); });
}

}  // namespace

absl::StatusOr<MergedSettings> MergeSettings(const SettingsSources& sources) {
  MergedSettings merged;
  Settings& out = merged.settings;
  out.set_profile("default");
  out.set_require_sandbox(false);
  bool backend_set = false, audit_set = false;
  // The person's word on the settings that bound a command (the policies
  // first, then ~/.garuda/settings.json), and where it came from.
  std::string mode, mode_source, network_source;
  std::optional<bool> network;
  // A copy: Ordered() is a temporary of the loop.
  std::optional<Source> project;
  SandboxLimits person_limits;

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
    // The backend does not bound what a command may do: first source wins.
    if (!backend_set && !in.commands().backend().empty()) {
      out.mutable_commands()->set_backend(in.commands().backend());
      backend_set = true;
    }
    for (const std::string& path : in.sandbox().deny_paths()) {
      out.mutable_sandbox()->add_deny_paths(path);
    }
    if (source.policy && !audit_set && in.has_audit()) {
      *out.mutable_audit() = in.audit();
      audit_set = true;
    }
    if (source.project) {
      project = source;
      for (const std::string& path : in.sandbox().write_paths()) {
        RETURN_IF_ERROR(CheckProjectWritePath(source, path));
      }
      continue;  // the rest of a project's settings is merged below
    }
    if (mode.empty() && !in.commands().mode().empty()) {
      mode = in.commands().mode();
      mode_source = source.path;
    }
    if (!network.has_value() && in.sandbox().has_network()) {
      network = in.sandbox().network();
      network_source = source.path;
      if (source.policy && !in.sandbox().network()) {
        merged.network_off_policy_source = source.path;
      }
    }
    for (const std::string& path : in.sandbox().write_paths()) {
      out.mutable_sandbox()->add_write_paths(path);
    }
    LowerLimits(in.sandbox().limits(), &person_limits);
  }

  // Where the person's files say nothing: the defaults, which they may
  // raise (policies/sandbox/defaults.json).
  const DefaultLimits& defaults = DefaultSandboxSettings().limits();
  if (person_limits.processes() == 0) {
    person_limits.set_processes(defaults.processes());
  }
  if (person_limits.tmp_mb() == 0) person_limits.set_tmp_mb(defaults.tmp_mb());
  if (person_limits.shm_mb() == 0) person_limits.set_shm_mb(defaults.shm_mb());
  if (mode.empty()) mode = "direct";
  bool network_on = network.value_or(false);

  // A project's settings can only narrow what the person's files allow.
  if (project.has_value()) {
    const Settings& in = *project->settings;
    auto ignored = [&](const std::string& what, const std::string& why) {
      merged.notices.push_back(absl::StrCat(
          project->path, ": ", what, " is ignored: ", why,
          ", and a project's settings can only narrow what a command may "
          "do; set it in ~/.garuda/settings.json to allow it"));
    };
    const std::string& wanted_mode = in.commands().mode();
    if (wanted_mode == "staged") {
      mode = "staged";
    } else if (wanted_mode == "direct" && mode == "staged") {
      ignored("commands.mode \"direct\"",
              absl::StrCat(mode_source, " sets \"staged\""));
    }
    if (in.sandbox().has_network()) {
      if (!in.sandbox().network()) {
        network_on = false;
      } else if (!network_on) {
        ignored("sandbox.network true",
                network_source.empty()
                    ? std::string("the network is off by default")
                    : absl::StrCat(network_source, " turns it off"));
      }
    }
    if (in.sandbox().write_paths_size() > 0) {
      ignored("sandbox.writePaths",
              "a project's own folders are writable already in direct mode "
              "(its .git/config and the like are kept read-only on purpose), "
              "and staged mode writes only through garuda-applier");
    }
    LowerByProject(*project, in.sandbox().limits(), &person_limits,
                   &merged.notices);
  }

  out.mutable_commands()->set_mode(mode);
  out.mutable_sandbox()->set_network(network_on);
  // The allow list through the proxy (lib/policy/network_merge.h).
  ASSIGN_OR_RETURN(MergedNetwork net, MergeNetwork(sources, network, network_on,
                                                   out.mutable_sandbox()));
  merged.network_access = net.access;
  merged.allow_list_policy_source = net.allow_list_policy_source;
  merged.network_denied_domains = std::move(net.denied_domains);
  merged.network_ports = std::move(net.ports);
  for (std::string& notice : net.notices) {
    merged.notices.push_back(std::move(notice));
  }
  *out.mutable_sandbox()->mutable_limits() = person_limits;
  if (merged.strict()) {
    out.set_require_sandbox(true);
    if (merged.require_sandbox_source.empty()) {
      merged.require_sandbox_source = merged.strict_source;
    }
  }
  if (!backend_set) out.mutable_commands()->set_backend("auto");
  return merged;
}

}  // namespace garuda
