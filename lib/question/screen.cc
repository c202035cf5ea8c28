#include "lib/question/screen.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace garuda {

bool TerminalHasEscapes(int fd) {
  if (::isatty(fd) != 1) return false;
  const char* term = std::getenv("TERM");
  return term != nullptr && *term != '\0' && absl::string_view(term) != "dumb";
}

bool TerminalHasColors(int fd) {
  const char* no_color = std::getenv("NO_COLOR");
  return TerminalHasEscapes(fd) && (no_color == nullptr || *no_color == '\0');
}

TerminalSize SizeOf(int fd) {
  TerminalSize size;
  struct winsize window = {};
  if (::ioctl(fd, TIOCGWINSZ, &window) == 0 && window.ws_row > 2 &&
      window.ws_col > 10) {
    size.rows = window.ws_row;
    size.cols = window.ws_col;
  }
  return size;
}

std::string ColorDiffLine(absl::string_view line) {
  const char* code = nullptr;
  if (absl::StartsWith(line, "+++ ") || absl::StartsWith(line, "--- ")) {
    code = "1";
  } else if (absl::StartsWith(line, "@@")) {
    code = "36";
  } else if (absl::StartsWith(line, "+")) {
    code = "32";
  } else if (absl::StartsWith(line, "-")) {
    code = "31";
  }
  if (code == nullptr) return std::string(line);
  return absl::StrCat("\x1b[", code, "m", line, "\x1b[0m");
}

std::string ColorDiff(absl::string_view diff) {
  std::string out;
  while (!diff.empty()) {
    size_t end = diff.find('\n');
    absl::string_view line = diff.substr(0, end);
    absl::StrAppend(&out, ColorDiffLine(line));
    if (end == absl::string_view::npos) break;
    out.push_back('\n');
    diff.remove_prefix(end + 1);
  }
  return out;
}

}  // namespace garuda
