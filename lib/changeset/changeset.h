// A change list in memory, and its stream form (proto/changeset.proto).
#ifndef GARUDA_LIB_CHANGESET_CHANGESET_H_
#define GARUDA_LIB_CHANGESET_CHANGESET_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/base/unique_fd.h"
#include "proto/changeset.pb.h"

namespace garuda {

inline constexpr char kChangeSetFormat[] = "garuda.changeset.v1";
inline constexpr size_t kContentChunkBytes = 256 * 1024;

struct Change {
  ChangeEntry entry;
  // The new content of a regular file, when it was read from a stream or
  // made in memory.
  std::string content;
  // Or, when the list was built from a walk: where to read it at write time,
  // beneath `source_root` (the staging copy or the upper layer), never
  // through a link. The writer checks size and SHA-256 against the entry.
  std::shared_ptr<UniqueFd> source_root;
  std::string source_relative;
};

struct ChangeSet {
  ChangeSetHeader header;
  std::vector<Change> changes;
  ChangeSetSummary summary;

  // Nothing to show: no change, no refused path, not incomplete. Ignored
  // counts alone do not ask a question.
  bool NoChanges() const {
    return changes.empty() && summary.refused().empty() &&
           !summary.incomplete() && summary.sensitive_ignored().empty();
  }
};

// The new content of a change built from a walk, read beneath its source
// root without following links, checked against the entry's size and hash.
absl::StatusOr<std::string> ReadSourceContent(const Change& change);

// Reads every such content into memory, as a list read from a stream has
// it (for a list built and applied in one process).
absl::Status LoadContents(ChangeSet* change_set);

// Writes `change_set` as frames to `fd`; `name` starts errors.
absl::Status WriteChangeSet(const ChangeSet& change_set, int fd,
                            const std::string& name);

// Reads a whole change list. Anything out of order (no header first, a chunk
// with no entry, more or fewer content bytes than the entry's size, content
// whose SHA-256 differs from the entry's, frames after the summary, no
// summary) is an error, and nothing of the list is used. Content whose
// SHA-256 differs is DATA_LOSS marked so that IsContentMismatch() tells it
// from a damaged stream: the list was read whole and is refused for what it
// holds (garuda-applier's exit 5), not for how it came.
absl::StatusOr<ChangeSet> ReadChangeSet(int fd, const std::string& name);

// True for ReadChangeSet's error about content that does not match its
// entry's SHA-256.
bool IsContentMismatch(const absl::Status& status);

}  // namespace garuda

#endif  // GARUDA_LIB_CHANGESET_CHANGESET_H_
