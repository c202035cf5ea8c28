// garuda-agent: the coding agent's session over the helper programs
// (lib/agent), and the `tool` subcommand (code questions for scripts and
// measurement).
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "lib/acp/front.h"
#include "lib/acp/session_worker.h"
#include "lib/agent/agent.h"
#include "lib/agent/agent_lockdown.h"
#include "lib/agent/helpers.h"
#include "lib/agent/session_setup.h"
#include "lib/base/files.h"
#include "lib/base/flags.h"
#include "lib/ipc/helper_process.h"
#include "lib/jobs/jobs_command.h"
#include "lib/jobs/run.h"
#include "lib/knowledge/answer_proto.h"
#include "lib/knowledge/code_tools_server.h"
#include "lib/knowledge/tool_command.h"
#include "lib/lockdown/lockdown.h"
#include "lib/lockdown/roles.h"
#include "lib/policy/sources.h"

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

constexpr char kUsage[] =
    "the coding agent: a session with a model over the helper programs "
    "(garuda-auditor, garuda-budgeter, garuda-stager, garuda-applier).\n\n"
    "  garuda-agent [--project DIR] [--resume ID] [--provider P] [--model M] "
    "[--base-url URL] [--plain]\n"
    "      an interactive session (plain lines from standard input when it is "
    "not a terminal)\n"
    "  garuda-agent -p PROMPT [--output-format text|json|stream-json] ...\n"
    "      one-shot: answer PROMPT and exit; with no person to ask, every "
    "question is\n"
    "      answered no unless an allow rule covers the call; a staged "
    "command's changes\n"
    "      are kept in the session folder for `garuda-applier apply --ask`, "
    "or applied\n"
    "      with --apply-staged\n"
    "  garuda-agent --continue ...\n"
    "      continue this project's last session\n"
    "  garuda-agent sessions [--project DIR]\n"
    "      this project's sessions: id, start, turns, first prompt\n"
    "  garuda-agent acp [--provider P] [--model M] [--base-url URL] "
    "[--helpers-dir DIR]\n"
    "      serve an editor over the Agent Client Protocol (JSON-RPC on "
    "standard input and\n"
    "      output): one session per session/new in its cwd (docs/acp.md)\n"
    "  garuda-agent acp-session --channel-fd=3 ...\n"
    "      one editor session's worker; started by `garuda-agent acp`, not "
    "by hand\n"
    "  garuda-agent run JOB [--project CHECKOUT] [--json] [--provider P] "
    "[--model M] [--base-url URL]\n"
    "      an unattended job (.garuda/jobs/JOB.json, or a path): one turn in "
    "a git\n"
    "      worktree on a new branch garuda/JOB/TIME, commands writing only "
    "the job's\n"
    "      writeScope; then the post-check, testCommand and the commit. Exit "
    "0\n"
    "      succeeded, 1 failed, 2 bad job file (docs/jobs.md)\n"
    "  garuda-agent jobs [--project CHECKOUT]\n"
    "      the checkout's jobs: name, write scope, last result\n"
    "  garuda-agent jobs timer JOB --on-calendar SPEC [--print] [--project "
    "CHECKOUT]\n"
    "      a systemd user service and timer that run the job (in "
    "~/.config/systemd/user,\n"
    "      or printed), and the crontab line for machines without systemd\n"
    "  garuda-agent tool find_references|callers|impact --project ROOT "
    "--path REL\n"
    "      --line L --column C [--depth N] [--json] [--nolsp] [--batch -]\n"
    "      code questions about Java and Python sources, for scripts "
    "(`garuda-agent tool`\n"
    "      alone prints its details)";

void Say(const std::string& line) {
  std::cerr << "garuda-agent: " << line << "\n";
}

int Fail(const absl::Status& status) {
  std::cerr << "garuda-agent: " << status.message() << "\n";
  return 1;
}

