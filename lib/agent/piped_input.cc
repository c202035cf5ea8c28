#include "lib/agent/piped_input.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "lib/provider/json.h"

namespace garuda {
namespace agent {

absl::StatusOr<PipedPrompt> AddPipedInput(int fd, const std::string& prompt,
                                          size_t cap) {
  PipedPrompt out;
  out.prompt = prompt;
  struct stat st = {};
  if (::fstat(fd, &st) != 0) return out;  // no standard input at all
  // Only a pipe or a file is input someone meant; a terminal is the person,
  // and reading a socket or a device could wait for ever.
  if (!S_ISFIFO(st.st_mode) && !S_ISREG(st.st_mode)) return out;
  std::string text;
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "could not read the text piped on standard input: ",
          ::strerror(errno)));
    }
    if (n == 0) break;
    out.input_bytes += static_cast<size_t>(n);
    // Read to the end even past the cap, so the writer is not cut off with
    // SIGPIPE and the count of what was left out is exact.
    if (text.size() < cap) {
      text.append(buffer, std::min(static_cast<size_t>(n), cap - text.size()));
    }
  }
  if (out.input_bytes == 0) return out;
  out.left_out_bytes = out.input_bytes - text.size();
  std::string block = provider::ValidUtf8(text);
  if (!block.empty() && block.back() != '\n') block.push_back('\n');
  absl::StrAppend(&out.prompt, "\n\n<stdin bytes=\"", out.input_bytes, "\">\n",
                  block);
  if (out.left_out_bytes > 0) {
    absl::StrAppend(&out.prompt, "[Garuda: the input was cut at ", cap,
                    " bytes; ", out.left_out_bytes,
                    " more bytes were left out.]\n");
  }
  absl::StrAppend(&out.prompt, "</stdin>");
  return out;
}

}  // namespace agent
}  // namespace garuda
