// Keeping the copy backend's copy in step with the project without reading
// it: a snapshot of both sides' lstat results (mode, inode, size, mtime,
// ctime) for every file and link, taken when the two were known equal. A
// path whose two sides still match the snapshot is equal without a read;
// only the others are compared, copied or listed. Any write to a file, a
// chmod or a rename changes its ctime (or inode), and a process cannot set
// ctime, so a command cannot make a changed file look unchanged.
//
// Per command the copy backend walks each tree once: the project before the
// command (SyncCopy, with the copy's side taken from the snapshot) and the
// copy after it (ObserveCopy, whose unchanged folders the change list then
// skips).
//
// Racy entries, as git has them: a project file whose ctime is not older
// than the start of the walk that recorded it could change again within
// the same clock tick without its lstat result changing, so it is not
// recorded (it is compared next time). On the copy side the walk waits
// until the clock has passed the newest ctime it recorded, so that any
// later write there shows.
//
// The snapshot is copy_snapshot.h; the walk of the copy after a command is
// copy_observe.h.
#ifndef GARUDA_LIB_STAGING_COPY_SYNC_H_
#define GARUDA_LIB_STAGING_COPY_SYNC_H_

#include <time.h>

#include <cstdint>
#include <functional>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/changeset/rules.h"
#include "lib/staging/copy_snapshot.h"

namespace garuda {

struct SyncStats {
  uint64_t walked = 0;   // paths looked at
  uint64_t copied = 0;   // paths copied from the project (subtrees once)
  uint64_t removed = 0;  // paths removed from the copy
  uint64_t ignored = 0;  // ignored paths left as the copy has them
  // A partial sync (SyncCopyPaths) met a project file with more than one
  // hard link that SyncOptions::links did not hold: a write through its
  // other names raises no event where the watch looks, so walk.
  bool new_link = false;
};

struct SyncOptions {
  // Set after a fresh CopyTree: the time before it began. A pair of files
  // whose project side has not changed since then is recorded as equal
  // without being compared (the copy was made from it).
  bool fresh_copy = false;
  struct timespec copy_started = {0, 0};
  // `previous` holds the copy's state in full, as the walk after the last
  // command saw it, and nothing wrote the copy since (the copy backend's
  // marker file says so): the copy is not walked, only the project and the
  // paths that need copying or removing.
  bool copy_known = false;
  // When `rules` is null and this is set: the project whose ignore rules
  // are loaded at the first path that needs them (a refresh in which
  // nothing changed never opens the repository).
  std::string rules_project;
  // Called with each project folder (relative path, open descriptor) before
  // a walk reads its names: the watch is in place before the folder is read.
  std::function<void(const std::string&, int)> before_read;
  // The project's files with more than one hard link: rebuilt by a whole
  // walk, updated for the paths a partial one looks at.
  std::set<std::string>* links = nullptr;
  // The newest copy ctime recorded elsewhere since (ObserveCopyPaths): the
  // walk waits past it too, so that a later write there shows.
  int64_t newest_copy_ctime_ns = 0;
};

// Brings `copy` to the project's state where git does not ignore a path,
// and for everything in .git (git's own files follow the project); ignored
// paths keep what the copy has (build outputs stay for the next command).
// Only paths whose lstat results differ from `previous` are looked at
// further. Returns the snapshot of the result. `rules` may be null (every
// path counts).
absl::StatusOr<CopySnapshot> SyncCopy(const std::string& project,
                                      const std::string& copy,
                                      const CopySnapshot& previous,
                                      IgnoreRules* rules,
                                      const SyncOptions& options,
                                      SyncStats* stats);

// SyncCopy for the paths of `only` alone (and the folders above them),
// updating `snapshot` in place. `snapshot` must hold the copy's full state
// (as ObserveCopy or ObserveCopyPaths left it, nothing written since but by
// the stager): the copy side of the paths not looked at is taken from it.
// Serve mode, where watches say which project paths changed.
absl::Status SyncCopyPaths(const std::string& project, const std::string& copy,
                           const PathSet& only, CopySnapshot* snapshot,
                           const SyncOptions& options, SyncStats* stats);

}  // namespace garuda

#endif  // GARUDA_LIB_STAGING_COPY_SYNC_H_
