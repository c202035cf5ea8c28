// The question a person answers before a command's changes reach the
// project: shared by `garuda-applier apply --ask`, `garuda-applier serve`
// (lib/consent) and the agent.
//
// The screen: the diff (coloured where the terminal has colours), then the
// summary right above the prompt, so that it stays on the screen: the
// command, one line per file with its counts, and the totals (files,
// +/-, binary files, mode changes, sensitive names). The answer is one key
// (keys.h): apply all, discard all, choose files (one key per file, then
// apply the chosen ones), or view the whole diff in the pager (pager.h).
#ifndef GARUDA_LIB_QUESTION_QUESTION_H_
#define GARUDA_LIB_QUESTION_QUESTION_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/changeset/changeset.h"

namespace garuda {

inline constexpr size_t kQuestionDiffLimit = 60000;

inline constexpr char kAppliedLine[] = "The user applied the changes";
inline constexpr char kDiscardedLine[] =
    "The user discarded the changes: the project did not change";

struct Rendered {
  // The title, the complete file list with counts and the totals, and what
  // stays in staging; never cut.
  std::string summary;
  std::string diff;  // the diff, cut at the limit with a note
  std::string full_diff;
  bool cut = false;
  // One of each per change, in the list's order: its line of the file list
  // ("M src/x.c  (+3 -1)") and its diff ("" when it has none).
  std::vector<std::string> file_lines;
  std::vector<std::string> file_diffs;
};

// What the question shows. `project_fd` (a folder, or -1) gives the old
// contents for the diff; a path whose project version no longer matches
// the list's base says so instead of a diff. New and deleted files are
// diffed against /dev/null.
Rendered RenderChangeSet(const ChangeSet& change_set, int project_fd,
                         size_t limit = kQuestionDiffLimit);

// `text` on one line for a title or a tool line: newlines and tabs as
// spaces, cut after `max_bytes` (on a character boundary) with "...".
// Not made visible: the caller does that.
std::string OneLineText(absl::string_view text, size_t max_bytes = 200);

enum class Answer { kApply, kDiscard };

// The person's answer to the change question: all, nothing, or the
// changes at the indices of `chosen` (sorted, at least one, not all).
struct ChangeAnswer {
  Answer answer = Answer::kDiscard;
  bool some = false;  // kApply of `chosen` only
  std::vector<size_t> chosen;
};

struct AskOptions {
  bool color = false;        // the terminal has colours (screen.h)
  bool allow_choose = true;  // offer "choose files" (more than one file)
};

// Shows `rendered` on `out` and asks on `in` (both the terminal): apply,
// discard, choose files, or view. An incomplete or refused list offers
// discard and view only. End of input, an error, or Ctrl-C (SIGINT while
// waiting) discard everything.
ChangeAnswer AskChanges(const ChangeSet& change_set, const Rendered& rendered,
                        int in, int out, const AskOptions& options);

// The question without the per-file choice: all or nothing.
Answer Ask(const ChangeSet& change_set, const Rendered& rendered, int in,
           int out);

}  // namespace garuda

#endif  // GARUDA_LIB_QUESTION_QUESTION_H_
