// Splitting a shell command into the simple commands a permission rule is
// matched against. Conservative: whatever the splitter cannot read with
// certainty makes the split incomplete, and an incomplete split never
// matches an allow rule (the call asks). Deny and ask rules are still
// matched against the parts found before the problem and the whole text.
#ifndef GARUDA_LIB_PERMISSIONS_SHELL_H_
#define GARUDA_LIB_PERMISSIONS_SHELL_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace garuda {

struct CommandSplit {
  // Each simple command, trimmed, as written (quotes kept). The text of a
  // command substitution stays in its outer part and its inner commands are
  // parts of their own.
  std::vector<std::string> parts;
  // False when something could not be split safely; `reason` says what
  // (for the question and the docs).
  bool complete = true;
  std::string reason;
};

// Separators: "&&", "||", ";", "|", "|&", "&", newline. Substitutions
// "$(...)" and backticks are read recursively. Incomplete: an unclosed quote
// or substitution, a subshell or group ("(", "{"), a redirection other than
// to /dev/null or between descriptors ("2>&1"), a here-document, process
// substitution, arithmetic "$((", and a comment ("#" starting a word).
CommandSplit SplitCommand(absl::string_view command);

}  // namespace garuda

#endif  // GARUDA_LIB_PERMISSIONS_SHELL_H_
