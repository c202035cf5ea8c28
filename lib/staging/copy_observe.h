// The walk of the copy backend's copy after a command (copy_sync.h says
// where it fits): what the command changed, and the copy's new snapshot.
#ifndef GARUDA_LIB_STAGING_COPY_OBSERVE_H_
#define GARUDA_LIB_STAGING_COPY_OBSERVE_H_

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <unordered_set>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/staging/copy_snapshot.h"

namespace garuda {

// After a command: walks `copy` once and returns its state, keeping the
// pairs of `before` (the snapshot the command started from) where the copy
// side did not change. `unchanged_folders` gets every folder (relative
// path; "" is the root) whose own lstat result and whole subtree are as in
// `before`: nothing in it was written, added, removed or renamed.
// `before_read` (may be empty) is called with each folder before it is
// read; `links` (may be null) gets the files with more than one link.
absl::StatusOr<CopySnapshot> ObserveCopy(
    const std::string& copy, const CopySnapshot& before,
    std::unordered_set<std::string>* unchanged_folders,
    const std::function<void(const std::string&, int)>& before_read = {},
    std::set<std::string>* links = nullptr);

struct ObservedPaths {
  // Written, created, removed or renamed by the command (every path an
  // event named that exists now or did before, and every path whose lstat
  // result changed); the change list looks only at these.
  std::set<std::string> changed;
  // The folders with a changed path in or beneath them, and changed
  // folders; "" is the root. The change list skips every other folder.
  std::set<std::string> touched;
  // A file with more than one hard link that `links` did not hold (the
  // command made a link): nothing was updated; walk the copy instead.
  bool new_link = false;
  int64_t newest_ctime_ns = 0;  // of what was recorded
};

// Serve mode, after a command: looks at the copy paths `named` (the
// command's events, and every file with more than one link) and the
// folders above them, walks `named.subtrees` whole, and updates `snapshot`
// (the copy as the command found it) in place to the copy's state.
absl::Status ObserveCopyPaths(const std::string& copy, const PathSet& named,
                              std::set<std::string>* links,
                              CopySnapshot* snapshot, ObservedPaths* observed);

}  // namespace garuda

#endif  // GARUDA_LIB_STAGING_COPY_OBSERVE_H_
