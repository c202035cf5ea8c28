// The question a person answers before a command's changes reach the
// project: shared by `garuda-applier apply --ask` and the agent.
#ifndef GARUDA_LIB_QUESTION_QUESTION_H_
#define GARUDA_LIB_QUESTION_QUESTION_H_

#include <string>

#include "absl/status/statusor.h"
#include "lib/changeset/changeset.h"

namespace garuda {

inline constexpr size_t kQuestionDiffLimit = 60000;

inline constexpr char kAppliedLine[] = "The user applied the changes";
inline constexpr char kDiscardedLine[] =
    "The user discarded the changes: the project did not change";

struct Rendered {
  std::string summary;  // the complete file list with counts, never cut
  std::string diff;     // the diff, cut at the limit with a note
  std::string full_diff;
  bool cut = false;
};

// What the question shows. `project_fd` (a folder, or -1) gives the old
// contents for the diff; a path whose project version no longer matches
// the list's base says so instead of a diff.
Rendered RenderChangeSet(const ChangeSet& change_set, int project_fd,
                         size_t limit = kQuestionDiffLimit);

enum class Answer { kApply, kDiscard };

// Shows `rendered` on `out` and asks on `in` (both the terminal): Apply,
// Discard or View (the whole diff). An incomplete or refused list offers
// Discard only. End of input, an error, or Ctrl-C (SIGINT while waiting)
// discard.
Answer Ask(const ChangeSet& change_set, const Rendered& rendered, int in,
           int out);

}  // namespace garuda

#endif  // GARUDA_LIB_QUESTION_QUESTION_H_
