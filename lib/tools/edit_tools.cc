#include "lib/tools/edit_tools.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "lib/base/files.h"
#include "lib/base/sha256.h"
#include "lib/base/status_macros.h"
#include "lib/base/visible.h"
#include "lib/changeset/beneath.h"
#include "lib/changeset/rules.h"
#include "lib/question/question.h"

namespace garuda {
namespace {

struct Current {
  Fingerprint base;
  std::string content;  // when base is a regular file
};

// The file as it is now, read beneath the root without following any link.
absl::StatusOr<Current> ReadCurrent(const Project& project,
                                    const std::string& relative,
                                    absl::string_view tool) {
  if (relative.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(tool, ": the path names the project root, not a file"));
  }
  const std::string shown = VisiblePath(relative);
  Current current;
  absl::StatusOr<Fingerprint> fingerprint =
      FingerprintBeneath(project.fd(), relative);
  if (!fingerprint.ok()) {
    if (absl::IsFailedPrecondition(fingerprint.status())) {
      return absl::FailedPreconditionError(absl::StrCat(
          tool, ": ", shown,
          " is reached through a symbolic link; edit the file at its real "
          "path inside the project"));
    }
    return absl::Status(
        fingerprint.status().code(),
        absl::StrCat(tool, ": ", fingerprint.status().message()));
  }
  current.base = *fingerprint;
  switch (current.base.type()) {
    case FILE_TYPE_ABSENT:
      return current;
    case FILE_TYPE_REGULAR:
      break;
    case FILE_TYPE_SYMLINK:
      return absl::FailedPreconditionError(absl::StrCat(
          tool, ": ", shown,
          " is a symbolic link; edit the file it points to at its own path"));
    case FILE_TYPE_DIRECTORY:
      return absl::FailedPreconditionError(
          absl::StrCat(tool, ": ", shown, " is a folder, not a file"));
    default:
      return absl::FailedPreconditionError(
          absl::StrCat(tool, ": ", shown, " is not a regular file"));
  }
  ASSIGN_OR_RETURN(UniqueFd fd,
                   OpenBeneath(project.fd(), relative, O_RDONLY | O_NONBLOCK));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return absl::AbortedError(
        absl::StrCat(tool, ": ", shown, " changed while it was read"));
  }
  ASSIGN_OR_RETURN(current.content, ReadAll(fd.get()));
  // The base is what was read, so the applier's check compares against the
  // very text the edit was made from.
  current.base.set_mode(st.st_mode & 07777);
  current.base.set_sha256(Sha256Bytes(current.content));
  return current;
}

ProposedEdit MakeProposal(const Project& project, const std::string& relative,
                          const Current& current, std::string new_content,
                          absl::string_view tool) {
  ProposedEdit proposal;
  proposal.relative = relative;
  ChangeSet& set = proposal.change_set;
  set.header.set_format(kChangeSetFormat);
  set.header.set_project_root(project.root());
  set.header.set_source(std::string(tool));
  Change change;
  ChangeEntry& entry = change.entry;
  entry.set_path(relative);
  *entry.mutable_base() = current.base;
  bool added = current.base.type() == FILE_TYPE_ABSENT;
  entry.set_kind(added ? CHANGE_KIND_ADDED : CHANGE_KIND_MODIFIED);
  entry.set_new_type(FILE_TYPE_REGULAR);
  entry.set_new_mode(added ? 0644 : current.base.mode());
  entry.set_size(new_content.size());
  entry.set_new_sha256(Sha256Bytes(new_content));
  entry.set_sensitive(SensitiveNames::Default().Matches(relative));
  change.content = std::move(new_content);
  set.changes.push_back(std::move(change));
  set.summary.set_entries(1);
  Rendered rendered = RenderChangeSet(set, project.fd());
  proposal.question_text = absl::StrCat(rendered.summary, "\n", rendered.diff);
  return proposal;
}

// 1-based line numbers where each match starts.
std::vector<int> MatchLines(const std::string& content,
                            const std::string& needle) {
  std::vector<int> lines;
  int line = 1;
  size_t counted = 0;
  for (size_t at = content.find(needle); at != std::string::npos;
       at = content.find(needle, at + needle.size())) {
    line += std::count(content.begin() + counted, content.begin() + at, '\n');
    counted = at;
    lines.push_back(line);
  }
  return lines;
}

}  // namespace

absl::StatusOr<ProposedEdit> ProposeEditFile(const Project& project,
                                             const EditFileInput& input) {
  ASSIGN_OR_RETURN(std::string relative, project.Relative(input.path));
  if (input.old_string.empty()) {
    return absl::InvalidArgumentError(
        "edit_file: old_string is empty; to create a file or replace all of "
        "it, use write_file");
  }
  if (input.old_string == input.new_string) {
    return absl::InvalidArgumentError(
        "edit_file: old_string and new_string are the same; nothing would "
        "change");
  }
  ASSIGN_OR_RETURN(Current current,
                   ReadCurrent(project, relative, kEditFileRule));
  const std::string shown = VisiblePath(relative);
  if (current.base.type() == FILE_TYPE_ABSENT) {
    return absl::NotFoundError(absl::StrCat(
        "edit_file: ", shown, " does not exist; use write_file to create it"));
  }
  std::vector<int> lines = MatchLines(current.content, input.old_string);
  if (lines.empty()) {
    return absl::NotFoundError(absl::StrCat(
        "edit_file: old_string was not found in ", shown,
        "; read the file again and copy the text exactly, with its "
        "whitespace and indentation"));
  }
  if (lines.size() > 1 && !input.replace_all) {
    std::vector<int> first(lines.begin(),
                           lines.begin() + std::min<size_t>(lines.size(), 20));
    return absl::FailedPreconditionError(absl::StrCat(
        "edit_file: old_string matches ", lines.size(), " times in ", shown,
        " (starting on lines ", absl::StrJoin(first, ", "),
        lines.size() > first.size() ? ", ..." : "",
        "); include more of the surrounding text so that it matches once, "
        "or set replace_all to true to replace every one"));
  }
  std::string updated;
  if (input.replace_all) {
    updated = absl::StrReplaceAll(current.content,
                                  {{input.old_string, input.new_string}});
  } else {
    size_t at = current.content.find(input.old_string);
    updated =
        absl::StrCat(current.content.substr(0, at), input.new_string,
                     current.content.substr(at + input.old_string.size()));
  }
  ProposedEdit proposal = MakeProposal(project, relative, current,
                                       std::move(updated), kEditFileRule);
  proposal.replacements = static_cast<int>(lines.size());
  return proposal;
}

absl::StatusOr<ProposedEdit> ProposeWriteFile(const Project& project,
                                              const WriteFileInput& input) {
  ASSIGN_OR_RETURN(std::string relative, project.Relative(input.path));
  ASSIGN_OR_RETURN(Current current,
                   ReadCurrent(project, relative, kWriteFileRule));
  if (current.base.type() == FILE_TYPE_REGULAR &&
      current.content == input.content) {
    return absl::AlreadyExistsError(
        absl::StrCat("write_file: ", VisiblePath(relative),
                     " already has this content; nothing would change"));
  }
  return MakeProposal(project, relative, current, input.content,
                      kWriteFileRule);
}

}  // namespace garuda
