#include "lib/question/question.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/base/files.h"
#include "lib/base/sha256.h"
#include "lib/base/visible.h"
#include "lib/changeset/beneath.h"
#include "lib/question/answer_reader.h"
#include "lib/question/choice.h"
#include "lib/question/diff.h"
#include "lib/question/keys.h"
#include "lib/question/pager.h"
#include "lib/question/screen.h"

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

// "1 file", "3 binary files".
std::string Count(size_t n, absl::string_view one, absl::string_view many) {
  return absl::StrCat(n, " ", n == 1 ? one : many);
}

// A file's own diff is shown while choosing up to this size; view shows
// all of it.
constexpr size_t kFileDiffLimit = 20000;

std::string CutDiff(const std::string& diff, size_t limit,
                    absl::string_view what) {
  if (diff.size() <= limit) return diff;
  size_t cut = diff.rfind('\n', limit);
  std::string out = diff.substr(0, cut == std::string::npos ? limit : cut + 1);
  absl::StrAppend(&out, "[diff cut at ", limit, " characters of ", diff.size(),
                  "; ", what, "]\n");
  return out;
}

}  // namespace

std::string OneLineText(absl::string_view text, size_t max_bytes) {
  std::string line;
  size_t end = std::min(text.size(), max_bytes);
  // Back to the start of a UTF-8 sequence, so none is cut in half.
  if (end < text.size()) {
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xc0) == 0x80) {
      --end;
    }
  }
  line.assign(text.data(), end);
  for (char& c : line) {
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  }
  if (end < text.size()) line += "...";
  return line;
}

Rendered RenderChangeSet(const ChangeSet& change_set, int project_fd,
                         size_t limit) {
  Rendered out;
  const ChangeSetSummary& summary = change_set.summary;
  const std::string& ended_early = change_set.header.ended_early();
  const std::string unfinished =
      ended_early.empty()
          ? ""
          : absl::StrCat("did not finish (", MakeTextVisible(OneLineText(ended_early)),
                         "), so they may be only part of its work");
  if (!change_set.header.command().empty()) {
    // The same text as the agent's tool line ("bash: ..."), so the person
    // can tell which call this is.
    absl::StrAppend(&out.summary, "The command changed files",
                    unfinished.empty() ? "" : " but ", unfinished, ": ",
                    MakeTextVisible(OneLineText(change_set.header.command())), "\n");
  } else if (!unfinished.empty()) {
    absl::StrAppend(&out.summary, "Changed files, by a command that ", unfinished, ":\n");
  } else {
    absl::StrAppend(&out.summary, "Changed files:\n");
  }
  int hidden_total = 0;
  size_t added_total = 0, removed_total = 0, binary = 0, modes = 0,
         sensitive = 0, folders = 0;
  for (const Change& change : change_set.changes) {
    const ChangeEntry& entry = change.entry;
    std::string path = VisiblePath(entry.path());
    std::string letter, detail;
    if (entry.new_type() == FILE_TYPE_DIRECTORY ||
        (entry.new_type() == FILE_TYPE_ABSENT &&
         entry.base().type() == FILE_TYPE_DIRECTORY)) {
      ++folders;
    }
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
        ++modes;
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
        ++binary;
      } else if (old_content != new_content) {
        LineDiff diff = DiffLines(old_content, new_content);
        absl::StrAppend(&detail, detail.empty() ? "" : ", ", "+", diff.added,
                        " -", diff.removed);
        added_total += diff.added;
        removed_total += diff.removed;
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
    if (entry.sensitive()) {
      absl::StrAppend(&detail, detail.empty() ? "" : ", ", "SENSITIVE NAME");
      ++sensitive;
    }
    std::string line =
        absl::StrCat(letter, " ", path, detail.empty() ? "" : "  (", detail,
                     detail.empty() ? "" : ")");
    absl::StrAppend(&out.summary, "  ", line, "\n");
    out.file_lines.push_back(std::move(line));
    if (!file_diff.empty()) {
      // New and deleted files against /dev/null, as git and diff -N do.
      const bool is_new = entry.base().type() != FILE_TYPE_REGULAR;
      const bool is_gone = entry.new_type() != FILE_TYPE_REGULAR;
      file_diff =
          absl::StrCat("--- ", is_new ? "/dev/null" : "a/" + path, "\n+++ ",
                       is_gone ? "/dev/null" : "b/" + path, "\n", file_diff);
      absl::StrAppend(&out.full_diff, file_diff);
    }
    out.file_diffs.push_back(std::move(file_diff));
  }
  if (change_set.changes.empty()) {
    absl::StrAppend(&out.summary, "  (no changes to apply)\n");
  } else {
    const size_t files = change_set.changes.size() - folders;
    std::string totals = files > 0 ? Count(files, "file", "files") : "";
    if (folders > 0) {
      absl::StrAppend(&totals, totals.empty() ? "" : ", ",
                      Count(folders, "folder", "folders"));
    }
    absl::StrAppend(&totals, ": +", added_total, " -", removed_total);
    if (binary > 0) {
      absl::StrAppend(&totals, ", ",
                      Count(binary, "binary file", "binary files"));
    }
    if (modes > 0) {
      absl::StrAppend(&totals, ", ",
                      Count(modes, "mode change", "mode changes"));
    }
    if (sensitive > 0) {
      absl::StrAppend(&totals, ", ",
                      Count(sensitive, "sensitive name", "sensitive names"));
    }
    absl::StrAppend(&out.summary, totals, "\n");
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
    out.diff = CutDiff(out.full_diff, limit,
                       "the file list below is complete; view shows all");
    out.cut = true;
  }
  return out;
}

