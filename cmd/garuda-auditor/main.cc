// garuda-auditor: the only writer of ~/.garuda/audit.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "lib/audit/auditor.h"
#include "lib/base/flags.h"
#include "lib/lockdown/roles.h"

ABSL_FLAG(std::string, project, "", "The project folder whose log this is.");
ABSL_FLAG(std::string, log, "",
          "The log name (letters, digits, . _ -); default: start time, pid "
          "and a random suffix. An existing log is never reopened.");
ABSL_FLAG(int, channel_fd, -1, "serve: the descriptor of the channel.");
ABSL_FLAG(std::string, accept_weaker_lockdown, "",
          "Run even where the kernel lacks Landlock or seccomp; the reason "
          "given here is reported.");

int main(int argc, char** argv) {
  std::vector<std::string> positional = garuda::ParseProgramFlags(
      argc, argv,
      "the only writer of ~/.garuda/audit: appends audit events to this "
      "process's hash-chained log, with grouped fsync, the checkpoint and "
      "the witness of the policy files (docs/audit.md).\n\n"
      "  garuda-auditor append --project DIR [--log NAME] < events.jsonl\n"
      "      one JSON event per line: {\"kind\":..., \"tool\":..., "
      "\"target\":..., \"decision\":..., \"reason\":..., \"fields\":{...}}\n"
      "  garuda-auditor serve --channel-fd=N --project DIR [--log NAME]\n"
      "      AuditRequest/AuditReply frames (proto/auditor_service.proto) on "
      "fd N");
  garuda::RequireFolderFlag("garuda-auditor", "project",
                            absl::GetFlag(FLAGS_project));
  garuda::AuditorOptions options;
  options.mode = positional.size() == 2 ? positional[1] : "";
  options.project = absl::GetFlag(FLAGS_project);
  options.log = absl::GetFlag(FLAGS_log);
  options.channel_fd = absl::GetFlag(FLAGS_channel_fd);
  auto say = [](const std::string& line) {
    std::fprintf(stderr, "garuda-auditor: %s\n", line.c_str());
  };

  // 1. Open: settings, the audit folder, a new log, the key, the channel.
  absl::StatusOr<garuda::OpenedAuditor> opened = garuda::OpenAuditor(options);
  if (!opened.ok()) {
    say(std::string(opened.status().message()));
    return absl::IsInvalidArgument(opened.status()) ? 2 : 1;
  }
  // 2. Lock down: writes only beneath the project's audit folder, no
  //    network, no exec.
  if (auto locked = garuda::LockDownAs(
          garuda::Role::kAuditor, garuda::AuditorNeeds(*opened),
          {absl::GetFlag(FLAGS_accept_weaker_lockdown), say});
      !locked.ok()) {
    say(std::string(locked.status().message()));
    return 1;
  }
  // 3. Serve.
  return garuda::ServeAuditor(*opened);
}
