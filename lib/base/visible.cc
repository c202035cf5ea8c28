#include "lib/base/visible.h"

#include <cstdint>

#include "absl/strings/str_format.h"

namespace garuda {
namespace {

// Length of the valid UTF-8 sequence at the start of `s` and its code point,
// or 0 when the bytes there are not valid UTF-8 (overlong forms, surrogates
// and values past U+10FFFF included).
int DecodeUtf8(absl::string_view s, uint32_t* code_point) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char b0 = byte(0);
  if (b0 < 0x80) {
    *code_point = b0;
    return 1;
  }
  int length;
  uint32_t cp;
  if ((b0 & 0xe0) == 0xc0) {
    length = 2;
    cp = b0 & 0x1f;
  } else if ((b0 & 0xf0) == 0xe0) {
    length = 3;
    cp = b0 & 0x0f;
  } else if ((b0 & 0xf8) == 0xf0) {
    length = 4;
    cp = b0 & 0x07;
  } else {
    return 0;
  }
  if (s.size() < static_cast<size_t>(length)) return 0;
  for (int i = 1; i < length; ++i) {
    if ((byte(i) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i) & 0x3f);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[length] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
    return 0;
  }
  *code_point = cp;
  return length;
}

bool IsHiddenCodePoint(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9f) ||  // C1 controls
         cp == 0x00ad || cp == 0x061c || cp == 0x180e ||
         (cp >= 0x200b && cp <= 0x200f) ||  // zero-width, LRM, RLM
         (cp >= 0x2028 && cp <= 0x202e) ||  // separators, bidi embeddings
         (cp >= 0x2060 && cp <= 0x2069) ||  // word joiner, bidi isolates
         cp == 0xfeff || (cp >= 0xfff9 && cp <= 0xfffb) ||
         (cp >= 0xe0000 && cp <= 0xe007f);  // tag characters
}

std::string Visible(absl::string_view text, bool keep_tab, int* count,
                    bool double_backslash = true) {
  std::string out;
  out.reserve(text.size());
  int marks = 0;
  while (!text.empty()) {
    unsigned char c = static_cast<unsigned char>(text[0]);
    if (c < 0x80) {
      if (c == '\\') {
        out += double_backslash ? "\\\\" : "\\";
      } else if (c == '\t' && keep_tab) {
        out += '\t';
      } else if (c < 0x20 || c == 0x7f) {
        ++marks;
        if (c == '\n') {
          out += "\\n";
        } else if (c == '\r') {
          out += "\\r";
        } else if (c == 0x1b) {
          out += "\\e";
        } else if (c == '\t') {
          out += "\\t";
        } else {
          out += absl::StrFormat("\\x%02x", c);
        }
      } else {
        out += static_cast<char>(c);
      }
      text.remove_prefix(1);
      continue;
    }
    uint32_t cp = 0;
    int length = DecodeUtf8(text, &cp);
    if (length == 0) {
      ++marks;
      out += absl::StrFormat("\\x%02x", c);
      text.remove_prefix(1);
      continue;
    }
    if (IsHiddenCodePoint(cp)) {
      ++marks;
      out += absl::StrFormat("<U+%04X>", cp);
    } else {
      out.append(text.data(), length);
    }
    text.remove_prefix(length);
  }
  if (count != nullptr) *count += marks;
  return out;
}

}  // namespace

std::string MakeVisible(absl::string_view text, int* count) {
  return Visible(text, /*keep_tab=*/false, count);
}

std::string MakeMessageVisible(absl::string_view text) {
  return Visible(text, /*keep_tab=*/false, nullptr,
                 /*double_backslash=*/false);
}

std::string MakeLineVisible(absl::string_view line, int* count) {
  return Visible(line, /*keep_tab=*/true, count);
}

std::string VisiblePath(absl::string_view path) {
  int marks = 0;
  std::string visible = MakeVisible(path, &marks);
  if (marks == 0 && visible.find(' ') == std::string::npos &&
      visible.find('"') == std::string::npos && !visible.empty()) {
    return visible;
  }
  std::string quoted = "\"";
  for (char c : visible) {
    if (c == '"') quoted += '\\';
    quoted += c;
  }
  quoted += '"';
  return quoted;
}

std::string MakeTextVisible(absl::string_view text) {
  // MakeLineVisible doubles a backslash (so its marks cannot be forged in a
  // diff); here text that is already visible must pass unchanged, so the
  // backslashes and newlines are kept between the pieces it marks.
  std::string out;
  out.reserve(text.size());
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] != '\\' && text[i] != '\n') continue;
    out += MakeLineVisible(text.substr(start, i - start));
    if (i < text.size()) out += text[i];
    start = i + 1;
  }
  return out;
}

}  // namespace garuda
