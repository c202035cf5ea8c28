// Spec T5 without a person (issue 18 point 2): a staged command's change
// list that nobody could answer in a one-shot session is kept as a file in
// the session folder, <home>/.garuda/sessions/<id>/staged/<n>.changeset,
// so that a person can review it later:
//
//   garuda-applier apply --ask --project ROOT < FILE
//
// Written by the agent, which may write only its session folder (its
// Landlock ruleset). The bytes are the stager's sealed memfd, copied
// unchanged: the file is a proposal like the memfd was, and the applier
// that reads it checks everything again (the list's form and hashes, the
// base fingerprints against the project as it is then, the refusals) and
// asks the person itself.
#ifndef GARUDA_LIB_AGENT_KEPT_CHANGES_H_
#define GARUDA_LIB_AGENT_KEPT_CHANGES_H_

#include <string>

#include "absl/status/statusor.h"

namespace garuda {
namespace agent {

// The folder of the kept lists in `session_dir`.
std::string KeptChangesFolder(const std::string& session_dir);

// Copies the whole of `sealed_fd` (read from offset 0) into a new file of
// KeptChangesFolder(session_dir), 0600, as one step: a temporary file,
// fsync, a rename to the first free "<n>.changeset", fsync of the folder.
// On any error (a full disk) nothing of it is left behind. The path.
absl::StatusOr<std::string> KeepChangeSet(const std::string& session_dir,
                                          int sealed_fd);

// What the model is told: nothing was applied, where the list is, and the
// command a person runs to review it.
std::string KeptLine(const std::string& path, const std::string& project);

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_KEPT_CHANGES_H_