// `garuda-agent tool OPERATION`, and `tool serve` (the model's code tools,
// started by the session): it parses the project's sources, so it locks
// down before it reads the first one.
int RunTool(const std::string& operation) {
  namespace knowledge = garuda::knowledge;
  // 1. Flags -> options.
  const bool serve = operation == "serve";
  knowledge::ToolCommandOptions options;
  options.operation = operation;
  options.project = absl::GetFlag(FLAGS_project);
  if (serve && options.project.empty()) options.project = ".";
  options.path = absl::GetFlag(FLAGS_path);
  options.symbol = absl::GetFlag(FLAGS_symbol);
  options.line = absl::GetFlag(FLAGS_line);
  options.column = absl::GetFlag(FLAGS_column);
  options.depth = absl::GetFlag(FLAGS_depth);
  options.json = absl::GetFlag(FLAGS_json);
  options.use_lsp = absl::GetFlag(FLAGS_lsp);
  options.max_results = absl::GetFlag(FLAGS_max_results);
  options.unknown_receivers = absl::GetFlag(FLAGS_unknown_receivers);
  std::string batch = absl::GetFlag(FLAGS_batch);
  if (!batch.empty() && batch != "-") {
    std::cerr << "garuda-agent: --batch takes only `-` (standard input)\n";
    return 2;
  }
  options.batch = batch == "-";
  if (!serve) {
    if (absl::Status valid = knowledge::ValidateOperation(operation);
        !valid.ok()) {
      return Fail(valid);
    }
  }

  // 2. Open what the role needs: the settings' language servers, the channel.
  absl::StatusOr<knowledge::LspConfig> lsp =
      serve ? knowledge::LoadLspConfig(
                  garuda::DefaultSettingsLocations(options.project))
            : knowledge::ToolLspConfig(options);
  if (!lsp.ok()) return Fail(lsp.status());
  if (!options.use_lsp) lsp->commands.clear();
  options.lsp = *lsp;
  absl::StatusOr<garuda::ipc::Channel> channel =
      absl::FailedPreconditionError("no channel");
  if (serve) {
    garuda::ipc::ChannelOptions channel_options;
    channel_options.peer_name = "garuda-agent";
    channel_options.max_frame_bytes = knowledge::kCodeToolsFrameBytes;
    channel = garuda::ipc::ChannelFromFd(absl::GetFlag(FLAGS_channel_fd),
                                         channel_options);
    if (!channel.ok()) return Fail(channel.status());
  }

  // 3. Lock down, before the first source file is read.
  absl::StatusOr<garuda::LockdownReport> locked = garuda::LockDownAs(
      lsp->commands.empty() ? garuda::Role::kCodeTools
                            : garuda::Role::kCodeToolsLsp,
      {}, {absl::GetFlag(FLAGS_accept_weaker_lockdown), Say});
  if (!locked.ok()) return Fail(locked.status());

  // 4. Serve.
  absl::Status status;
  if (serve) {
    knowledge::CodeToolsServerOptions server;
    server.project = options.project;
    server.lsp = *lsp;
    server.lockdown = locked->summary;
    status = knowledge::ServeCodeTools(*channel, server);
  } else {
    status = knowledge::RunToolCommand(options, std::cin, std::cout);
  }
  return status.ok() ? 0 : Fail(status);
}

// `garuda-agent acp` (the editor's front) and `acp-session` (one session's
// worker, started by the front with the flags passed on).
int RunAcp(bool worker) {
  garuda::agent::AgentOptions agent;
  agent.overrides.provider = absl::GetFlag(FLAGS_provider);
  agent.overrides.model = absl::GetFlag(FLAGS_model);
  agent.overrides.base_url = absl::GetFlag(FLAGS_base_url);
  agent.helpers_dir = absl::GetFlag(FLAGS_helpers_dir);
  agent.accept_weaker_lockdown = absl::GetFlag(FLAGS_accept_weaker_lockdown);
  if (worker) {
    garuda::acp::WorkerOptions options;
    options.agent = agent;
    options.channel_fd = absl::GetFlag(FLAGS_channel_fd);
    options.lock_down = garuda::agent::LockDownAgent;
    return garuda::acp::RunSessionWorker(options);
  }
  absl::StatusOr<std::string> self = garuda::agent::OwnProgramFolder();
  if (!self.ok()) return Fail(self.status());
  garuda::acp::FrontOptions options;
  options.worker_argv = {*self + "/garuda-agent", "acp-session",
                         "--channel_fd=3"};
  for (const auto& [flag, value] :
       {std::pair{"provider", agent.overrides.provider},
        {"model", agent.overrides.model},
        {"base_url", agent.overrides.base_url},
        {"helpers_dir", agent.helpers_dir},
        {"accept_weaker_lockdown", agent.accept_weaker_lockdown}}) {
    if (!value.empty()) {
      options.worker_argv.push_back(absl::StrCat("--", flag, "=", value));
    }
  }
  options.accept_weaker_lockdown = agent.accept_weaker_lockdown;
  options.lock_down = garuda::acp::LockDownAcpFront;
  return garuda::acp::RunFront(options);
}

