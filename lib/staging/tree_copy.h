// Copying a project tree for the copy backend: a reflink (FICLONE) where the
// file system can share blocks, else a plain copy.
#ifndef GARUDA_LIB_STAGING_TREE_COPY_H_
#define GARUDA_LIB_STAGING_TREE_COPY_H_

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace garuda {

inline constexpr uint64_t kCopyByteLimit = 2ull << 30;  // 2 GB
inline constexpr uint64_t kCopyFileLimit = 50000;

// Whether `file` can be cloned (FICLONE) into the folder `into`.
bool ReflinkWorks(const std::string& file, const std::string& into);

struct CopyStats {
  uint64_t reflinked = 0;
  uint64_t copied = 0;
  uint64_t skipped_special = 0;  // fifos, sockets, devices: not copied
  uint64_t paths = 0;            // every path listed: files, links, folders
  uint64_t bytes = 0;            // of regular files
};

// A project copy is refused past either limit (0: none). The byte limit
// holds only where reflink does not work (a plain copy).
struct CopyLimits {
  uint64_t files = 0;
  uint64_t bytes = 0;
};

enum class CopyRefusal { kNone, kFiles, kBytes };

// One path of a finished copy, for the copy backend's first snapshot.
struct CopiedPath {
  std::string relative;  // beneath both roots; "" is the root
  struct stat source;    // the source's lstat result when it was listed
  struct stat copy;      // the copy's, once it was finished
  // A file: its source's lstat result after it was read equals `source`
  // (it did not change while being copied). A link: always (a link is
  // replaced, never changed in place). A folder: never (not a pair).
  bool source_steady = false;
};

// Copies the folder `from` to `to` (which must not exist): folders with
// their modes (and, below the root, times), files with modes and times,
// links as links. Special files are skipped. One walk lists and counts the
// tree and makes its folders and links, stopping past a limit before any
// file is copied (what it made is removed; FAILED_PRECONDITION, `refused`
// says which limit). `stats` counts this copy. The files are then copied by
// several worker processes when there are many. `paths` (optional) gets every
// path of the copy.
absl::Status CopyProjectTree(const std::string& from, const std::string& to,
                             const CopyLimits& limits, CopyStats* stats,
                             std::vector<CopiedPath>* paths,
                             CopyRefusal* refused);

// Copies `from` (a folder, a file or a link) to `to` (which must not
// exist; a file or a link keeps its name), without limits.
absl::Status CopyTree(const std::string& from, const std::string& to,
                      CopyStats* stats);

}  // namespace garuda

#endif  // GARUDA_LIB_STAGING_TREE_COPY_H_
