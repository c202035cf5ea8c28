// garuda-agent's subcommands behind its main.cc: the command line as one
// struct (main.cc fills it from its flags), the table row of a subcommand
// (name, usage line, function), the lookup, and the subcommands that hand
// their whole run to a library (run, jobs, sessions). Those that lock down
// in cmd/garuda-agent (the session, `tool`; `acp` and `acp-session` in its
// acp.cc) open and serve through OpenCodeTools/ServeCodeTools here,
// lib/agent's phases and lib/acp. Above lib/agent, lib/jobs and
// lib/knowledge, so that none of them depends on another through it.
#ifndef GARUDA_LIB_AGENT_CLI_SUBCOMMANDS_H_
#define GARUDA_LIB_AGENT_CLI_SUBCOMMANDS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/agent/agent_options.h"
#include "lib/ipc/channel.h"
#include "lib/knowledge/tool_command.h"

namespace garuda {
namespace agent_cli {

// Every flag of garuda-agent, as main.cc read it.
struct CommandLine {
  agent::AgentOptions session;  // the session's own flags
  std::string output_format;    // as given ("" when not)
  // tool
  knowledge::ToolCommandOptions tool;
  std::string batch;
  int channel_fd = 3;
  // run, jobs
  bool json = false;
  std::string on_calendar;
  bool print = false;
};

// One row of main.cc's table. `name` "" is the session itself (no
// subcommand); `min_args`/`max_args` count the words after the program.
struct Subcommand {
  const char* name;
  const char* usage;
  int (*run)(const CommandLine& line, const std::vector<std::string>& args);
  int min_args;
  int max_args;
};

// The row for args[1] (or the session's), arity checked, run; a word that
// is no subcommand, or a wrong count, is a usage error (exit 2) naming it.
int RunSubcommand(const std::vector<Subcommand>& table,
                  const CommandLine& line,
                  const std::vector<std::string>& args);
// The usage text: `header`, then each row's usage line.
std::string UsageOf(const std::string& header,
                    const std::vector<Subcommand>& table);

// Checks the session's flags that only some kinds of session take
// (--output-format and --apply-staged need -p, --job needs -p, ...) and
// fills what they imply; the error is the line for a person.
absl::Status CheckSessionFlags(CommandLine* line);

// `tool OPERATION` and `tool serve`, before the lockdown: the operation
// checked, the language servers from the settings, the channel (serve).
struct OpenedCodeTools {
  knowledge::ToolCommandOptions options;
  std::unique_ptr<ipc::Channel> channel;  // serve only
  bool language_servers = false;
};
absl::StatusOr<OpenedCodeTools> OpenCodeTools(const CommandLine& line,
                                              const std::string& operation);
// After it: answers the channel or the one question. `lockdown` is the
// summary the session shows.
absl::Status ServeCodeTools(OpenedCodeTools& opened,
                            const std::string& lockdown);

// The subcommands that run as a whole in a library.
int RunJob(const CommandLine& line, const std::vector<std::string>& args);
int Jobs(const CommandLine& line, const std::vector<std::string>& args);
int Sessions(const CommandLine& line, const std::vector<std::string>& args);

// The usage lines of main.cc's rows, and the text above them.
extern const char kAgentUsageHeader[];
extern const char kSessionUsage[];
extern const char kSessionsUsage[];
extern const char kAcpUsage[];
extern const char kAcpSessionUsage[];
extern const char kRunUsage[];
extern const char kJobsUsage[];
extern const char kToolLinesUsage[];

// "garuda-agent: <message>" on stderr; returns 1 (FailUsage: 2).
int Fail(const absl::Status& status);
int FailUsage(const absl::Status& status);
// "garuda-agent: <line>" on stderr.
void Say(const std::string& line);

}  // namespace agent_cli
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_CLI_SUBCOMMANDS_H_