namespace {

using question_internal::AnswerReader;

// One question on one terminal: the screen, the prompts, the pager.
class ChangeQuestion {
 public:
  ChangeQuestion(const ChangeSet& change_set, const Rendered& rendered, int in,
                 int out, const AskOptions& options)
      : change_set_(change_set),
        rendered_(rendered),
        out_(out),
        options_(options),
        reader_(in) {
    pager_.color = options.color;
    pager_.escapes = reader_.raw() && TerminalHasEscapes(out);
    pager_.size = SizeOf(out);
  }

  ChangeAnswer Run() {
    const bool can_apply = !change_set_.summary.incomplete() &&
                           change_set_.summary.refused().empty() &&
                           !change_set_.changes.empty();
    const bool can_choose =
        can_apply && options_.allow_choose && change_set_.changes.size() > 1;
    ChangeAnswer answer;
    if (!reader_.ok()) {
      Write("Discarded (cannot wait for an answer).\n");
      return answer;
    }
    Write(Diff(rendered_.diff));
    Write("\n");
    Write(Summary());
    std::vector<char> keys = {'a', 'd', 'v'};
    if (can_choose) keys = {'a', 'd', 'c', 'v'};
    if (!can_apply) keys = {'d', 'v'};
    const std::string prompt =
        can_apply
            ? absl::StrCat("Apply these changes? ", KeyPrompt(keys), ": ")
            : absl::StrCat("Apply is not offered: ", KeyPrompt(keys), ": ");
    for (int tries = 0; tries < 20 && !reader_.interrupted(); ++tries) {
      std::optional<char> key = Prompt(prompt, keys);
      if (!key || *key == 'd') break;
      if (*key == 'a') {
        answer.answer = Answer::kApply;
        break;
      }
      if (*key == 'v') {
        View(absl::StrCat(rendered_.full_diff, "\n", rendered_.summary));
        if (!pager_.escapes) Write(Summary());
      }
      if (*key == 'c') {
        std::optional<ChangeAnswer> chosen = Choose();
        if (chosen) answer = *std::move(chosen);
        break;
      }
    }
    if (answer.answer == Answer::kDiscard) {
      Write("Discarded.\n");
    } else if (!answer.some) {
      Write("Applying.\n");
    } else {
      Write(absl::StrCat("Applying ", answer.chosen.size(), " of ",
                         change_set_.changes.size(), " changes.\n"));
    }
    return answer;
  }

 private:
  void Write(absl::string_view text) { (void)WriteAll(out_, text); }

  std::string Diff(const std::string& diff) const {
    return options_.color ? ColorDiff(diff) : diff;
  }

  std::string Summary() const {
    if (!options_.color) return rendered_.summary;
    // The title in bold; the rest as is (already visible).
    size_t end = rendered_.summary.find('\n');
    return absl::StrCat("\x1b[1m", rendered_.summary.substr(0, end), "\x1b[0m",
                        rendered_.summary.substr(end));
  }

