// The JSON scanner of garuda-audit verify: checks that bytes are one JSON
// value without building it, and notes what the canonical form of an audit
// line (line_format.h) never holds. Kept apart from the line format so each
// file reads on its own.
#ifndef GARUDA_LIB_AUDIT_JSON_CHECK_H_
#define GARUDA_LIB_AUDIT_JSON_CHECK_H_

#include <cstddef>
#include <cstdint>

#include "absl/strings/string_view.h"

namespace garuda {

inline constexpr int kMaxJsonDepth = 64;

// The length of the well-formed UTF-8 sequence of a character that starts at
// p[0] (0x80 or above), or 0 when it is not one (overlong forms, surrogates
// and values past U+10FFFF included).
inline int Utf8SequenceLength(const unsigned char* p, const unsigned char* end) {
  unsigned char c = *p;
  int extra;
  uint32_t min;
  uint32_t code;
  if ((c & 0xe0) == 0xc0) {
    extra = 1, min = 0x80, code = c & 0x1f;
  } else if ((c & 0xf0) == 0xe0) {
    extra = 2, min = 0x800, code = c & 0x0f;
  } else if ((c & 0xf8) == 0xf0) {
    extra = 3, min = 0x10000, code = c & 0x07;
  } else {
    return 0;
  }
  if (end - p <= extra) return 0;
  for (int i = 1; i <= extra; ++i) {
    if ((p[i] & 0xc0) != 0x80) return 0;
    code = (code << 6) | (p[i] & 0x3f);
  }
  if (code < min || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
    return 0;
  }
  return extra + 1;
}

// A small JSON checker (RFC 8259, nesting at most kMaxJsonDepth) that also
// tells what the canonical form of an audit line never holds: position `i_`
// advances over one value.
class JsonChecker {
 public:
  explicit JsonChecker(absl::string_view text) : text_(text) {}

  bool WholeValue() {
    SkipSpace();
    if (!Value(0)) return false;
    SkipSpace();
    return i_ == text_.size();
  }

  // After WholeValue(): a string held bytes that are not UTF-8 (RFC 8259
  // text is UTF-8; the canonical form copies strings as they are, so such a
  // line was never written by the auditor).
  bool bad_utf8() const { return bad_utf8_; }
  // A string used an escape the canonical form never writes (\/, \u0041,
  // \ud800, \u000a for \n, upper-case hex digits).
  bool non_canonical_escape() const { return non_canonical_escape_; }

 private:
  void SkipSpace() {
    while (i_ < text_.size() && (text_[i_] == ' ' || text_[i_] == '\t' ||
                                 text_[i_] == '\n' || text_[i_] == '\r')) {
      ++i_;
    }
  }
  bool Literal(absl::string_view word) {
    if (text_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }
  bool Digits() {
    size_t start = i_;
    while (i_ < text_.size() && text_[i_] >= '0' && text_[i_] <= '9') ++i_;
    return i_ > start;
  }
  bool Number() {
    if (i_ < text_.size() && text_[i_] == '-') ++i_;
    if (i_ < text_.size() && text_[i_] == '0') {
      ++i_;
    } else if (!Digits()) {
      return false;
    }
    if (i_ < text_.size() && text_[i_] == '.') {
      ++i_;
      if (!Digits()) return false;
    }
    if (i_ < text_.size() && (text_[i_] == 'e' || text_[i_] == 'E')) {
      ++i_;
      if (i_ < text_.size() && (text_[i_] == '+' || text_[i_] == '-')) ++i_;
      if (!Digits()) return false;
    }
    return true;
  }
  static bool IsHex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
           (c >= 'A' && c <= 'F');
  }
  bool String() {
    if (i_ >= text_.size() || text_[i_] != '"') return false;
    ++i_;
    while (i_ < text_.size()) {
      unsigned char c = static_cast<unsigned char>(text_[i_]);
      if (c == '"') {
        ++i_;
        return true;
      }
      if (c < 0x20) return false;
      if (c >= 0x80) {
        const unsigned char* p =
            reinterpret_cast<const unsigned char*>(text_.data()) + i_;
        int length = Utf8SequenceLength(
            p, reinterpret_cast<const unsigned char*>(text_.data()) +
                   text_.size());
        if (length == 0) {
          bad_utf8_ = true;
          length = 1;
        }
        i_ += length;
        continue;
      }
      if (c == '\\') {
        if (++i_ >= text_.size()) return false;
        char e = text_[i_];
        if (e == 'u') {
          if (i_ + 4 >= text_.size()) return false;
          for (int k = 1; k <= 4; ++k) {
            if (!IsHex(text_[i_ + k])) return false;
          }
          // The canonical form escapes only U+0000..U+001F this way, in
          // lower-case hex, and those with a short escape by it.
          absl::string_view hex = text_.substr(i_ + 1, 4);
          if (hex.substr(0, 2) != "00" || (hex[2] != '0' && hex[2] != '1') ||
              (hex[3] >= 'A' && hex[3] <= 'F') || hex == "0008" ||
              hex == "0009" || hex == "000a" || hex == "000c" ||
              hex == "000d") {
            non_canonical_escape_ = true;
          }
          i_ += 4;
        } else if (e == '/') {
          non_canonical_escape_ = true;
        } else if (e != '"' && e != '\\' && e != 'b' && e != 'f' &&
                   e != 'n' && e != 'r' && e != 't') {
          return false;
        }
      }
      ++i_;
    }
    return false;
  }
  bool Value(int depth) {
    if (depth > kMaxJsonDepth || i_ >= text_.size()) return false;
    switch (text_[i_]) {
      case '{': {
        ++i_;
        SkipSpace();
        if (i_ < text_.size() && text_[i_] == '}') {
          ++i_;
          return true;
        }
        for (;;) {
          SkipSpace();
          if (!String()) return false;
          SkipSpace();
          if (i_ >= text_.size() || text_[i_] != ':') return false;
          ++i_;
          SkipSpace();
          if (!Value(depth + 1)) return false;
          SkipSpace();
          if (i_ >= text_.size()) return false;
          if (text_[i_] == '}') {
            ++i_;
            return true;
          }
          if (text_[i_] != ',') return false;
          ++i_;
        }
      }
      case '[': {
        ++i_;
        SkipSpace();
        if (i_ < text_.size() && text_[i_] == ']') {
          ++i_;
          return true;
        }
        for (;;) {
          SkipSpace();
          if (!Value(depth + 1)) return false;
          SkipSpace();
          if (i_ >= text_.size()) return false;
          if (text_[i_] == ']') {
            ++i_;
            return true;
          }
          if (text_[i_] != ',') return false;
          ++i_;
        }
      }
      case '"':
        return String();
      case 't':
        return Literal("true");
      case 'f':
        return Literal("false");
      case 'n':
        return Literal("null");
      default:
        return Number();
    }
  }

  absl::string_view text_;
  size_t i_ = 0;
  bool bad_utf8_ = false;
  bool non_canonical_escape_ = false;
};

}  // namespace garuda

#endif  // GARUDA_LIB_AUDIT_JSON_CHECK_H_
