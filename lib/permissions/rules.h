// Permission rules from settings: `bash`, `bash(git status*)`,
// `edit_file(src/**)`, `read_file(*)`.
#ifndef GARUDA_LIB_PERMISSIONS_RULES_H_
#define GARUDA_LIB_PERMISSIONS_RULES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace garuda {

// The names a rule may use, and what each name's pattern is matched on.
// These are the built-in tools' names: a rule names the tool whose calls it
// decides (lib/tools/definitions.cc gives each tool its rule). The helpers
// (garuda-applier, garuda-stager) check rules without linking the agent's
// tool table, so the list lives here, beside the parser.
enum class RuleTarget {
  kCommand,    // a command line, split into its simple commands
  kReadPath,   // a path where the kernel arrives when it reads
  kWritePath,  // a normalized path that may not exist yet; sensitive
               // names always ask
};

inline constexpr char kCommandRule[] = "bash";
inline constexpr char kReadFileRule[] = "read_file";
inline constexpr char kListFilesRule[] = "list_files";
inline constexpr char kGrepRule[] = "grep";
inline constexpr char kEditFileRule[] = "edit_file";
inline constexpr char kWriteFileRule[] = "write_file";

struct RuleName {
  const char* name;
  RuleTarget target;
  // How a question about one call starts ("Edit src/a.c").
  const char* verb;
};
inline constexpr RuleName kRuleNames[] = {
    {kCommandRule, RuleTarget::kCommand, "Run"},
    {kReadFileRule, RuleTarget::kReadPath, "Read"},
    {kListFilesRule, RuleTarget::kReadPath, "List"},
    {kGrepRule, RuleTarget::kReadPath, "Search"},
    {kEditFileRule, RuleTarget::kWritePath, "Edit"},
    {kWriteFileRule, RuleTarget::kWritePath, "Write"},
};

// The row of `name`, or null when no rule may name it.
const RuleName* FindRuleName(absl::string_view name);

// MCP tools (docs/mcp.md) are named by their server at run time, so their
// rules are not rows of kRuleNames: `mcp__<server>__<tool>` decides one
// tool, `mcp__<server>` every tool of that server. They take no pattern
// (a server's arguments have no shape a person could write one for).
inline constexpr char kMcpRulePrefix[] = "mcp__";
// `name` starts with "mcp__" and has only [A-Za-z0-9_-] after it.
bool IsMcpRuleName(absl::string_view name);

// "bash, read_file, ...": for messages.
std::string RuleNameList();

// A rule name whose pattern is a path glob.
bool IsPathTool(absl::string_view tool);

struct PermissionRule {
  // A name of kRuleNames, or an MCP rule's (IsMcpRuleName).
  std::string tool;
  // Without parentheses the rule covers every call of the tool.
  bool any = true;
  // bash: a command pattern, '*' matching any text (spaces and '/' too).
  // The other tools: a path glob relative to the project root: '*' and '?'
  // within one component, "**" any number of components; "*" or "**" alone
  // is every path.
  std::string pattern;
  std::string text;    // as written, for messages and the docs
  std::string source;  // the settings file, or "this session"
};

// `source` names the file in errors: "~/.garuda/settings.json: permissions
// rule "bash(git status": no closing parenthesis".
absl::StatusOr<PermissionRule> ParsePermissionRule(absl::string_view text,
                                                   absl::string_view source);

// '*' matches any run of characters, everything else itself.
bool MatchCommandPattern(absl::string_view pattern, absl::string_view command);

// A path glob against a normalized relative path ("" is the project root).
bool MatchPathGlob(absl::string_view glob, absl::string_view path);

// "a/./b/../c" -> "a/c"; "" for the root; an error for a path that leaves
// the root ("../x") or is absolute.
absl::StatusOr<std::string> NormalizeRelativePath(absl::string_view path);

}  // namespace garuda

#endif  // GARUDA_LIB_PERMISSIONS_RULES_H_
