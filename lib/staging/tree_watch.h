// Knowing which paths of a folder tree changed between two moments without
// walking it: inotify on every folder of the tree. Used by the copy backend
// in `garuda-stager serve` (one process for a session's commands), for the
// project (the person's edits between commands) and for the copy (what a
// command wrote).
//
// The watch vouches for the tree only when it is trusted: a walk of the
// whole tree (which calls Watch() on each folder before reading it) began
// after BeginWalk(), and since then no event was lost (IN_Q_OVERFLOW), no
// watch failed (ENOSPC: fs.inotify.max_user_watches) and every folder is on
// a file system where inotify sees every write (a local one; not NFS,
// CIFS/SMB, FUSE, 9p, ...). Otherwise the caller walks, as without a watch.
//
// Limits the caller handles: a write through another hard link of a file
// raises no event in this folder (lstat files with more than one link every
// time); a folder created or moved in is reported in `folders` (already
// watched, with its subtree): walk it, since what was written in it before
// its watch was added raised no event.
#ifndef GARUDA_LIB_STAGING_TREE_WATCH_H_
#define GARUDA_LIB_STAGING_TREE_WATCH_H_

#include <memory>
#include <set>
#include <string>
#include <unordered_map>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/base/unique_fd.h"

namespace garuda {

class TreeWatch {
 public:
  // What happened since the last Drain().
  struct Changes {
    // Relative paths events named: a name created, written, closed after a
    // write, changed in its attributes, deleted or moved (both names); a
    // folder itself for its own attribute changes.
    std::set<std::string> paths;
    // Folders created or moved in: walk their subtrees.
    std::set<std::string> folders;
    // Events were lost (or the watch is not trusted): walk the whole tree.
    bool lost = false;
  };

  // `root` must be a folder; `label` names the tree in messages ("the
  // project", "the copy").
  static absl::StatusOr<std::unique_ptr<TreeWatch>> Create(
      const std::string& root, const std::string& label);

  // Before a walk of the whole tree: the events pending are dropped (the
  // walk sees their changes), and the watch is trusted from here on unless
  // something below takes that back.
  void BeginWalk();
  // During that walk: watches the folder `relative`, open as `fd`, before
  // the walk reads its names.
  void Watch(const std::string& relative, int fd);
  // Reads the pending events. A folder created or moved in is watched here
  // with its subtree.
  Changes Drain();

  // The watch can vouch for the tree (see above).
  bool trusted() const { return walked_ && !lost_ && broken_.empty(); }
  // Why the watch can never vouch for the tree (empty: it can): a file
  // system type, a failed watch. Said once by the caller.
  const std::string& broken() const { return broken_; }
  size_t watches() const { return paths_.size(); }

 private:
  TreeWatch(std::string root, std::string label, UniqueFd fd)
      : root_(std::move(root)), label_(std::move(label)), fd_(std::move(fd)) {}
  // Watches `relative` (open as `fd`) and every folder beneath it.
  void WatchSubtree(const std::string& relative, int fd);
  void Broken(const std::string& reason);
  std::string JoinPathForMessage(const std::string& relative) const;

  std::string root_, label_;
  UniqueFd fd_;
  std::unordered_map<int, std::string> paths_;  // watch descriptor -> folder
  bool walked_ = false;
  bool lost_ = false;
  std::string broken_;
};

// Test seams (lib/staging tests only; the programs never call them): drop
// every event instead of reporting it (the negative control of the tests
// that a watched change is seen), and report the next Drain() (of any
// watch) as an overflow (IN_Q_OVERFLOW).
namespace tree_watch_testing {
void DropEvents(bool drop);
void InjectOverflow();
}  // namespace tree_watch_testing

}  // namespace garuda

#endif  // GARUDA_LIB_STAGING_TREE_WATCH_H_
