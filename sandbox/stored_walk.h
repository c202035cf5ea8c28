// The walk of a denyPrivateUnder folder (/etc by default) kept on disk
// between processes, for what starts one sandbox per process:
// `garuda-stager run` and a library call without a PrivateWalk.
// garuda-stager serve keeps its walk in memory instead
// (sandbox/private_walk.h).
//
// A stored answer is used only when two checks pass:
// - Who wrote it. The file's SHA-256 is in a trusted.* extended attribute,
//   which only a process with CAP_SYS_ADMIN in the host's user namespace
//   can set or read (a stager run by root). Every command runs in a user
//   namespace of its own, so whatever folders it may write, it cannot make
//   a file that passes; a changed byte fails the digest. A stager without
//   that capability keeps nothing and walks at each run, as before.
// - That it is still true. The folder and every entry that is not a link
//   are looked at again (lstat) and must show the same device, inode, mode
//   and change time as the walk saw. An entry created, removed or renamed
//   changes its folder's change time; chmod, chown or a new hard link
//   changes the entry's, by whichever name; a mount over any of them
//   changes the device and inode seen. So an older stored answer put back
//   in place fails as soon as anything it describes has changed. (A clock
//   set back to the very nanosecond, or on a whole-second file system the
//   very second, an entry last changed could hide one change.)
//   A walk during which anything it looked at had changed less than
//   kStoredWalkSettleNs before the walk began is not stored: a change in
//   the same clock tick (or second, on a coarse file system) can leave the
//   change time as it was. Nor is one that crossed a mount (all it looked
//   at must be on the folder's device), or of a folder on a file system
//   whose change times another machine or a daemon may move unseen (only
//   ext2/3/4, XFS, Btrfs, tmpfs, overlayfs and ZFS are trusted).
// The check is one lstat per entry that is not a link, and reads no
// folder: on a Debian /etc, 475 lstats where the walk reads 142 folders
// and looks at 1 333 entries.
#ifndef GARUDA_SANDBOX_STORED_WALK_H_
#define GARUDA_SANDBOX_STORED_WALK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lib/base/unique_fd.h"

namespace garuda {

// The extended attribute holding the stored file's SHA-256 (32 bytes).
inline constexpr char kStoredWalkDigestAttribute[] = "trusted.garuda.sha256";
// See above: how long before a walk what it looks at must have been still.
inline constexpr int64_t kStoredWalkSettleNs = 2'000'000'000;
// Answers kept at most; the oldest goes when one more is stored.
inline constexpr int kStoredWalksKept = 16;

class StoredWalk {
 public:
  // Answers are kept in `base`/`relative`: `base` must exist; the folders
  // of `relative` are made (0700) when missing and opened without
  // following a link. An empty `base`: nothing kept, every Find walks.
  StoredWalk(std::string base, std::string relative);
  StoredWalk(const StoredWalk&) = delete;
  StoredWalk& operator=(const StoredWalk&) = delete;

  // For runs that name none: /run/garuda/private-walk for a process whose
  // effective uid is 0, nothing kept for any other (it could not set the
  // attribute).
  static const StoredWalk& ForThisMachine();

  // As FindPrivateUnder (sandbox/private_walk.h). Returns true when the
  // stored answer was used, false when the folder was walked (and the
  // answer stored when it could be). Safe from several threads and
  // processes at once: a file is replaced whole, by a rename.
  bool Find(const std::string& folder, std::vector<std::string>* found) const;

  // The folder the answers are kept in; empty when none are.
  const std::string& place() const { return place_; }
  // The file that keeps `folder`'s answer.
  std::string FileFor(const std::string& folder) const;

  // Tests: walks are taken to begin at `ns` (CLOCK_REALTIME_COARSE, ns
  // since the epoch) instead of now, so that a folder made just before can
  // be stored. 0: the clock.
  void SetWalkStartForTest(int64_t ns) { walk_start_for_test_ = ns; }

 private:
  // The answer in `name` under the open `place`, if it passes both checks.
  std::optional<std::vector<std::string>> Reuse(
      int place, const std::string& name, const std::string& folder) const;
  // The folder of the answers, made when `create` and missing.
  UniqueFd OpenPlace(bool create) const;

  std::string base_;
  std::string relative_;
  std::string place_;
  int64_t walk_start_for_test_ = 0;
};

}  // namespace garuda

#endif  // GARUDA_SANDBOX_STORED_WALK_H_
