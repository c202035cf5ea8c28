#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "lib/base/sha256.h"
#include "lib/mcp/client.h"

namespace garuda {
namespace mcp {
namespace {

bool NameCharacter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '-';
}

}  // namespace

std::string ModelToolName(absl::string_view server, absl::string_view tool,
                          size_t max_len) {
  std::string name = absl::StrCat("mcp__", server, "__", tool);
  bool replaced = false;
  for (char& c : name) {
    if (!NameCharacter(c)) {
      c = '_';
      replaced = true;
    }
  }
  if (!replaced && name.size() <= max_len) return name;
  // The suffix comes from the names as the server sent them, so "a.b" and
  // "a_b" (both "a_b" once replaced) still differ, and the same tool keeps
  // its name from one session to the next.
  std::string hash =
      Sha256Hex(absl::StrCat(server, std::string(1, '\0'), tool)).substr(0, 8);
  constexpr size_t kSuffix = 9;  // '_' and 8 hex digits
  size_t keep = max_len > kSuffix ? max_len - kSuffix : 0;
  if (name.size() > keep) name.resize(keep);
  return absl::StrCat(name, "_", hash).substr(0, max_len);
}

}  // namespace mcp
}  // namespace garuda
