// The pager of the change question's "view": our own, since the helpers
// that ask may not start a program (the applier's seccomp filter refuses
// execve). Keys: space, f or Page Down a page on; b or Page Up a page back;
// j, Enter or Down a line on; k or Up a line back; g or Home the top; G or
// End the end; /TEXT Enter the next line holding TEXT ("/" Enter again:
// the next one); ?TEXT Enter the one before; q back to the question.
// Ctrl-C leaves it too (and the question then discards).
#ifndef GARUDA_LIB_QUESTION_PAGER_H_
#define GARUDA_LIB_QUESTION_PAGER_H_

#include <string>

#include "absl/strings/string_view.h"
#include "lib/question/answer_reader.h"
#include "lib/question/screen.h"

namespace garuda {

struct PagerOptions {
  bool color = false;    // diff lines coloured (screen.h)
  bool escapes = false;  // clear the screen and draw over it, on the
                         // terminal's second screen, which the question
                         // comes back to unchanged
  TerminalSize size;
};

// The line that tells the pager's keys; a page's last line starts with it.
inline constexpr char kPagerKeysLine[] =
    "[space] page down, [b] page up, [/] search, [q] quit";

// Shows `text` (already visible: lib/base/visible.h) on `out`, a page at a
// time, reading keys from `reader` until q, Ctrl-C or the end of input.
void Page(absl::string_view text, question_internal::AnswerReader& reader,
          int out, const PagerOptions& options);

}  // namespace garuda

#endif  // GARUDA_LIB_QUESTION_PAGER_H_
