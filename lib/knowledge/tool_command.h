// `garuda-agent tool find_references|callers|impact`: one query, or a batch
// of JSON lines answered from one index.
#ifndef GARUDA_LIB_KNOWLEDGE_TOOL_COMMAND_H_
#define GARUDA_LIB_KNOWLEDGE_TOOL_COMMAND_H_

#include <iosfwd>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/knowledge/answerer.h"
#include "lib/policy/sources.h"

namespace garuda::knowledge {

struct ToolCommandOptions {
  std::string operation;  // find_references, callers, impact
  std::string project;    // the project root
  std::string path;       // relative to the project
  int line = 0;           // 1-based
  int column = 0;         // 1-based byte column
  std::string symbol;     // instead of path, line and column
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
  std::optional<LspConfig> lsp;
};

// The language servers this run may start: those of the settings, none
// with --nolsp or for callers and impact (they come from the index).
absl::StatusOr<LspConfig> ToolLspConfig(const ToolCommandOptions& options);

// Checks the options, builds the index and answers. Uses `options.lsp` when
// it is set (garuda-agent loads it before it locks down), else
// ToolLspConfig.
absl::Status RunToolCommand(const ToolCommandOptions& options, std::istream& in,
                            std::ostream& out);

// The usage text of garuda-agent.
extern const char kToolUsage[];

}  // namespace garuda::knowledge

#endif  // GARUDA_LIB_KNOWLEDGE_TOOL_COMMAND_H_
