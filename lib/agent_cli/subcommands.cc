#include "lib/agent_cli/subcommands.h"

#include <iostream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/agent/agent.h"
#include "lib/agent/agent_lockdown.h"
#include "lib/agent/helpers.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/ipc/helper_process.h"
#include "lib/jobs/jobs_command.h"
#include "lib/jobs/run.h"
#include "lib/knowledge/answer_proto.h"
#include "lib/knowledge/answerer.h"
#include "lib/knowledge/code_tools_server.h"
#include "lib/policy/sources.h"

namespace garuda {
namespace agent_cli {

const char kAgentUsageHeader[] =
    "the coding agent: a session with a model over the helper programs "
    "(garuda-auditor, garuda-budgeter, garuda-stager, garuda-applier).\n\n";
const char kSessionUsage[] = R"(  garuda-agent [--project DIR] [--resume ID] [--provider P] [--model M] [--base-url URL] [--plain]
      an interactive session (plain lines from standard input when it is not a terminal)
  garuda-agent -p PROMPT [--output-format text|json|stream-json] ...
      one-shot: answer PROMPT and exit; with no person to ask, every question is
      answered no unless an allow rule covers the call; a staged command's changes
      are kept in the session folder for `garuda-applier apply --ask`, or applied
      with --apply-staged
  garuda-agent --continue ...
      continue this project's last session
)";
const char kSessionsUsage[] = R"(  garuda-agent sessions [--project DIR]
      this project's sessions: id, start, turns, first prompt
)";
const char kAcpUsage[] = R"(  garuda-agent acp [--provider P] [--model M] [--base-url URL] [--helpers-dir DIR]
      serve an editor over the Agent Client Protocol (JSON-RPC on standard input and
      output): one session per session/new in its cwd (docs/acp.md)
)";
const char kAcpSessionUsage[] = R"(  garuda-agent acp-session --channel-fd=3 ...
      one editor session's worker; started by `garuda-agent acp`, not by hand
)";
const char kRunUsage[] = R"(  garuda-agent run JOB [--project CHECKOUT] [--json] [--provider P] [--model M] [--base-url URL]
      an unattended job (.garuda/jobs/JOB.json, or a path): one turn in a git
      worktree on a new branch garuda/JOB/TIME, commands writing only the job's
      writeScope; then the post-check, testCommand and the commit. Exit 0
      succeeded, 1 failed, 2 bad job file (docs/jobs.md)
)";
const char kJobsUsage[] = R"(  garuda-agent jobs [--project CHECKOUT]
      the checkout's jobs: name, write scope, last result
  garuda-agent jobs timer JOB --on-calendar SPEC [--print] [--project CHECKOUT]
      a systemd user service and timer that run the job (in ~/.config/systemd/user,
      or printed), and the crontab line for machines without systemd
)";
const char kToolLinesUsage[] = R"(  garuda-agent tool find_references|callers|impact --project ROOT --path REL
      --line L --column C [--depth N] [--json] [--nolsp] [--batch -]
      code questions about Java and Python sources, for scripts (`garuda-agent tool`
      alone prints its details)
)";

int Fail(const absl::Status& status) {
  Say(std::string(status.message()));
  return 1;
}

int FailUsage(const absl::Status& status) {
  Fail(status);
  return agent::kExitUsage;
}

void Say(const std::string& line) {
  std::cerr << "garuda-agent: " << line << "\n";
}

namespace {

int Usage(const std::string& problem) {
  std::cerr << "garuda-agent: " << problem << "; see --help\n";
  return agent::kExitUsage;
}

}  // namespace

int RunSubcommand(const std::vector<Subcommand>& table,
                  const CommandLine& line,
                  const std::vector<std::string>& args) {
  const Subcommand* session = nullptr;
  for (const Subcommand& row : table) {
    if (row.name[0] == '\0') {
      session = &row;
      continue;
    }
    if (args.size() < 2 || args[1] != row.name) continue;
    const int count = static_cast<int>(args.size());
    if (count < row.min_args || count > row.max_args) {
      return Usage(absl::StrCat("wrong number of arguments for ", row.name));
    }
    return row.run(line, args);
  }
  if (args.size() != 1 || session == nullptr) {
    return Usage(absl::StrCat("unexpected argument \"", args[1], "\""));
  }
  return session->run(line, args);
}

std::string UsageOf(const std::string& header,
                    const std::vector<Subcommand>& table) {
  std::string usage = header;
  for (const Subcommand& row : table) absl::StrAppend(&usage, row.usage);
  if (!usage.empty() && usage.back() == '\n') usage.pop_back();
  return usage;
}

