// Text piped into a one-shot run (`git diff | garuda-agent -p "review
// this"`), added to the prompt as one marked block with a size cap.
#ifndef GARUDA_LIB_AGENT_PIPED_INPUT_H_
#define GARUDA_LIB_AGENT_PIPED_INPUT_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"

namespace garuda {
namespace agent {

// The most of standard input a prompt takes; the rest is read and counted
// but left out, and the block says so.
inline constexpr size_t kPipedInputCap = 256 * 1024;

struct PipedPrompt {
  std::string prompt;  // the prompt, then the block when there was input
  size_t input_bytes = 0;    // everything read
  size_t left_out_bytes = 0; // beyond the cap
};

// Reads `fd` to its end when it is a pipe or a regular file (a terminal, a
// socket or /dev/null adds nothing, and nothing is read from them), and
// returns `prompt` with a block
//   <stdin bytes="N">
//   ...
//   </stdin>
// after it. Invalid UTF-8 becomes U+FFFD. A read error names standard input.
absl::StatusOr<PipedPrompt> AddPipedInput(int fd, const std::string& prompt,
                                          size_t cap = kPipedInputCap);

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_LIB_AGENT_PIPED_INPUT_H_
