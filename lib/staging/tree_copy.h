// Copying a project tree for the copy backend: a reflink (FICLONE) where the
// file system can share blocks, else a plain copy.
#ifndef GARUDA_LIB_STAGING_TREE_COPY_H_
#define GARUDA_LIB_STAGING_TREE_COPY_H_

#include <time.h>

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace garuda {

inline constexpr uint64_t kCopyByteLimit = 2ull << 30;  // 2 GB
inline constexpr uint64_t kCopyFileLimit = 50000;

struct TreeSize {
  uint64_t files = 0;      // every path: files, links, folders
  uint64_t bytes = 0;      // of regular files
  std::string first_file;  // a regular file, for ReflinkWorks
};

// Whether `file` can be cloned (FICLONE) into the folder `into`.
bool ReflinkWorks(const std::string& file, const std::string& into);

// Walks `root` without following links. Stops early once a limit is passed.
absl::StatusOr<TreeSize> MeasureTree(const std::string& root,
                                     uint64_t file_limit, uint64_t byte_limit);

struct CopyStats {
  uint64_t reflinked = 0;
  uint64_t copied = 0;
  uint64_t skipped_special = 0;  // fifos, sockets, devices: not copied
};

// Copies `from` to `to` (which must not exist): folders with their modes,
// files with modes and times, links as links. Special files are skipped.
// A folder is copied in two passes: its folders and links first, then its
// files, by several worker processes when there are many.
absl::Status CopyTree(const std::string& from, const std::string& to,
                      CopyStats* stats);

}  // namespace garuda

#endif  // GARUDA_LIB_STAGING_TREE_COPY_H_
