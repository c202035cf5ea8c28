// garuda-auditor: the only writer of ~/.garuda/audit.
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "lib/audit/auditor.h"

ABSL_FLAG(std::string, project, "", "The project folder whose log this is.");
ABSL_FLAG(std::string, log, "",
          "The log name (letters, digits, . _ -); default: start time, pid "
          "and a random suffix. An existing log is never reopened.");
ABSL_FLAG(int, channel_fd, -1, "serve: the descriptor of the channel.");
ABSL_FLAG(std::string, accept_weaker_lockdown, "",
          "Run even where the kernel lacks Landlock or seccomp; the reason "
          "given here is reported.");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "the only writer of ~/.garuda/audit: appends audit events to this "
      "process's hash-chained log, with grouped fsync, the checkpoint and "
      "the witness of the policy files (docs/audit.md).\n\n"
      "  garuda-auditor append --project DIR [--log NAME] < events.jsonl\n"
      "      one JSON event per line: {\"kind\":..., \"tool\":..., "
      "\"target\":..., \"decision\":..., \"reason\":..., \"fields\":{...}}\n"
      "  garuda-auditor serve --channel-fd=N --project DIR [--log NAME]\n"
      "      AuditRequest/AuditReply frames (proto/audit.proto) on fd N");
  // Flags are spelled with dashes in the docs (--channel-fd); absl wants
  // underscores.
  std::vector<std::string> storage(argv, argv + argc);
  for (std::string& arg : storage) {
    if (arg.rfind("--", 0) != 0) continue;
    size_t end = arg.find('=');
    for (size_t i = 2; i < std::min(end, arg.size()); ++i) {
      if (arg[i] == '-') arg[i] = '_';
    }
  }
  std::vector<char*> args;
  for (std::string& arg : storage) args.push_back(arg.data());
  std::vector<char*> positional =
      absl::ParseCommandLine(args.size(), args.data());
  garuda::AuditorOptions options;
  options.mode = positional.size() == 2 ? positional[1] : "";
  options.project = absl::GetFlag(FLAGS_project);
  options.log = absl::GetFlag(FLAGS_log);
  options.channel_fd = absl::GetFlag(FLAGS_channel_fd);
  options.accept_weaker_lockdown = absl::GetFlag(FLAGS_accept_weaker_lockdown);
  return garuda::RunAuditor(options);
}
