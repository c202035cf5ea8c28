// Where Garuda's files live (ARCHITECTURE.md, "Files on disk"), written
// once for every program:
//
//   /etc/garuda/policy.json                      managed policy
//   ~/.garuda/policy.json, ~/.garuda/settings.json
//   ~/.garuda/audit/<project key>/...            garuda-auditor
//   ~/.garuda/staging/<project hash>-...         garuda-stager
//   ~/.garuda/undo/<project key>/...             garuda-applier
//   ~/.garuda/sessions/<session id>/journal.jsonl, budget.jsonl
//   ~/.garuda/AGENTS.md                          the person's instructions
//   <project>/.garuda/settings.json
//   <project>/.garuda/jobs/<name>.json
//
// A project is named by one key everywhere: its real path (RealProjectRoot)
// hashed, with its folder name in front for a person.
#ifndef GARUDA_LIB_BASE_HOME_H_
#define GARUDA_LIB_BASE_HOME_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace garuda {

inline constexpr char kManagedPolicyFolder[] = "/etc/garuda";

// The project's real path: `project` (empty: the current folder) made
// absolute with every link resolved (lib/base/files.h's RealPath); it must
// exist. The error names it ("project folder ...").
absl::StatusOr<std::string> RealProjectRoot(const std::string& project);

// The first 16 hex digits of SHA-256 of `real_project` (a RealProjectRoot).
std::string ProjectHash(absl::string_view real_project);

// "<name>-<ProjectHash>": the folder name with anything but [A-Za-z0-9._-]
// replaced by '_', a leading '.' too, cut at 64 characters ("root" for /).
std::string ProjectKey(absl::string_view real_project);

// A session id goes into paths and records: 1 to 128 of [A-Za-z0-9._-],
// not starting with '.' (so never "." nor "..", nor a hidden folder). The
// one rule for every session name: the agent's session ids, the budgeter's
// --session, the stager's --session NAME. The error names it.
absl::Status CheckSessionId(absl::string_view session_id);

// <home>/.garuda and the folders in it.
std::string GarudaFolder(absl::string_view home);
std::string GarudaAuditRoot(absl::string_view home);
std::string GarudaStagingRoot(absl::string_view home);
std::string GarudaUndoRoot(absl::string_view home);
// <home>/.garuda/sessions/<session_id>, the id checked.
absl::StatusOr<std::string> GarudaSessionFolder(absl::string_view home,
                                                absl::string_view session_id);

// The files of a session folder.
std::string SessionJournalFile(absl::string_view session_folder);
std::string BudgetJournalFile(absl::string_view session_folder);

// The settings and policy files.
std::string ManagedPolicyFile(absl::string_view managed_folder);
std::string UserPolicyFile(absl::string_view home);
std::string UserSettingsFile(absl::string_view home);
std::string ProjectSettingsFile(absl::string_view project);

// ~/.garuda/AGENTS.md: the person's own instructions for every project.
std::string UserInstructionsFile(absl::string_view home);

// <checkout>/.garuda/jobs/<job>.json (the name unchecked: the caller's).
std::string ProjectJobFile(absl::string_view checkout, absl::string_view job);

}  // namespace garuda

#endif  // GARUDA_LIB_BASE_HOME_H_
