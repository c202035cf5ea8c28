// The copy backend's snapshot: per path, the lstat results (mode, inode,
// size, mtime, ctime) of the copy and, when the two sides were known equal,
// of the project (copy_sync.h says how the sync and the walk after a
// command use it). Stored in the staging folder between calls.
#ifndef GARUDA_LIB_STAGING_COPY_SNAPSHOT_H_
#define GARUDA_LIB_STAGING_COPY_SNAPSHOT_H_

#include <sys/stat.h>
#include <time.h>

#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

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

// Serve mode: the paths to look at instead of whole trees (from the
// watches, lib/staging/tree_watch.h): compare `paths`, and walk the folders
// `subtrees` whole (created or moved in).
struct PathSet {
  std::set<std::string> paths;
  std::set<std::string> subtrees;
};

// "a/b" + "c" -> "a/b/c"; "" (the root) + "c" -> "c".
std::string ChildPath(const std::string& parent, const std::string& name);
// "a/b/c" -> "a/b" with `name` "c"; "c" -> "" with `name` "c".
std::string ParentPath(const std::string& relative, std::string* name);

}  // namespace garuda

#endif  // GARUDA_LIB_STAGING_COPY_SNAPSHOT_H_