  // Asks `prompt` until one of `keys` or the end; echoes the key.
  std::optional<char> Prompt(const std::string& prompt,
                             const std::vector<char>& keys) {
    for (int tries = 0; tries < 20 && !reader_.interrupted(); ++tries) {
      reader_.DropTypeAhead();
      Write(prompt);
      std::optional<char> key = reader_.ReadAnswer(keys);
      if (!key) {
        Write("\n");
        return std::nullopt;
      }
      if (reader_.raw()) {
        Write(absl::StrCat(*key == 0 ? "" : std::string(1, *key), "\n"));
      }
      if (*key != 0) return key;
      Write(absl::StrCat("Press one of: ", KeyPrompt(keys), ".\n"));
    }
    return std::nullopt;
  }

  void View(const std::string& text) { Page(text, reader_, out_, pager_); }

  // File by file; nullopt when the person left (Ctrl-C, end of input).
  std::optional<ChangeAnswer> Choose() {
    const size_t n = change_set_.changes.size();
    std::vector<size_t> chosen;
    const std::vector<char> keys = {'a', 'd', 'r', 'q', 'v'};
    bool decided = false;  // by r or q, for this file and the rest
    for (size_t i = 0; i < n && !decided; ++i) {
      const std::string& diff = rendered_.file_diffs[i];
      Write(absl::StrCat(
          "\n",
          Diff(CutDiff(diff, kFileDiffLimit, "view shows all of this file")),
          rendered_.file_lines[i], "\n"));
      const std::string prompt = absl::StrCat("Change ", i + 1, " of ", n, ": ",
                                              KeyPrompt(keys), ": ");
      for (;;) {
        std::optional<char> key = Prompt(prompt, keys);
        if (!key) return std::nullopt;
        if (*key == 'a') chosen.push_back(i);
        if (*key == 'r') {
          for (size_t rest = i; rest < n; ++rest) chosen.push_back(rest);
          decided = true;
        }
        if (*key == 'q') decided = true;
        if (*key == 'v') {
          View(absl::StrCat(diff.empty() ? "(no diff to show)\n" : diff,
                            rendered_.file_lines[i], "\n"));
          continue;
        }
        break;
      }
    }
    Choice choice = ChooseChanges(change_set_, chosen);
    std::string said = "\n";
    auto list = [&said](absl::string_view what,
                        const std::vector<std::string>& paths) {
      absl::StrAppend(&said, what, " (", paths.size(), "):");
      for (const std::string& path : paths) {
        absl::StrAppend(&said, " ", VisiblePath(path));
      }
      said += "\n";
    };
    list("To apply", choice.applied);
    list("To discard", choice.discarded);
    for (const std::string& why : choice.left_out) {
      absl::StrAppend(&said, "  also discarded: ", why, "\n");
    }
    Write(said);
    ChangeAnswer answer;
    if (choice.applied.empty()) return answer;
    const std::vector<char> confirm = {'a', 'd'};
    std::optional<char> key = Prompt(
        absl::StrCat("Apply ", choice.applied.size() == 1 ? "this " : "these ",
                     choice.applied.size(),
                     choice.applied.size() == 1 ? " change" : " changes",
                     " and discard the rest? ", KeyPrompt(confirm), ": "),
        confirm);
    if (!key || *key != 'a') return answer;
    answer.answer = Answer::kApply;
    answer.some = choice.indices.size() < n;
    if (answer.some) answer.chosen = choice.indices;
    return answer;
  }

  const ChangeSet& change_set_;
  const Rendered& rendered_;
  int out_;
  AskOptions options_;
  AnswerReader reader_;
  PagerOptions pager_;
};

}  // namespace

ChangeAnswer AskChanges(const ChangeSet& change_set, const Rendered& rendered,
                        int in, int out, const AskOptions& options) {
  return ChangeQuestion(change_set, rendered, in, out, options).Run();
}

Answer Ask(const ChangeSet& change_set, const Rendered& rendered, int in,
           int out) {
  AskOptions options;
  options.allow_choose = false;
  return AskChanges(change_set, rendered, in, out, options).answer;
}

}  // namespace garuda
