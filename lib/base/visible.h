// Text as a person must see it before saying yes: every character that a
// terminal would hide, reorder or interpret is replaced by a visible mark.
#ifndef GARUDA_LIB_BASE_VISIBLE_H_
#define GARUDA_LIB_BASE_VISIBLE_H_

#include <string>

#include "absl/strings/string_view.h"

namespace garuda {

// Shows control characters (C0 but tab, DEL, C1) as "\xNN" (or "\n", "\r",
// "\e"), bidirectional controls (U+202A..U+202E, U+2066..U+2069, U+200E,
// U+200F, U+061C) and zero-width or invisible characters (U+200B..U+200D,
// U+2060..U+2064, U+FEFF, U+00AD, U+180E) as "<U+XXXX>", and bytes that are
// not valid UTF-8 as "\xNN". A backslash is doubled, so the marks cannot be
// forged. Everything else, including printable UTF-8, is kept.
// `count` (optional) receives how many marks were made.
std::string MakeVisible(absl::string_view text, int* count = nullptr);

// An error message that can quote bytes of a file: the same marks as
// MakeVisible, but a backslash stays one (the message's own "\n" hints
// read as written), so applying it twice changes nothing. Marks can then be
// imitated, which matters for what a person approves, not for a message.
std::string MakeMessageVisible(absl::string_view text);

// A line of a diff: like MakeVisible, but a tab stays a tab.
std::string MakeLineVisible(absl::string_view line, int* count = nullptr);

// Text of several lines for the terminal (a diff, a reason, a model's
// answer): like MakeLineVisible between the newlines and backslashes, which
// are kept as they are, so text that is already visible passes unchanged.
std::string MakeTextVisible(absl::string_view text);

// A path from a change list, quoted when it needs marks or has a space
// ("\"my file\\n.txt\"").
std::string VisiblePath(absl::string_view path);

}  // namespace garuda

#endif  // GARUDA_LIB_BASE_VISIBLE_H_
