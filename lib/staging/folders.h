// The folders of staging views: ~/.garuda/staging/<root hash>-<pid>-<random>/
// for one call, <root hash>-session-<NAME>/ for a named session that lives
// across calls. Only garuda-stager writes there.
//
// A folder is in use while a live process holds the lock on its "lock"
// file; a one-shot folder whose lock can be taken belongs to a process that
// ended, and is removed at the next start for the same project.
#ifndef GARUDA_LIB_STAGING_FOLDERS_H_
#define GARUDA_LIB_STAGING_FOLDERS_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/base/unique_fd.h"

namespace garuda {

// ~/.garuda/staging, created 0700 when missing.
absl::StatusOr<std::string> StagingRoot();

// --session NAME: lib/base's one rule for session names (CheckSessionId),
// the error naming the flag.
absl::Status CheckSessionName(const std::string& name);

struct StagingFolder {
  std::string path;    // the folder itself, 0700
  UniqueFd lock;       // held (flock LOCK_EX) while this process uses it
  bool named = false;  // a --session folder: kept at the end of the call
  bool fresh = true;   // made by this call (a named session can be reused)
};

// Makes (or, for a named session, reopens) the folder of this call and
// takes its lock. A named session used by another call at the same time
// waits for it (staged commands run one at a time).
absl::StatusOr<StagingFolder> OpenStagingFolder(const std::string& root,
                                                const std::string& project,
                                                const std::string& session);

// Removes the one-shot folders of `project` whose process has ended (their
// lock can be taken). Errors are returned; folders in use are left alone.
// A folder without its lock file is taken as one being made right now, and
// left alone for a minute, unless it was made by `ended_run`, a process the
// caller knows has ended (a guard that reaped its run: the run may have
// been killed half way through removing its own folder, lock file first).
absl::Status RemoveEndedFolders(const std::string& root,
                                const std::string& project,
                                pid_t ended_run = 0);

// The folder `name` (relative to the open folder `parent`), opened for
// reading; a link as its last component is refused (O_NOFOLLOW). Invalid on
// failure, with errno saying why.
UniqueFd OpenSubfolder(int parent, const std::string& name);

// The names in the open folder `fd`, without "." and ".."; `shown` names it
// in errors.
absl::StatusOr<std::vector<std::string>> FolderNames(int fd,
                                                     const std::string& shown);

// Removes a tree without following links, making folders writable where
// needed (overlay's work folder is mode 000).
absl::Status RemoveTree(const std::string& path);

}  // namespace garuda

#endif  // GARUDA_LIB_STAGING_FOLDERS_H_
