// garuda-budgeter: the token ledger of one session and of all its child
// agents (spec T9). See docs/budget.md.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "lib/base/files.h"
#include "lib/base/flags.h"
#include "lib/budget/server.h"
#include "lib/lockdown/roles.h"

ABSL_FLAG(int, channel_fd, -1,
          "serve: the descriptor of the top agent's channel (a Unix stream "
          "socket)");
ABSL_FLAG(
    std::string, session, "",
    "the session id: the journal is ~/.garuda/sessions/<id>/budget.jsonl");
ABSL_FLAG(int64_t, limit, -1,
          "serve: the session's token limit (on a resume, what was spent "
          "before still counts)");
ABSL_FLAG(bool, json, false, "status: print one JSON object");
ABSL_FLAG(std::string, accept_weaker_lockdown, "",
          "serve: run even where the kernel lacks Landlock or seccomp; the "
          "reason given here is reported (without it such a kernel is a "
          "refusal to serve)");

namespace {

constexpr char kUsage[] =
    "one token budget for an agent and all its children.\n"
    "\n"
    "  garuda-budgeter serve --channel-fd=N --session=ID --limit=TOKENS\n"
    "                        [--accept-weaker-lockdown=WHY]\n"
    "      Serve the ledger on the agent's channel (and on every child\n"
    "      channel it opens), journaling to\n"
    "      ~/.garuda/sessions/ID/budget.jsonl. Resumes the session's\n"
    "      journal when there is one.\n"
    "  garuda-budgeter status --session=ID [--json]\n"
    "      Limit, spent, reserved, left, and the breakdown per agent, read\n"
    "      from the journal.";

void Say(const std::string& line) {
  std::fprintf(stderr, "garuda-budgeter: %s\n", line.c_str());
}

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "garuda-budgeter: %s\n",
               std::string(status.message()).c_str());
  return 1;
}

int Usage(const std::string& problem) {
  std::fprintf(stderr, "garuda-budgeter: %s\n\ngaruda-budgeter: %s\n",
               problem.c_str(), kUsage);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args = garuda::ParseProgramFlags(argc, argv, kUsage);
  if (args.size() != 2) return Usage("one subcommand: serve or status");
  const std::string command = args[1];
  const std::string session = absl::GetFlag(FLAGS_session);
  if (session.empty()) return Usage("--session is required");
  absl::StatusOr<std::string> home = garuda::HomeDirectory();
  if (!home.ok()) return Fail(home.status());

  if (command == "status") {
    absl::StatusOr<std::string> report =
        garuda::budget::StatusReport(*home, session, absl::GetFlag(FLAGS_json));
    if (!report.ok()) return Fail(report.status());
    std::fputs(report->c_str(), stdout);
    return 0;
  }
  if (command == "serve") {
    // 1. Flags -> options.
    garuda::budget::ServeOptions options;
    options.channel_fd = absl::GetFlag(FLAGS_channel_fd);
    options.home = *home;
    options.session = session;
    options.limit = absl::GetFlag(FLAGS_limit);
    if (options.channel_fd < 0) return Usage("serve needs --channel-fd");
    if (options.limit < 0) return Usage("serve needs --limit");
    options.log = Say;
    // 2. Open: the channel and the session's journal.
    absl::StatusOr<garuda::budget::OpenedLedger> opened =
        garuda::budget::OpenLedger(options);
    if (!opened.ok()) return Fail(opened.status());
    // 3. Lock down: writes only beneath the session folder, no network, no
    //    exec.
    garuda::RoleNeeds needs;
    needs.writable_paths = {opened->session_folder};
    absl::StatusOr<garuda::LockdownReport> locked =
        garuda::LockDownAs(garuda::Role::kBudgeter, needs,
                           {absl::GetFlag(FLAGS_accept_weaker_lockdown), Say});
    if (!locked.ok()) return Fail(locked.status());
    // 4. Serve.
    absl::Status served =
        garuda::budget::ServeLedger(*std::move(opened), options.log);
    if (!served.ok()) return Fail(served);
    return 0;
  }
  return Usage(absl::StrCat("unknown subcommand \"", command, "\""));
}
