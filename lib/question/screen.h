// What the questions know about the terminal they draw on: whether it has
// colours, its size, and the diff's colours.
#ifndef GARUDA_LIB_QUESTION_SCREEN_H_
#define GARUDA_LIB_QUESTION_SCREEN_H_

#include <string>

#include "absl/strings/string_view.h"

namespace garuda {

// Colours on `fd`: a terminal, $TERM set and not "dumb", and $NO_COLOR not
// set (https://no-color.org).
bool TerminalHasColors(int fd);

// Escape sequences of any kind (the pager's screen): a terminal whose
// $TERM is set and not "dumb".
bool TerminalHasEscapes(int fd);

struct TerminalSize {
  int rows = 24;
  int cols = 80;
};
// From TIOCGWINSZ; 24 x 80 when the terminal does not say.
TerminalSize SizeOf(int fd);

// One line of a diff (without its newline) coloured: added green, removed
// red, hunk headers cyan, file headers bold. The line is already visible
// (lib/base/visible.h), so the escapes added here are the only ones.
std::string ColorDiffLine(absl::string_view line);
// Every line of `diff`.
std::string ColorDiff(absl::string_view diff);

}  // namespace garuda

#endif  // GARUDA_LIB_QUESTION_SCREEN_H_
