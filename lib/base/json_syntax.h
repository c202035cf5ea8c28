// A strict check of JSON text (RFC 8259) before protobuf reads it, so that a
// mistake in a settings, policy or job file is reported where it is: line,
// column, what was expected and what was found. protobuf's own reader says
// "Unexpected token" with no position, accepts some things JSON does not, and
// keeps the last of two equal keys without a word.
#ifndef GARUDA_LIB_BASE_JSON_SYNTAX_H_
#define GARUDA_LIB_BASE_JSON_SYNTAX_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace garuda {

// How deep objects and lists may nest; deeper text is refused (no settings
// file needs more, and the check is recursive).
inline constexpr int kJsonMaxDepth = 64;

// OK when `text` is exactly one JSON value with white space around it.
// Otherwise INVALID_ARGUMENT with a message of the form
// "3:14: expected ',' or '}' after a field's value, found 'x'" (line and
// column from 1, the column counted in characters). Refused besides what RFC
// 8259 refuses: a key that appears twice in one object, invalid UTF-8, and
// nesting deeper than kJsonMaxDepth. A trailing comma is always an error.
absl::Status CheckJsonSyntax(absl::string_view text);

// The same, and the value must be an object (a settings file, a policy, a
// job file, one line of a journal).
absl::Status CheckJsonObjectSyntax(absl::string_view text);

// `text` as a JSON string, quotes included: '"', '\\' and the control
// characters escaped (\n, \r, \t, else \u00XX); other bytes as they are.
std::string JsonQuoted(absl::string_view text);

}  // namespace garuda

#endif  // GARUDA_LIB_BASE_JSON_SYNTAX_H_
