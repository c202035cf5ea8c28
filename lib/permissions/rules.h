// Permission rules from settings: `bash`, `bash(git status*)`,
// `edit_file(src/**)`, `read_file(*)`.
#ifndef GARUDA_LIB_PERMISSIONS_RULES_H_
#define GARUDA_LIB_PERMISSIONS_RULES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace garuda {

// The tools a rule may name.
inline constexpr const char* kRuleTools[] = {"bash", "read_file", "list_files",
                                             "grep", "edit_file", "write_file"};

bool IsPathTool(absl::string_view tool);

struct PermissionRule {
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