// The terminal or one-shot session (lib/agent/agent.h), phase by phase.
int RunSession(const garuda::agent::AgentOptions& options) {
  namespace agent = garuda::agent;
  // 2. Open what the session needs: the project, the settings, the model
  //    client, the journal.
  absl::StatusOr<agent::OpenedSession> opened = agent::OpenSession(options);
  if (!opened.ok()) {
    Fail(opened.status());
    return agent::kExitUsage;
  }
  // 3. Start what a locked-down agent could not: the helpers (without the
  //    API key), the code tools, libcurl.
  absl::StatusOr<std::unique_ptr<agent::StartedSession>> started =
      agent::StartSession(options, *opened);
  if (!started.ok()) return Fail(started.status());
  // 4. Lock down: from here the agent writes only its session folder, its
  //    history and the terminal, starts no program, and connects only to
  //    the model provider's port.
  absl::StatusOr<garuda::RoleNeeds> needs =
      agent::AgentNeeds(agent::SessionLockdown(options, *opened));
  absl::StatusOr<garuda::LockdownReport> lockdown =
      needs.ok() ? garuda::LockDownAs(garuda::Role::kAgent, *needs,
                                      {options.accept_weaker_lockdown, Say})
                 : needs.status();
  if (!lockdown.ok()) {
    Fail(absl::Status(lockdown.status().code(),
                      absl::StrCat("the session did not start: ",
                                   lockdown.status().message())));
    return agent::EndSession(options, **started, agent::kExitError);
  }
  // 5. Serve the person, then stop the helpers in order.
  int code =
      agent::ServeSession(options, *opened, **started, lockdown->summary);
  return agent::EndSession(options, **started, code);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args = garuda::ParseProgramFlags(argc, argv, kUsage);
  garuda::RequireFolderFlag("garuda-agent", "project",
                            absl::GetFlag(FLAGS_project));
  garuda::RequireFolderFlag("garuda-agent", "audit_project",
                            absl::GetFlag(FLAGS_audit_project));
  if (args.size() >= 2 && args[1] == "tool") {
    if (args.size() != 3) {
      std::cerr << garuda::knowledge::kToolUsage;
      return 2;
    }
    return RunTool(args[2]);
  }
  if (args.size() == 2 && (args[1] == "acp" || args[1] == "acp-session")) {
    return RunAcp(args[1] == "acp-session");
  }
  if (args.size() >= 2 && args[1] == "run") {
    if (args.size() != 3) {
      std::cerr << "garuda-agent: run takes one job: garuda-agent run JOB "
                   "(a name in .garuda/jobs/ or a path); see --help\n";
      return garuda::agent::kExitUsage;
    }
    garuda::jobs::RunJobOptions options;
    options.checkout = absl::GetFlag(FLAGS_project);
    options.job = args[2];
    options.json = absl::GetFlag(FLAGS_json);
    options.overrides.provider = absl::GetFlag(FLAGS_provider);
    options.overrides.model = absl::GetFlag(FLAGS_model);
    options.overrides.base_url = absl::GetFlag(FLAGS_base_url);
    options.accept_weaker_lockdown =
        absl::GetFlag(FLAGS_accept_weaker_lockdown);
    absl::StatusOr<std::string> own = garuda::agent::OwnProgramFolder();
    if (!own.ok()) return Fail(own.status());
    options.helpers_dir = absl::GetFlag(FLAGS_helpers_dir);
    if (options.helpers_dir.empty()) options.helpers_dir = *own;
    options.agent_program = garuda::JoinPath(*own, "garuda-agent");
    return garuda::jobs::RunJob(options);
  }
  if (args.size() >= 2 && args[1] == "jobs") {
    garuda::jobs::JobsCommandOptions options;
    options.checkout = absl::GetFlag(FLAGS_project);
    if (args.size() == 2) return garuda::jobs::ListJobsCommand(options);
    if (args.size() != 4 || args[2] != "timer" ||
        absl::GetFlag(FLAGS_on_calendar).empty()) {
      std::cerr << "garuda-agent: jobs lists the jobs; jobs timer JOB "
                   "--on-calendar SPEC [--print] makes a timer; see --help\n";
      return garuda::agent::kExitUsage;
    }
    absl::StatusOr<std::string> own = garuda::agent::OwnProgramFolder();
    if (!own.ok()) return Fail(own.status());
    options.agent_program = garuda::JoinPath(*own, "garuda-agent");
    options.job = args[3];
    options.on_calendar = absl::GetFlag(FLAGS_on_calendar);
    options.print = absl::GetFlag(FLAGS_print);
    return garuda::jobs::JobTimerCommand(options);
  }
  if (args.size() == 2 && args[1] == "sessions") {
    garuda::agent::AgentOptions options;
    options.project = absl::GetFlag(FLAGS_project);
    return garuda::agent::ListSessionsCommand(options);
  }
  if (args.size() != 1) {
    std::cerr << "garuda-agent: unexpected argument \"" << args[1]
              << "\"; see --help\n";
    return 2;
  }
  garuda::agent::AgentOptions options;
  options.project = absl::GetFlag(FLAGS_project);
  options.prompt = absl::GetFlag(FLAGS_p);
  options.one_shot = !options.prompt.empty();
  const std::string given_format = absl::GetFlag(FLAGS_output_format);
  const std::string format = given_format.empty() ? "text" : given_format;
  if (format != "text" && format != "json" && format != "stream-json") {
    std::cerr << "garuda-agent: --output-format is text, json or "
                 "stream-json, not \""
              << format << "\"\n";
    return garuda::agent::kExitUsage;
  }
  // An interactive session has no output format; silently ignoring the
  // flag would leave a script parsing text it did not ask for.
  if (!options.one_shot && !given_format.empty()) {
    std::cerr << "garuda-agent: --output-format needs -p PROMPT (a one-shot "
                 "run); an interactive session prints text\n";
    return garuda::agent::kExitUsage;
  }
  using Output = garuda::agent::AgentOptions::Output;
  options.output = format == "json"          ? Output::kJson
                   : format == "stream-json" ? Output::kStreamJson
                                             : Output::kText;
  options.apply_staged = absl::GetFlag(FLAGS_apply_staged);
  if (options.apply_staged && !options.one_shot) {
    std::cerr << "garuda-agent: --apply-staged needs -p PROMPT (a one-shot "
                 "run); in a terminal session the person answers\n";
    return garuda::agent::kExitUsage;
  }
  options.resume_id = absl::GetFlag(FLAGS_resume);
  options.continue_last = absl::GetFlag(FLAGS_continue);
  options.plain = absl::GetFlag(FLAGS_plain);
  if (options.continue_last && !options.resume_id.empty()) {
    std::cerr << "garuda-agent: --continue or --resume ID, not both\n";
    return garuda::agent::kExitUsage;
  }
  options.overrides.provider = absl::GetFlag(FLAGS_provider);
  options.overrides.model = absl::GetFlag(FLAGS_model);
  options.overrides.base_url = absl::GetFlag(FLAGS_base_url);
  options.helpers_dir = absl::GetFlag(FLAGS_helpers_dir);
  options.accept_weaker_lockdown = absl::GetFlag(FLAGS_accept_weaker_lockdown);
  options.job_file = absl::GetFlag(FLAGS_job);
  options.audit_project = absl::GetFlag(FLAGS_audit_project);
  if (!options.audit_project.empty() && options.job_file.empty()) {
    std::cerr << "garuda-agent: --audit-project is for a job's session "
                 "(--job)\n";
    return garuda::agent::kExitUsage;
  }
  if (!options.job_file.empty() && !options.one_shot) {
    std::cerr << "garuda-agent: --job is a job's session, started by "
                 "`garuda-agent run JOB` with -p; run the job with "
                 "garuda-agent run\n";
    return garuda::agent::kExitUsage;
  }
  return RunSession(options);
}