absl::Status CheckSessionFlags(CommandLine* line) {
  agent::AgentOptions& options = line->session;
  options.one_shot = !options.prompt.empty();
  const std::string& given = line->output_format;
  const std::string format = given.empty() ? "text" : given;
  if (format != "text" && format != "json" && format != "stream-json") {
    return absl::InvalidArgumentError(absl::StrCat(
        "--output-format is text, json or stream-json, not \"", format, "\""));
  }
  // An interactive session has no output format; silently ignoring the
  // flag would leave a script parsing text it did not ask for.
  if (!options.one_shot && !given.empty()) {
    return absl::InvalidArgumentError(
        "--output-format needs -p PROMPT (a one-shot run); an interactive "
        "session prints text");
  }
  using Output = agent::AgentOptions::Output;
  options.output = format == "json"          ? Output::kJson
                   : format == "stream-json" ? Output::kStreamJson
                                             : Output::kText;
  if (options.apply_staged && !options.one_shot) {
    return absl::InvalidArgumentError(
        "--apply-staged needs -p PROMPT (a one-shot run); in a terminal "
        "session the person answers");
  }
  if (options.continue_last && !options.resume_id.empty()) {
    return absl::InvalidArgumentError("--continue or --resume ID, not both");
  }
  if (!options.audit_project.empty() && options.job_file.empty()) {
    return absl::InvalidArgumentError(
        "--audit-project is for a job's session (--job)");
  }
  if (!options.job_file.empty() && !options.one_shot) {
    return absl::InvalidArgumentError(
        "--job is a job's session, started by `garuda-agent run JOB` with "
        "-p; run the job with garuda-agent run");
  }
  return absl::OkStatus();
}

absl::StatusOr<OpenedCodeTools> OpenCodeTools(const CommandLine& line,
                                              const std::string& operation) {
  OpenedCodeTools opened;
  knowledge::ToolCommandOptions& options = opened.options;
  options = line.tool;
  options.operation = operation;
  const bool serve = operation == "serve";
  if (serve && options.project.empty()) options.project = ".";
  if (!line.batch.empty() && line.batch != "-") {
    return absl::InvalidArgumentError(
        "--batch takes only `-` (standard input)");
  }
  options.batch = line.batch == "-";
  if (!serve) RETURN_IF_ERROR(knowledge::ValidateOperation(operation));
  ASSIGN_OR_RETURN(
      knowledge::LspConfig lsp,
      serve ? knowledge::LoadLspConfig(DefaultSettingsLocations(options.project))
            : knowledge::ToolLspConfig(options));
  if (!options.use_lsp) lsp.commands.clear();
  options.lsp = lsp;
  opened.language_servers = !lsp.commands.empty();
  if (serve) {
    ipc::ChannelOptions channel_options;
    channel_options.peer_name = "garuda-agent";
    channel_options.max_frame_bytes = knowledge::kCodeToolsFrameBytes;
    ASSIGN_OR_RETURN(ipc::Channel channel,
                     ipc::ChannelFromFd(line.channel_fd, channel_options));
    opened.channel = std::make_unique<ipc::Channel>(std::move(channel));
  }
  return opened;
}

absl::Status ServeCodeTools(OpenedCodeTools& opened,
                            const std::string& lockdown) {
  if (opened.channel == nullptr) {
    return knowledge::RunToolCommand(opened.options, std::cin, std::cout);
  }
  knowledge::CodeToolsServerOptions server;
  server.project = opened.options.project;
  server.lsp = *opened.options.lsp;  // set by OpenCodeTools
  server.lockdown = lockdown;
  return knowledge::ServeCodeTools(*opened.channel, server);
}

int RunJob(const CommandLine& line, const std::vector<std::string>& args) {
  if (args.size() != 3) {
    std::cerr << "garuda-agent: run takes one job: garuda-agent run JOB "
                 "(a name in .garuda/jobs/ or a path); see --help\n";
    return agent::kExitUsage;
  }
  jobs::RunJobOptions options;
  options.checkout = line.session.project;
  options.job = args[2];
  options.json = line.json;
  options.overrides = line.session.overrides;
  options.accept_weaker_lockdown = line.session.accept_weaker_lockdown;
  absl::StatusOr<std::string> own = agent::OwnProgramFolder();
  if (!own.ok()) return Fail(own.status());
  options.helpers_dir = line.session.helpers_dir;
  if (options.helpers_dir.empty()) options.helpers_dir = *own;
  options.agent_program = JoinPath(*own, "garuda-agent");
  return jobs::RunJob(options);
}

int Jobs(const CommandLine& line, const std::vector<std::string>& args) {
  jobs::JobsCommandOptions options;
  options.checkout = line.session.project;
  if (args.size() == 2) return jobs::ListJobsCommand(options);
  if (args.size() != 4 || args[2] != "timer" || line.on_calendar.empty()) {
    std::cerr << "garuda-agent: jobs lists the jobs; jobs timer JOB "
                 "--on-calendar SPEC [--print] makes a timer; see --help\n";
    return agent::kExitUsage;
  }
  absl::StatusOr<std::string> own = agent::OwnProgramFolder();
  if (!own.ok()) return Fail(own.status());
  options.agent_program = JoinPath(*own, "garuda-agent");
  options.job = args[3];
  options.on_calendar = line.on_calendar;
  options.print = line.print;
  return jobs::JobTimerCommand(options);
}

int Sessions(const CommandLine& line, const std::vector<std::string>&) {
  agent::AgentOptions options;
  options.project = line.session.project;
  return agent::ListSessionsCommand(options);
}

}  // namespace agent_cli
}  // namespace garuda
