// The questions a helper would have asked on a terminal, as ACP's
// session/request_permission: a permission question (with the edit's diffs
// for edit_file and write_file) and the T5 question of a staged command's
// changes. The editor's answer is relayed by the agent (the helpers run
// with --consent=relayed; docs/acp.md).
#ifndef GARUDA_LIB_ACP_ACP_QUESTIONS_H_
#define GARUDA_LIB_ACP_ACP_QUESTIONS_H_

#include <map>
#include <optional>
#include <string>

#include "lib/acp/acp_updates.h"
#include "lib/acp/json_rpc.h"
#include "lib/changeset/changeset.h"
#include "lib/question/permission_question.h"
#include "lib/question/question.h"
#include "lib/tools/project.h"

namespace garuda {
namespace acp {

class PermissionQuestions {
 public:
  // `updates` and `project` (for the old contents of diffs) are not owned.
  PermissionQuestions(SessionUpdates* updates, const Project* project)
      : updates_(updates), project_(project) {}

  // Each asked about the tool call `call_id` ("" outside one). An answer
  // that lets an edit or a command's changes go ahead keeps their diffs
  // for the call's result (TakeDiffs).
  PermissionAnswer AskPermission(const std::string& call_id,
                                 const PermissionQuestion& question);
  PermissionAnswer AskEdit(const std::string& call_id,
                           const PermissionQuestion& question,
                           const ChangeSet& change_set);
  Answer AskChangeSet(const std::string& call_id, const ChangeSet& change_set,
                      const Rendered& rendered);

  // The diffs agreed to for `call_id` (an empty list when none), forgotten.
  Value TakeDiffs(const std::string& call_id);

 private:
  PermissionAnswer Ask(const std::string& call_id,
                       const PermissionQuestion& question, Value content);
  // The diff content blocks of a change list (files whose new content is
  // in memory; the rest are in the rendered text).
  Value Diffs(const ChangeSet& change_set);
  // The file's present content; "" when there is none; nullopt when it
  // cannot be shown.
  std::optional<std::string> OldText(const std::string& relative) const;

  SessionUpdates* updates_;
  const Project* project_;
  std::map<std::string, Value> diffs_;  // agreed to, per call
};

}  // namespace acp
}  // namespace garuda

#endif  // GARUDA_LIB_ACP_ACP_QUESTIONS_H_
