// A line diff for the question: unified hunks with hidden characters made
// visible, and the counts of added and removed lines.
#ifndef GARUDA_LIB_QUESTION_DIFF_H_
#define GARUDA_LIB_QUESTION_DIFF_H_

#include <string>

#include "absl/strings/string_view.h"

namespace garuda {

struct LineDiff {
  int added = 0;
  int removed = 0;
  std::string hunks;     // "@@ -1,3 +1,4 @@" blocks, each line visible
  int hidden_marks = 0;  // characters shown as marks in the hunks
  bool whole = false;    // too large to compare line by line: all of
                         // the old removed, all of the new added
};

// Content with a NUL byte, or not valid UTF-8 in its first 8 000 bytes.
bool LooksBinary(absl::string_view content);

LineDiff DiffLines(absl::string_view old_text, absl::string_view new_text,
                   int context = 3);

}  // namespace garuda

#endif  // GARUDA_LIB_QUESTION_DIFF_H_
