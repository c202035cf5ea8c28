#include "lib/changeset/changeset.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/sha256.h"
#include "lib/base/status_macros.h"
#include "lib/changeset/beneath.h"
#include "lib/changeset/frame_stream.h"
#include "lib/base/visible.h"

namespace garuda {
namespace {

constexpr char kContentMismatchPayload[] = "garuda/changeset/content-mismatch";

absl::Status WriteChunks(FrameWriter& writer, absl::string_view data) {
  ChangeSetFrame frame;
  do {
    size_t n = std::min(data.size(), kContentChunkBytes);
    frame.mutable_chunk()->set_data(std::string(data.substr(0, n)));
    RETURN_IF_ERROR(writer.Write(frame));
    data.remove_prefix(n);
  } while (!data.empty());
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> ReadSourceContent(const Change& change) {
  const ChangeEntry& entry = change.entry;
  ASSIGN_OR_RETURN(UniqueFd fd,
                   OpenBeneath(change.source_root->get(),
                               change.source_relative, O_RDONLY | O_NONBLOCK));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return absl::AbortedError(absl::StrCat(VisiblePath(entry.path()),
                                           " is no longer a regular file"));
  }
  std::string content;
  content.reserve(std::min<uint64_t>(entry.size(), uint64_t{1} << 26));
  std::string buffer(kContentChunkBytes, '\0');
  for (;;) {
    ssize_t n = ::read(fd.get(), buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return LastErrnoStatus(
          absl::StrCat("read(", VisiblePath(entry.path()), ")"));
    }
    if (n == 0) break;
    content.append(buffer.data(), static_cast<size_t>(n));
    if (content.size() > entry.size()) break;
  }
  if (content.size() != entry.size() || Sha256Bytes(content) != entry.new_sha256()) {
    return absl::AbortedError(absl::StrCat(
        VisiblePath(entry.path()),
        " changed in the staging copy after the change list was made"));
  }
  return content;
}

absl::Status LoadContents(ChangeSet* change_set) {
  for (Change& change : change_set->changes) {
    if (!change.source_root || change.entry.new_type() != FILE_TYPE_REGULAR) {
      continue;
    }
    ASSIGN_OR_RETURN(change.content, ReadSourceContent(change));
    change.source_root.reset();
  }
  return absl::OkStatus();
}

bool IsContentMismatch(const absl::Status& status) {
  return status.GetPayload(kContentMismatchPayload).has_value();
}

absl::Status WriteChangeSet(const ChangeSet& change_set, int fd,
                            const std::string& name) {
  FrameWriter writer(fd, name);
  ChangeSetFrame frame;
  *frame.mutable_header() = change_set.header;
  frame.mutable_header()->set_format(kChangeSetFormat);
  RETURN_IF_ERROR(writer.Write(frame));
  for (const Change& change : change_set.changes) {
    *frame.mutable_entry() = change.entry;
    RETURN_IF_ERROR(writer.Write(frame));
    if (change.entry.new_type() != FILE_TYPE_REGULAR ||
        change.entry.size() == 0) {
      continue;
    }
    if (change.source_root) {
      ASSIGN_OR_RETURN(std::string content, ReadSourceContent(change));
      RETURN_IF_ERROR(WriteChunks(writer, content));
    } else {
      RETURN_IF_ERROR(WriteChunks(writer, change.content));
    }
  }
  *frame.mutable_summary() = change_set.summary;
  frame.mutable_summary()->set_entries(change_set.changes.size());
  return writer.Write(frame);
}

absl::StatusOr<ChangeSet> ReadChangeSet(int fd, const std::string& name) {
  FrameReader reader(fd, name);
  ChangeSet change_set;
  ChangeSetFrame frame;
  auto error = [&](absl::string_view what) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": frame ", reader.frames_read(), ": ", what));
  };
  absl::Status status = reader.Read(&frame);
  if (absl::IsOutOfRange(status)) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": empty input, not a change list"));
  }
  RETURN_IF_ERROR(status);
  if (!frame.has_header() || frame.header().format() != kChangeSetFormat) {
    return error(absl::StrCat("not a change list (the first frame must be a ",
                              kChangeSetFormat, " header)"));
  }
  change_set.header = frame.header();
  Change* current = nullptr;
  auto check_complete = [&]() -> absl::Status {
    if (current == nullptr) return absl::OkStatus();
    if (current->content.size() != current->entry.size()) {
      return error(absl::StrCat(
          "content of ", VisiblePath(current->entry.path()), " has ",
          current->content.size(), " of ", current->entry.size(), " bytes"));
    }
    if (current->entry.new_type() == FILE_TYPE_REGULAR &&
        Sha256Bytes(current->content) != current->entry.new_sha256()) {
      absl::Status mismatch = absl::DataLossError(absl::StrCat(
          name, ": content of ", VisiblePath(current->entry.path()),
          " does not match its SHA-256"));
      mismatch.SetPayload(kContentMismatchPayload, absl::Cord("1"));
      return mismatch;
    }
    return absl::OkStatus();
  };
  for (;;) {
    status = reader.Read(&frame);
    if (absl::IsOutOfRange(status)) {
      return absl::DataLossError(absl::StrCat(
          name, ": the change list ends before its summary (truncated)"));
    }
    RETURN_IF_ERROR(status);
    switch (frame.frame_case()) {
      case ChangeSetFrame::kEntry:
        RETURN_IF_ERROR(check_complete());
        change_set.changes.emplace_back();
        current = &change_set.changes.back();
        current->entry = std::move(*frame.mutable_entry());
        if (current->entry.new_type() != FILE_TYPE_REGULAR &&
            current->entry.size() != 0) {
          return error(absl::StrCat(VisiblePath(current->entry.path()),
                                    ": content for a path that is not a file"));
        }
        current->content.reserve(
            std::min<uint64_t>(current->entry.size(), uint64_t{1} << 26));
        break;
      case ChangeSetFrame::kChunk:
        if (current == nullptr ||
            current->content.size() + frame.chunk().data().size() >
                current->entry.size()) {
          return error("content beyond the size of its entry");
        }
        current->content += frame.chunk().data();
        break;
      case ChangeSetFrame::kSummary: {
        RETURN_IF_ERROR(check_complete());
        change_set.summary = std::move(*frame.mutable_summary());
        if (change_set.summary.entries() != change_set.changes.size()) {
          return error(absl::StrCat(
              "the summary counts ", change_set.summary.entries(),
              " entries, the list has ", change_set.changes.size()));
        }
        ChangeSetFrame extra;
        status = reader.Read(&extra);
        if (!absl::IsOutOfRange(status)) {
          return error("frames after the summary");
        }
        return change_set;
      }
      default:
        return error("a second header or an unknown frame");
    }
  }
}

}  // namespace garuda
