// A command's output as the terminal shows it under the call: its last
// lines, with how many came before.
#ifndef GARUDA_LIB_TERMINAL_OUTPUT_TAIL_H_
#define GARUDA_LIB_TERMINAL_OUTPUT_TAIL_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace garuda {
namespace terminal {

struct OutputTail {
  std::string text;        // the last lines, each ending in '\n'
  size_t lines_cut = 0;    // lines before them, not in `text`
  size_t total_lines = 0;  // lines in the whole output
};
// The last `max_lines` lines of `output` (a last line without '\n' counts).
OutputTail LastLines(absl::string_view output, size_t max_lines);

}  // namespace terminal
}  // namespace garuda

#endif  // GARUDA_LIB_TERMINAL_OUTPUT_TAIL_H_
