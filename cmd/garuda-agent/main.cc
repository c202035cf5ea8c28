// garuda-agent: flags -> options -> the subcommand's row. The session and
// `tool` open, lock down (LockDownAs) and serve here, `acp` and
// `acp-session` in acp.cc; the rest in lib/agent_cli/subcommands.h.
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "cmd/garuda-agent/acp.h"
#include "lib/agent/agent.h"
#include "lib/agent/agent_lockdown.h"
#include "lib/agent/session_setup.h"
#include "lib/agent_cli/mcp_command.h"
#include "lib/agent_cli/subcommands.h"
#include "lib/base/flags.h"
#include "lib/lockdown/roles.h"

ABSL_FLAG(std::string, project, "",
          "the project folder (default: the current folder)");
ABSL_FLAG(std::string, p, "",
          "one-shot: answer this prompt, print the answer and exit");
// No default value, so that giving it without -p can be told apart.
ABSL_FLAG(std::string, output_format, "",
          "one-shot: text (the answer; the default), json (answer, tool "
          "calls, outcomes, usage) or stream-json (JSON lines as the turn "
          "goes)");
ABSL_FLAG(bool, apply_staged, false,
          "-p: apply each staged command's changes without a question "
          "(garuda-applier decides by its own --apply-staged; conflict check "
          "and refusals as always; audited); without it they are kept in the "
          "session folder for `garuda-applier apply --ask`");
ABSL_FLAG(std::string, resume, "", "continue the session with this id");
ABSL_FLAG(bool, continue, false, "continue this project's last session");
ABSL_FLAG(bool, plain, false,
          "the terminal without colours, formatting or a live command line: "
          "the model's text as written");
ABSL_FLAG(std::string, provider, "",
          "openai or anthropic (overrides model.provider)");
ABSL_FLAG(std::string, model, "", "the model name (overrides model.name)");
ABSL_FLAG(std::string, base_url, "",
          "the provider's address (overrides model.baseUrl), e.g. "
          "http://127.0.0.1:8080/v1 for a local server");
ABSL_FLAG(std::string, helpers_dir, "",
          "the folder of garuda-auditor, garuda-budgeter, garuda-stager and "
          "garuda-applier (default: this program's folder)");
ABSL_FLAG(std::string, accept_weaker_lockdown, "",
          "let the helpers run where the kernel lacks Landlock or seccomp; "
          "the reason given here is reported");
// The `tool` subcommand's flags.
ABSL_FLAG(std::string, path, "", "tool: the file, relative to --project");
ABSL_FLAG(int, line, 0, "tool: 1-based line");
ABSL_FLAG(std::string, symbol, "",
          "tool: instead of --path/--line/--column, a declaration's name "
          "(Cart.add, shop.cart.Cart.add)");
ABSL_FLAG(int, column, 0, "tool: 1-based byte column");
ABSL_FLAG(int, depth, 2, "tool impact: how many levels of callers");
ABSL_FLAG(bool, json, false,
          "tool, run: print the result as JSON (run: one report object)");
ABSL_FLAG(std::string, on_calendar, "",
          "jobs timer: when the job runs, as systemd's OnCalendar= "
          "(daily, \"Mon..Fri 03:00\"; systemd.time(7))");
ABSL_FLAG(bool, print, false,
          "jobs timer: print the systemd units and the crontab line instead "
          "of writing ~/.config/systemd/user");
ABSL_FLAG(std::string, audit_project, "",
          "with --job: the job's checkout, whose audit log gets the "
          "session's decisions (default: --project's)");
ABSL_FLAG(std::string, job, "",
          "a job's session, as `garuda-agent run` starts it with -p: this "
          "job file's rules and write scope, read by the session and its "
          "helpers themselves");
ABSL_FLAG(std::string, batch, "",
          "tool: `-`: read JSON lines {id,path,line,column} from stdin");
ABSL_FLAG(bool, lsp, true,
          "tool: ask the language servers named in the settings");
ABSL_FLAG(int, max_results, 500,
          "tool: results kept per query (the flag `approximate` survives "
          "truncation)");
ABSL_FLAG(int, channel_fd, 3,
          "tool serve, acp-session: the channel to the session or the front (a "
          "Unix socket)");
ABSL_FLAG(std::string, unknown_receivers, "",
          "tool: name matches whose receiver type is unknown: all, unique or "
          "none (default: the language's measured choice)");

