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
#ifndef GARUDA_LIB_STAGING_COPY_SYNC_H_
#define GARUDA_LIB_STAGING_COPY_SYNC_H_

#include <sys/stat.h>
#include <time.h>

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/changeset/rules.h"

namespace garuda {

// Nanoseconds since the epoch.
int64_t TimespecNanoseconds(const struct timespec& t);

// Returns once the coarse real-time clock has passed `newest_ctime_ns` (one
// clock tick at most), so that any later write to a path recorded with that
// ctime gives it a newer one.
void WaitForClockPast(int64_t newest_ctime_ns);

struct StatKey {
  uint32_t mode = 0;  // type and permission bits; 0: absent
  uint64_t inode = 0;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;

  static StatKey Of(const struct stat& st);
  bool operator==(const StatKey& other) const {
    return mode == other.mode && inode == other.inode && size == other.size &&
           mtime_ns == other.mtime_ns && ctime_ns == other.ctime_ns;
  }
};

// Per path: the copy's lstat result as last seen (files, links, folders),
// and, when the two sides were known equal, the project's lstat result of
// that time (a pair). After a command the copy backend walks the copy once
// and records its state in full; the next refresh takes the copy's side from
// it instead of walking the copy again (only the project is walked).
class CopySnapshot {
 public:
  struct Entry {
    StatKey copy;
    StatKey project;      // of the pair; mode 0: the project had none
    bool paired = false;  // the two sides were known equal
  };

  // A missing file is an empty snapshot (every path gets compared); a
  // damaged one is an error naming the file.
  static absl::StatusOr<CopySnapshot> Load(const std::string& file);
  // Written to a temporary file, renamed over `file` (not synced).
  absl::Status Save(const std::string& file) const;

  // Both sides are as they were when they were recorded equal (for an
  // ignored file, as the copy had it). `project` null: the project has none.
  bool KnownSame(const std::string& relative, const struct stat* project,
                 const struct stat& copy) const;
  // The copy side alone is as recorded: no command wrote the path since.
  bool CopyUnchanged(const std::string& relative,
                     const struct stat& copy) const;
  // A pair known equal (`project` with st_mode 0: the project has none).
  void Record(const std::string& relative, const struct stat& project,
              const struct stat& copy);
  // The copy's state only (a folder, a racy pair).
  void RecordCopy(const std::string& relative, const struct stat& copy);
  void RecordCopyKey(const std::string& relative, const Entry& entry) {
    entries_[relative] = entry;
  }
  // Forgets `relative` and, when it was a folder, every path beneath it.
  void Erase(const std::string& relative);
  const Entry* Find(const std::string& relative) const {
    auto it = entries_.find(relative);
    return it == entries_.end() ? nullptr : &it->second;
  }
  const std::unordered_map<std::string, Entry>& entries() const {
    return entries_;
  }
  size_t size() const { return entries_.size(); }
  void Reserve(size_t paths) { entries_.reserve(paths); }

 private:
  std::unordered_map<std::string, Entry> entries_;
};

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

// Serve mode: the paths to look at instead of whole trees (from the
// watches, lib/staging/tree_watch.h): compare `paths`, and walk the folders
// `subtrees` whole (created or moved in).
struct PathSet {
  std::set<std::string> paths;
  std::set<std::string> subtrees;
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

#endif  // GARUDA_LIB_STAGING_COPY_SYNC_H_
