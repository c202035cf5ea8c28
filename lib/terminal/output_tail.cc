#include "lib/terminal/output_tail.h"

#include <algorithm>

namespace garuda {
namespace terminal {

OutputTail LastLines(absl::string_view output, size_t max_lines) {
  OutputTail tail;
  if (output.empty()) return tail;
  absl::string_view body = output;
  if (body.back() == '\n') body.remove_suffix(1);
  size_t lines = 1;
  for (char c : body) lines += c == '\n';
  tail.total_lines = lines;
  const size_t keep = std::min(lines, max_lines);
  // The start of the first kept line: just after the keep-th line break
  // from the end.
  size_t start = 0;
  size_t position = body.size();
  for (size_t i = 0; i < keep; ++i) {
    size_t newline = position == 0 ? absl::string_view::npos
                                   : body.rfind('\n', position - 1);
    if (newline == absl::string_view::npos) {
      start = 0;
      break;
    }
    position = newline;
    start = newline + 1;
  }
  if (keep == 0) start = body.size();
  tail.text = std::string(body.substr(start));
  if (keep > 0) tail.text.push_back('\n');
  tail.lines_cut = lines - keep;
  return tail;
}

}  // namespace terminal
}  // namespace garuda
