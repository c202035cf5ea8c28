// The permission question: may this one call run? Asked by the agent for
// the calls it runs itself, by garuda-applier before an edit it writes and
// by garuda-stager before a command it runs on the host (lib/consent).
#ifndef GARUDA_LIB_QUESTION_PERMISSION_QUESTION_H_
#define GARUDA_LIB_QUESTION_PERMISSION_QUESTION_H_

#include <optional>
#include <string>

namespace garuda {

// A call that no rule allows, or one that asks.
struct PermissionQuestion {
  std::string tool;     // the tool's name (its row in the tool table)
  std::string summary;  // "Run on the host: rm -rf build", "Edit src/x.c"
  std::string detail;   // the diff of an edit, the reason it asks; may be ""
  // The rule "yes, and don't ask again this session" would add, when there
  // is one (Permissions::SessionRuleFor).
  std::optional<std::string> session_rule;
};

enum class PermissionAnswer { kYes, kYesForSession, kNo };

// Shows `question` on `out` (everything that came from the model or a
// file made visible, lib/base/visible.h; bold title with `color`) and
// reads the answer on `in` (one key press on a terminal; keys.h): y, s
// (only with a session rule) or n. End of
// input, an error or Ctrl-C (SIGINT while waiting) is no.
PermissionAnswer AskPermission(const PermissionQuestion& question, int in,
                               int out, bool color = false);

}  // namespace garuda

#endif  // GARUDA_LIB_QUESTION_PERMISSION_QUESTION_H_
