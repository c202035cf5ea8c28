// Building a change list: what a command changed in its staging view,
// compared with the real project.
#ifndef GARUDA_LIB_CHANGESET_BUILDER_H_
#define GARUDA_LIB_CHANGESET_BUILDER_H_

#include <sys/stat.h>

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/changeset/changeset.h"

namespace garuda {

inline constexpr uint64_t kDefaultFileLimit = 50000;

struct BuildOptions {
  std::string project;  // the real project root
  std::string command;  // shown in the question, if known
  // More paths than this in the walk make the list incomplete. Only paths
  // that could be applied count: ignored files (kept in staging, never
  // applied, decision Q1) are counted per top folder but not against it.
  uint64_t file_limit = kDefaultFileLimit;
  // The copy walk: when set and true for a path that is a file or link in
  // the staging copy (its lstat result given), the command did not write
  // it: it is neither read, listed nor counted as written, and its project
  // side is not looked at (the copy backend's snapshot).
  std::function<bool(const std::string& relative, const struct stat& staged)>
      unchanged;
  // The copy walk: when set and true for a folder of the staging copy that
  // git does not ignore and that the project has with the same mode,
  // nothing beneath it was written by the command: it is not walked (nor
  // counted against file_limit).
  std::function<bool(const std::string& relative, const struct stat& staged)>
      unchanged_folder;
  // Test seam: called before each file of the staging side is read; an error
  // counts as that file being unreadable.
  std::function<absl::Status(absl::string_view relative)> before_read;
};

// From a full copy of the project (`staged`): every path of both trees is
// compared. `.git` is not compared (it is never applied).
absl::StatusOr<ChangeSet> BuildFromCopy(const std::string& staged,
                                        const BuildOptions& options);

// From the upper layer of an overlay whose lower layer is the project: only
// the upper layer is walked, so the cost follows the size of the change.
// A whiteout (character device 0/0) is a deletion, of the whole subtree for
// a folder; a folder with the overlay "opaque" attribute "y" is a replaced
// folder; a copied-up file with the same content and mode is no change. An
// overlay attribute this code does not know (redirect, metacopy, ...) makes
// the list incomplete rather than guessed.
absl::StatusOr<ChangeSet> BuildFromOverlayUpper(const std::string& upper,
                                                const BuildOptions& options);

}  // namespace garuda

#endif  // GARUDA_LIB_CHANGESET_BUILDER_H_
