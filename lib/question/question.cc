#include "lib/question/question.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/base/files.h"
#include "lib/base/sha256.h"
#include "lib/base/visible.h"
#include "lib/changeset/beneath.h"
#include "lib/question/answer_reader.h"
#include "lib/question/diff.h"

namespace garuda {
namespace {

const char* TypeName(FileType type) {
  switch (type) {
    case FILE_TYPE_REGULAR:
      return "file";
    case FILE_TYPE_SYMLINK:
      return "symlink";
    case FILE_TYPE_DIRECTORY:
      return "folder";
    case FILE_TYPE_ABSENT:
      return "nothing";
    default:
      return "special file";
  }
}

// The project's content at `path`, when it is still the list's base.
bool OldContent(int project_fd, const ChangeEntry& entry, std::string* out) {
  if (entry.base().type() != FILE_TYPE_REGULAR) {
    out->clear();
    return true;
  }
  if (project_fd < 0) return false;
  absl::StatusOr<UniqueFd> fd =
      OpenBeneath(project_fd, entry.path(), O_RDONLY | O_NONBLOCK);
  if (!fd.ok()) return false;
  absl::StatusOr<std::string> content = ReadAll(fd->get());
  if (!content.ok() || Sha256Bytes(*content) != entry.base().sha256())
    return false;
  *out = *std::move(content);
  return true;
}

}  // namespace

Rendered RenderChangeSet(const ChangeSet& change_set, int project_fd,
                         size_t limit) {
  Rendered out;
  const ChangeSetSummary& summary = change_set.summary;
  if (!change_set.header.command().empty()) {
    absl::StrAppend(&out.summary, "The command changed files: ",
                    MakeVisible(change_set.header.command()), "\n");
  } else {
    absl::StrAppend(&out.summary, "Changed files:\n");
  }
  int hidden_total = 0;
  for (const Change& change : change_set.changes) {
    const ChangeEntry& entry = change.entry;
    std::string path = VisiblePath(entry.path());
    std::string letter, detail;
    switch (entry.kind()) {
      case CHANGE_KIND_ADDED:
        letter = "A";
        break;
      case CHANGE_KIND_MODIFIED:
        letter = "M";
        break;
      case CHANGE_KIND_DELETED:
        letter = "D";
        break;
      case CHANGE_KIND_MODE_CHANGED:
        letter = "m";
        detail = absl::StrFormat("mode %04o -> %04o", entry.base().mode(),
                                 entry.new_mode());
        break;
      case CHANGE_KIND_TYPE_CHANGED:
        letter = "T";
        detail = absl::StrCat(TypeName(entry.base().type()), " -> ",
                              TypeName(entry.new_type()));
        break;
      case CHANGE_KIND_REPLACED_FOLDER:
        letter = "R";
        detail = "folder removed and made again";
        break;
      default:
        letter = "?";
    }
    std::string file_diff;
    if (entry.new_type() == FILE_TYPE_SYMLINK) {
      absl::StrAppend(&detail, detail.empty() ? "" : ", ", "link to ",
                      VisiblePath(entry.link_target()));
    } else if (entry.new_type() == FILE_TYPE_DIRECTORY &&
               entry.kind() == CHANGE_KIND_ADDED) {
      detail = "new folder";
    } else if (entry.new_type() == FILE_TYPE_REGULAR ||
               (entry.new_type() == FILE_TYPE_ABSENT &&
                entry.base().type() == FILE_TYPE_REGULAR)) {
      std::string old_content;
      bool have_old = OldContent(project_fd, entry, &old_content);
      const std::string& new_content = change.content;
      if (!have_old) {
        absl::StrAppend(&detail, detail.empty() ? "" : ", ",
                        "the project's version differs from the list's base");
      } else if (LooksBinary(old_content) || LooksBinary(new_content)) {
        absl::StrAppend(
            &detail, detail.empty() ? "" : ", ",
            absl::StrFormat("binary, %d -> %d bytes", old_content.size(),
                            new_content.size()));
      } else if (old_content != new_content) {
        LineDiff diff = DiffLines(old_content, new_content);
        absl::StrAppend(&detail, detail.empty() ? "" : ", ", "+", diff.added,
                        " -", diff.removed);
        if (diff.hidden_marks > 0) {
          absl::StrAppend(&detail, ", ", diff.hidden_marks,
                          " hidden characters shown as marks");
          hidden_total += diff.hidden_marks;
        }
        file_diff = diff.hunks.empty()
                        ? "(only the newline at the end changed)\n"
                        : diff.hunks;
      }
    }
    if (entry.sensitive()) absl::StrAppend(&detail, ", SENSITIVE NAME");
    absl::StrAppend(&out.summary, "  ", letter, " ", path,
                    detail.empty() ? "" : "  (", detail,
                    detail.empty() ? "" : ")", "\n");
    if (!file_diff.empty()) {
      absl::StrAppend(&out.full_diff, "--- a/", path, "\n+++ b/", path, "\n",
                      file_diff);
    }
  }
  if (change_set.changes.empty()) {
    absl::StrAppend(&out.summary, "  (no changes to apply)\n");
  }
  if (hidden_total > 0) {
    absl::StrAppend(&out.summary,
                    "Hidden characters (control, bidirectional, "
                    "zero-width) are shown as \\xNN or <U+XXXX>: ",
                    hidden_total, "\n");
  }
  if (!summary.sensitive_ignored().empty()) {
    absl::StrAppend(&out.summary,
                    "Sensitive files written (ignored by git, kept in staging, "
                    "not applied):\n");
    for (const std::string& path : summary.sensitive_ignored()) {
      absl::StrAppend(&out.summary, "  ", VisiblePath(path), "\n");
    }
  }
  if (!summary.ignored().empty()) {
    absl::StrAppend(&out.summary,
                    "Ignored by git (kept in staging, not applied):\n");
    for (const IgnoredCount& count : summary.ignored()) {
      absl::StrAppend(
          &out.summary, "  ",
          count.folder().empty() ? "(top folder)" : VisiblePath(count.folder()),
          ": ", count.files(), count.files() == 1 ? " file" : " files", "\n");
    }
  }
  for (const RefusedPath& refused : summary.refused()) {
    absl::StrAppend(&out.summary, "REFUSED ", VisiblePath(refused.path()), ": ",
                    MakeVisible(refused.reason()), "\n");
  }
  if (summary.incomplete()) {
    absl::StrAppend(&out.summary,
                    "INCOMPLETE: ", MakeVisible(summary.incomplete_reason()),
                    ". An incomplete list can only be discarded.\n");
  }
  out.diff = out.full_diff;
  if (out.diff.size() > limit) {
    // Cut at a line end, so a mark is never cut in half.
    size_t cut = out.diff.rfind('\n', limit);
    out.diff.resize(cut == std::string::npos ? limit : cut + 1);
    absl::StrAppend(&out.diff, "[diff cut at ", limit, " characters of ",
                    out.full_diff.size(),
                    "; the file list above is complete; View shows all]\n");
    out.cut = true;
  }
  return out;
}

Answer Ask(const ChangeSet& change_set, const Rendered& rendered, int in,
           int out) {
  bool can_apply = !change_set.summary.incomplete() &&
                   change_set.summary.refused().empty() &&
                   !change_set.changes.empty();
  question_internal::AnswerReader reader;
  if (!reader.ok()) {
    (void)WriteAll(out, "Discarded (cannot wait for an answer).\n");
    return Answer::kDiscard;
  }
  (void)WriteAll(out, rendered.summary);
  (void)WriteAll(out, "\n");
  (void)WriteAll(out, rendered.diff);
  Answer answer = Answer::kDiscard;
  for (int tries = 0; tries < 20 && !reader.interrupted(); ++tries) {
    (void)WriteAll(
        out, can_apply ? "\n[a]pply, [d]iscard, [v]iew all? "
                       : "\n[d]iscard, [v]iew all? (apply is not offered) ");
    std::string line;
    if (!reader.ReadLine(in, &line)) break;
    std::string word = absl::AsciiStrToLower(absl::StripAsciiWhitespace(line));
    if (can_apply && (word == "a" || word == "apply")) {
      answer = Answer::kApply;
      break;
    }
    if (word == "d" || word == "discard") break;
    if (word == "v" || word == "view") {
      (void)WriteAll(out, rendered.summary);
      (void)WriteAll(out, "\n");
      (void)WriteAll(out, rendered.full_diff);
    }
  }
  (void)WriteAll(out,
                 answer == Answer::kApply ? "Applying.\n" : "Discarded.\n");
  return answer;
}

}  // namespace garuda
