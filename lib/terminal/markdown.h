// Light formatting of the model's markdown for a terminal with colours:
// headings bold, list items with a bullet, fenced code blocks in one colour
// and unformatted, block quotes marked, **bold** and `code` inline. As the
// text streams: plain text is shown at once; only what may start a
// construct waits for the characters that decide it (the first few of a
// line, an opening ** or ` until its close or the line's end). Everything
// else passes as written; the markers of a construct that is not closed on
// its line stay as they are.
//
// The input must already be safe for the terminal (terminal.h
// TerminalSafe): the only escape sequences in the output are the ones added
// here, SGR colour codes that each line ends with a reset of.
#ifndef GARUDA_LIB_TERMINAL_MARKDOWN_H_
#define GARUDA_LIB_TERMINAL_MARKDOWN_H_

#include <string>

#include "absl/strings/string_view.h"

namespace garuda {
namespace terminal {

class MarkdownRenderer {
 public:
  // What can be shown of the text so far, formatted.
  std::string Feed(absl::string_view text);
  // The rest (a line without its newline), formatted; a code block still
  // open ends here (the next answer starts afresh).
  std::string Finish();

 private:
  enum class Kind { kUndecided, kText, kHeading, kCode, kFence, kRule };
  std::string Prefix(absl::string_view start, bool whole, size_t* skip);
  void Emit(bool whole, std::string* out);
  void EndLine(std::string* out);

  std::string partial_;   // what is not shown yet of the current line
  bool started_ = false;  // the line's start is decided and shown
  Kind kind_ = Kind::kUndecided;
  bool in_code_ = false;
};

// The inline part alone: **bold**, __bold__ and `code`.
std::string MarkdownInline(absl::string_view text);

// The inline part of a line as far as it can be decided: formatted into
// `out`, `used` the bytes of `text` taken. With `whole` (the line ended)
// everything is taken; otherwise an opening marker that may still close
// waits. True when all was taken.
bool MarkdownInlineStep(absl::string_view text, bool whole, std::string* out,
                        size_t* used);

}  // namespace terminal
}  // namespace garuda

#endif  // GARUDA_LIB_TERMINAL_MARKDOWN_H_