namespace {

namespace agent = garuda::agent;
namespace cli = garuda::agent_cli;

cli::CommandLine FromFlags() {
  cli::CommandLine line;
  agent::AgentOptions& session = line.session;
  session.project = absl::GetFlag(FLAGS_project);
  session.prompt = absl::GetFlag(FLAGS_p);
  line.output_format = absl::GetFlag(FLAGS_output_format);
  session.apply_staged = absl::GetFlag(FLAGS_apply_staged);
  session.resume_id = absl::GetFlag(FLAGS_resume);
  session.continue_last = absl::GetFlag(FLAGS_continue);
  session.plain = absl::GetFlag(FLAGS_plain);
  session.overrides.provider = absl::GetFlag(FLAGS_provider);
  session.overrides.model = absl::GetFlag(FLAGS_model);
  session.overrides.base_url = absl::GetFlag(FLAGS_base_url);
  session.helpers_dir = absl::GetFlag(FLAGS_helpers_dir);
  session.accept_weaker_lockdown = absl::GetFlag(FLAGS_accept_weaker_lockdown);
  session.job_file = absl::GetFlag(FLAGS_job);
  session.audit_project = absl::GetFlag(FLAGS_audit_project);
  garuda::knowledge::ToolCommandOptions& tool = line.tool;
  tool.project = session.project;
  tool.path = absl::GetFlag(FLAGS_path);
  tool.symbol = absl::GetFlag(FLAGS_symbol);
  tool.line = absl::GetFlag(FLAGS_line);
  tool.column = absl::GetFlag(FLAGS_column);
  tool.depth = absl::GetFlag(FLAGS_depth);
  tool.json = line.json = absl::GetFlag(FLAGS_json);
  tool.use_lsp = absl::GetFlag(FLAGS_lsp);
  tool.max_results = absl::GetFlag(FLAGS_max_results);
  tool.unknown_receivers = absl::GetFlag(FLAGS_unknown_receivers);
  line.batch = absl::GetFlag(FLAGS_batch);
  line.channel_fd = absl::GetFlag(FLAGS_channel_fd);
  line.on_calendar = absl::GetFlag(FLAGS_on_calendar);
  line.print = absl::GetFlag(FLAGS_print);
  return line;
}

// The terminal or one-shot session (lib/agent/agent.h), phase by phase.
int Session(const cli::CommandLine& given, const std::vector<std::string>&) {
  cli::CommandLine line = given;
  absl::Status checked = cli::CheckSessionFlags(&line);
  if (!checked.ok()) return cli::FailUsage(checked);
  const agent::AgentOptions& options = line.session;
  // Open: the project, the settings, the model client, the journal.
  absl::StatusOr<agent::OpenedSession> opened = agent::OpenSession(options);
  if (!opened.ok()) return cli::FailUsage(opened.status());
  // Start what a locked-down agent could not: the helpers (without the API
  // key), the code tools, libcurl.
  absl::StatusOr<std::unique_ptr<agent::StartedSession>> started =
      agent::StartSession(options, *opened);
  if (!started.ok()) return cli::Fail(started.status());
  // Lock down: from here the agent writes only its session folder, its
  // history and the terminal, starts no program, and connects only to the
  // model provider's port.
  absl::StatusOr<garuda::RoleNeeds> needs =
      agent::AgentNeeds(agent::SessionLockdown(options, *opened));
  absl::StatusOr<garuda::LockdownReport> locked =
      needs.ok() ? garuda::LockDownAs(garuda::Role::kAgent, *needs,
                                      {options.accept_weaker_lockdown, cli::Say})
                 : needs.status();
  if (!locked.ok()) {
    cli::Fail(absl::Status(locked.status().code(),
                           absl::StrCat("the session did not start: ",
                                        locked.status().message())));
    return agent::EndSession(options, **started, agent::kExitError);
  }
  // Serve the person, then stop the helpers in order.
  int code = agent::ServeSession(options, *opened, **started, locked->summary);
  return agent::EndSession(options, **started, code);
}

// `tool OPERATION` and `tool serve` (the model's code tools): it parses the
// project's sources, so it locks down before it reads the first one.
int Tool(const cli::CommandLine& line, const std::vector<std::string>& args) {
  if (args.size() != 3) {
    std::cerr << garuda::knowledge::kToolUsage;
    return agent::kExitUsage;
  }
  absl::StatusOr<cli::OpenedCodeTools> opened = cli::OpenCodeTools(line, args[2]);
  if (!opened.ok()) return cli::Fail(opened.status());
  absl::StatusOr<garuda::LockdownReport> locked = garuda::LockDownAs(
      opened->language_servers ? garuda::Role::kCodeToolsLsp
                               : garuda::Role::kCodeTools,
      {}, {line.session.accept_weaker_lockdown, cli::Say});
  if (!locked.ok()) return cli::Fail(locked.status());
  absl::Status served = cli::ServeCodeTools(*opened, locked->summary);
  return served.ok() ? 0 : cli::Fail(served);
}

// name, usage lines, function, and how many words (the program's included).
const std::vector<cli::Subcommand> kSubcommands = {
    {"", cli::kSessionUsage, Session, 1, 1},
    {"sessions", cli::kSessionsUsage, cli::Sessions, 2, 2},
    {"mcp", cli::kMcpUsage, cli::McpCommand, 3, 4},  // mcp_command.h
    {"acp", cli::kAcpUsage, cli::AcpFront, 2, 2},  // in acp.cc
    {"acp-session", cli::kAcpSessionUsage, cli::AcpSession, 2, 2},
    {"run", cli::kRunUsage, cli::RunJob, 2, 99},
    {"jobs", cli::kJobsUsage, cli::Jobs, 2, 99},
    {"tool", cli::kToolLinesUsage, Tool, 2, 99},
};

}  // namespace

int main(int argc, char** argv) {
  const std::string usage = cli::UsageOf(cli::kAgentUsageHeader, kSubcommands);
  std::vector<std::string> args = garuda::ParseProgramFlags(argc, argv, usage);
  garuda::RequireFolderFlag("garuda-agent", "project",
                            absl::GetFlag(FLAGS_project));
  garuda::RequireFolderFlag("garuda-agent", "audit_project",
                            absl::GetFlag(FLAGS_audit_project));
  return cli::RunSubcommand(kSubcommands, FromFlags(), args);
}
