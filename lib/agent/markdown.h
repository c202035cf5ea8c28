// Light formatting of the model's markdown for a terminal with colours:
// headings bold, list items with a bullet, fenced code blocks in one colour
// and unformatted, block quotes marked, **bold** and `code` inline. Line by
// line as the text streams: a line is shown once it is whole (or the answer
// ends). Everything else passes as written; the markers of a construct
// that is not closed on its line stay as they are.
//
// The input must already be safe for the terminal (terminal.h
// TerminalSafe): the only escape sequences in the output are the ones added
// here, SGR colour codes that each line ends with a reset of.
#ifndef GARUDA_LIB_AGENT_MARKDOWN_H_
#define GARUDA_LIB_AGENT_MARKDOWN_H_

#include <string>

#include "absl/strings/string_view.h"

namespace garuda {
namespace agent {

class MarkdownRenderer {
 public:
  // The text of every line `text` completes, formatted.
  std::string Feed(absl::string_view text);
  // The rest (a line without its newline), formatted; a code block still
  // open ends here (the next answer starts afresh).
  std::string Finish();

 private:
  std::string Line(absl::string_view line);
  std::string partial_;
  bool in_code_ = false;
};

// The inline part alone: **bold**, __bold__ and `code`.
std::string MarkdownInline(absl::string_view text);

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_MARKDOWN_H_
