// What the host keeps private under a folder (the policy's
// denyPrivateUnder, /etc by default): every file or folder that others may
// not read, whatever its name, found by a walk at each command's start.
//
// A process that starts many commands (garuda-stager serve) keeps a
// PrivateWalk: the first walk puts an inotify watch on every folder it
// reads and on every file it shows, and the answer is reused
// for as long as no event came and no mount at, above or below the folder
// changed. Any event at all (an entry created, removed, renamed, or its
// mode, owner or link count changed, by any of its names; a lost event)
// makes the next command walk again, so a stored answer is never stale:
// a secret added under /etc after the first command is hidden from the
// next. A watch that cannot be placed (the inotify limit) means no reuse.
#ifndef GARUDA_SANDBOX_PRIVATE_WALK_H_
#define GARUDA_SANDBOX_PRIVATE_WALK_H_

#include <sys/stat.h>
#include <sys/types.h>

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "lib/base/unique_fd.h"

namespace garuda {

// What a walk looked at: `folder` itself and every entry that is not a
// link, each with its lstat as the walk saw it (sandbox/stored_walk.h
// checks a stored answer against them). `complete` is false when a folder
// the walk meant to read could not be opened or read, or an entry could
// not be looked at for another reason than its removal.
struct WalkRecord {
  std::vector<std::pair<std::string, struct stat>> looked_at;
  bool complete = true;
};

// The walk alone, without watches: appends to `found` the paths under
// `folder` (absolute) that others may not read (or, for a folder, enter).
// Links are not followed; a private folder is listed, not entered.
// `record` (may be null) is told what the walk looked at.
void FindPrivateUnder(const std::string& folder,
                      std::vector<std::string>* found,
                      WalkRecord* record = nullptr);

class PrivateWalk {
 public:
  PrivateWalk() = default;
  PrivateWalk(const PrivateWalk&) = delete;
  PrivateWalk& operator=(const PrivateWalk&) = delete;

  // As FindPrivateUnder, from the stored answer while the watches vouch
  // for it. Thread-safe.
  void Find(const std::string& folder, std::vector<std::string>* found);

  // Walks made so far (a reuse makes none).
  int walks() const;
  // For the tests' negative control: the stored answer for `folder`,
  // without any check.
  std::vector<std::string> StoredForTest(const std::string& folder) const;

 private:
  struct Stored {
    std::vector<std::string> found;
    UniqueFd events;     // inotify, non-blocking
    UniqueFd mountinfo;  // /proc/self/mountinfo, polled for changes
    ino_t mount_namespace = 0;
    std::string mounts;   // the mountinfo lines at, above or below folder
    bool usable = false;  // every watch was placed
  };
  bool StillTrue(const std::string& folder, Stored& stored);
  void Walk(const std::string& folder, Stored& stored);

  mutable std::mutex mutex_;
  std::map<std::string, Stored> stored_;
  int walks_ = 0;
};

}  // namespace garuda

#endif  // GARUDA_SANDBOX_PRIVATE_WALK_H_
