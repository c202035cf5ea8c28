// `garuda-agent tool find_references|callers|impact`: one query, or a batch
// of JSON lines answered from one index.
#ifndef GARUDA_LIB_KNOWLEDGE_TOOL_COMMAND_H_
#define GARUDA_LIB_KNOWLEDGE_TOOL_COMMAND_H_

#include <iosfwd>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/policy/sources.h"

namespace garuda::knowledge {

struct ToolCommandOptions {
  std::string operation;  // find_references, callers, impact
  std::string project;    // the project root
  std::string path;       // relative to the project
  int line = 0;           // 1-based
  int column = 0;         // 1-based byte column
  int depth = 2;          // impact
  bool json = false;
  bool batch = false;   // read JSON lines from `in`
  bool use_lsp = true;  // ask the configured language servers
  int max_results = 500;
  // "", "all", "unique" or "none" (see UnknownReceivers).
  std::string unknown_receivers;
  // Where settings come from; empty project means DefaultSettingsLocations.
  SettingsLocations settings;
  bool settings_given = false;
};

// Language -> server command and the timeout, from the settings. The
// project's own settings cannot name a program to run: a cloned
// repository would choose what runs on the user's machine. Only the
// managed policy, the user's policy and the user's settings can.
struct LspConfig {
  std::map<std::string, std::string> commands;
  int timeout_ms = 10000;
};
absl::StatusOr<LspConfig> LoadLspConfig(const SettingsLocations& locations);

absl::Status RunToolCommand(const ToolCommandOptions& options, std::istream& in,
                            std::ostream& out);

// The usage text of garuda-agent.
extern const char kToolUsage[];

}  // namespace garuda::knowledge

#endif  // GARUDA_LIB_KNOWLEDGE_TOOL_COMMAND_H_
