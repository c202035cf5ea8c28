// Files put in place together and durably (docs/audit.md, "Durability of
// the tree"): each is written beside its final name, then all are fsynced,
// renamed and their folders fsynced, each folder once. Batching matters: a
// signing group replaces the log's checkpoint and the tree's signed
// checkpoint and syncs the tree's entries, and their writes can go to the
// disk together rather than one fsync after another.
#ifndef GARUDA_LIB_AUDIT_DURABLE_FILES_H_
#define GARUDA_LIB_AUDIT_DURABLE_FILES_H_

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "lib/base/unique_fd.h"

namespace garuda {

class DurableFiles {
 public:
  DurableFiles() = default;
  DurableFiles(const DurableFiles&) = delete;
  DurableFiles& operator=(const DurableFiles&) = delete;
  // Removes the temporary files of a batch that was not committed.
  ~DurableFiles();

  // Writes `content` to "<path>.tmp" (mode `mode`, created or truncated,
  // never through a link). The caller serializes writers of one path (the
  // log's own writer, the tree's lock).
  absl::Status Add(const std::string& path, absl::string_view content,
                   mode_t mode);
  // A file written in place whose data must be durable before the renames
  // (fdatasync with the batch). `fd` stays the caller's and must outlive
  // Commit.
  void AddSync(int fd, const std::string& path);
  // fsync of every file, then the renames, then an fsync of every folder:
  // after a power failure each path holds either its old content or the
  // new, whole, and once this returns the new one stays.
  absl::Status Commit();

 private:
  struct File {
    std::string temporary, path;
    UniqueFd fd;
  };
  std::vector<File> files_;
  std::vector<std::pair<int, std::string>> syncs_;
};

}  // namespace garuda

#endif  // GARUDA_LIB_AUDIT_DURABLE_FILES_H_
