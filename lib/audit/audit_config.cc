#include "lib/audit/audit_config.h"

#include "absl/strings/str_cat.h"

namespace garuda {
namespace {

struct Source {
  const Settings* settings;
  const std::string* path;
};

void NoteIgnored(const Settings& settings, const std::string& path,
                 bool fsync_counts, std::vector<std::string>* ignored) {
  if (!settings.has_audit()) return;
  const AuditSettings& audit = settings.audit();
  auto note = [&](const char* name) {
    ignored->push_back(absl::StrCat(
        "\"audit.", name, "\" in ", path,
        " is ignored: it counts only in a policy file (/etc/garuda/policy.json "
        "or ~/.garuda/policy.json)"));
  };
  if (audit.has_checkpoint()) note("checkpoint");
  if (!audit.checkpoint_command().empty()) note("checkpointCommand");
  if (audit.checkpoint_every() != 0) note("checkpointEvery");
  if (!audit.signing_key().empty()) note("signingKey");
  if (!fsync_counts) {
    if (audit.fsync_max_lines() != 0) note("fsyncMaxLines");
    if (audit.fsync_max_ms() != 0) note("fsyncMaxMs");
  }
}

}  // namespace

AuditConfig AuditConfigFromSources(const SettingsSources& sources) {
  AuditConfig config;
  // Highest first; the first source that sets a value wins.
  const Source policies[] = {
      {&sources.managed_policy, &sources.managed_policy_path},
      {&sources.user_policy, &sources.user_policy_path},
  };
  bool checkpoint_set = false, command_set = false, every_set = false;
  bool key_set = false;
  bool lines_set = false, ms_set = false;
  auto take_fsync = [&](const AuditSettings& audit) {
    if (!lines_set && audit.fsync_max_lines() != 0) {
      config.fsync_max_lines = audit.fsync_max_lines();
      lines_set = true;
    }
    if (!ms_set && audit.fsync_max_ms() != 0) {
      config.fsync_max_ms = audit.fsync_max_ms();
      ms_set = true;
    }
  };
  for (const Source& source : policies) {
    if (!source.settings->has_audit()) continue;
    const AuditSettings& audit = source.settings->audit();
    if (!checkpoint_set && audit.has_checkpoint()) {
      config.checkpoint = audit.checkpoint();
      config.checkpoint_source = *source.path;
      checkpoint_set = true;
    }
    if (!command_set && !audit.checkpoint_command().empty()) {
      config.checkpoint_command = audit.checkpoint_command();
      config.checkpoint_command_source = *source.path;
      command_set = true;
    }
    if (!key_set && !audit.signing_key().empty()) {
      config.signing_key = audit.signing_key();
      config.signing_key_source = *source.path;
      key_set = true;
    }
    if (!every_set && audit.checkpoint_every() != 0) {
      config.checkpoint_every = audit.checkpoint_every();
      every_set = true;
    }
    take_fsync(audit);
  }
  if (sources.user_settings.has_audit()) {
    take_fsync(sources.user_settings.audit());
  }
  NoteIgnored(sources.user_settings, sources.user_settings_path,
              /*fsync_counts=*/true, &config.ignored);
  NoteIgnored(sources.project_settings, sources.project_settings_path,
              /*fsync_counts=*/false, &config.ignored);
  return config;
}

}  // namespace garuda
