// Tool results as the model receives them.
#ifndef GARUDA_LIB_TOOLS_RESULT_H_
#define GARUDA_LIB_TOOLS_RESULT_H_

#include <string>

#include "absl/strings/string_view.h"

namespace garuda {

inline constexpr size_t kToolResultLimit = 100000;

// `text` (already formatted) when it fits in `limit` characters (bytes);
// otherwise its first part, cut at a UTF-8 character boundary, and a final
// line telling the model the result was cut and how many characters were
// left out.
std::string CapToolResult(absl::string_view text,
                          size_t limit = kToolResultLimit);

}  // namespace garuda

#endif  // GARUDA_LIB_TOOLS_RESULT_H_
