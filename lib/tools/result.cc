#include "lib/tools/result.h"

#include "absl/strings/str_cat.h"

namespace garuda {

std::string CapToolResult(absl::string_view text, size_t limit) {
  if (text.size() <= limit) return std::string(text);
  size_t cut = limit;
  // Back up over UTF-8 continuation bytes, so no character is split.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
    --cut;
  }
  std::string out(text.substr(0, cut));
  if (!out.empty() && out.back() != '\n') out.push_back('\n');
  absl::StrAppend(&out, "[result cut at ", cut, " of ", text.size(),
                  " characters: ", text.size() - cut,
                  " characters left out; narrow the request (a path, a glob, "
                  "offset and limit) to see the rest]");
  return out;
}

}  // namespace garuda
