// Where the audit logs live:
//   ~/.garuda/audit/<project name>-<hash of project path>/<log>.jsonl
//   ~/.garuda/audit/<project name>-<hash of project
//   path>/checkpoints/<log>.json
#ifndef GARUDA_LIB_AUDIT_PATHS_H_
#define GARUDA_LIB_AUDIT_PATHS_H_

#include <sys/types.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace garuda {

inline constexpr absl::string_view kLogSuffix = ".jsonl";
inline constexpr absl::string_view kCheckpointSuffix = ".json";
inline constexpr absl::string_view kCheckpointFolder = "checkpoints";

// ~/.garuda/audit (from $HOME, or the password database).
absl::StatusOr<std::string> AuditRoot();

// The project's key (lib/base/home.h, ProjectKey of its RealProjectRoot):
// "<name>-<first 16 hex digits of SHA-256 of the real path>". `project`
// must exist.
absl::StatusOr<std::string> ProjectAuditFolderName(const std::string& project);

// A log name is 1 to 100 of [A-Za-z0-9._-], not starting with '.'.
absl::Status CheckLogName(absl::string_view name);

// "<UTC start time>-<pid>-<8 random hex digits>", e.g.
// "20261129T220300Z-4711-0a1b2c3d": unique per writing process.
std::string DefaultLogName(absl::Time start, pid_t pid);

// mkdir -p with 0700, then makes sure the folder itself is 0700 and ours: a
// folder someone else made, or one open to others, is refused or tightened.
absl::Status MakePrivateFolder(const std::string& path);

}  // namespace garuda

#endif  // GARUDA_LIB_AUDIT_PATHS_H_
