#include "lib/base/json_syntax.h"

#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace garuda {
namespace {

// The position in the text and the messages that name it: what
// SyntaxChecker's grammar reads through.
class JsonScanner {
 protected:
  explicit JsonScanner(absl::string_view text) : text_(text) {}

  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }

  void SkipSpace() {
    while (!AtEnd() && (Peek() == ' ' || Peek() == '\t' || Peek() == '\n' ||
                        Peek() == '\r')) {
      ++pos_;
    }
  }

  // What stands at the current position, for messages: the character in
  // quotes when it is printable ASCII, else its byte value (a message must
  // never carry a control character to the terminal).
  std::string Found() const {
    if (AtEnd()) return "the end of the file";
    unsigned char c = static_cast<unsigned char>(Peek());
    if (c >= 0x20 && c < 0x7f) return absl::StrCat("'", std::string(1, c), "'");
    return absl::StrFormat("the byte 0x%02x", c);
  }

  // Line and column of the current position (columns count characters, so
  // a multi-byte UTF-8 character is one column).
  absl::Status Error(absl::string_view what) {
    int line = 1, column = 1;
    for (size_t i = 0; i < pos_ && i < text_.size(); ++i) {
      unsigned char c = static_cast<unsigned char>(text_[i]);
      if (c == '\n') {
        ++line;
        column = 1;
      } else if ((c & 0xC0) != 0x80) {
        ++column;
      }
    }
    error_ = absl::InvalidArgumentError(absl::StrCat(line, ":", column, ": ", what));
    return error_;
  }

  bool Fail(absl::string_view what) {
    Error(what);
    return false;
  }

  absl::string_view text_;
  size_t pos_ = 0;
  absl::Status error_;
};

class SyntaxChecker : private JsonScanner {
 public:
  explicit SyntaxChecker(absl::string_view text) : JsonScanner(text) {}

  absl::Status Check(bool object_only) {
    SkipSpace();
    if (AtEnd()) return Error("expected a JSON value, found the end of the file");
    if (object_only && Peek() != '{') {
      return Error(absl::StrCat("expected a JSON object ('{' ... '}'), found ", Found()));
    }
    if (!Value(0)) return error_;
    SkipSpace();
    if (!AtEnd()) {
      return Error(absl::StrCat("expected the end of the file after the value, found ",
                                Found()));
    }
    return absl::OkStatus();
  }

 private:
  bool Value(int depth) {
    switch (Peek()) {
      case '{':
        return Object(depth + 1);
      case '[':
        return List(depth + 1);
      case '"': {
        std::string ignored;
        return String(&ignored);
      }
      case 't':
        return Word("true");
      case 'f':
        return Word("false");
      case 'n':
        return Word("null");
      default:
        if (Peek() == '-' || (Peek() >= '0' && Peek() <= '9')) return Number();
        if (Peek() == '\'') {
          return Fail("strings and field names are written in double quotes, not single ones");
        }
        return Fail(absl::StrCat(
            "expected a value (an object, a list, a string in double quotes, a number, true, "
            "false or null), found ",
            Found()));
    }
  }

  bool Word(absl::string_view word) {
    if (text_.substr(pos_, word.size()) != word) {
      return Fail(absl::StrCat("expected a value, found ", Found()));
    }
    pos_ += word.size();
    return true;
  }

  bool Digits() {
    size_t start = pos_;
    while (Peek() >= '0' && Peek() <= '9') ++pos_;
    return pos_ > start;
  }

  bool Number() {
    if (Peek() == '-') ++pos_;
    if (Peek() == '0') {
      ++pos_;
      if (Peek() >= '0' && Peek() <= '9') {
        return Fail("a number may not start with 0 (write 7, not 07)");
      }
    } else if (!Digits()) {
      return Fail(absl::StrCat("expected a digit, found ", Found()));
    }
    if (Peek() == '.') {
      ++pos_;
      if (!Digits()) return Fail(absl::StrCat("expected a digit after '.', found ", Found()));
    }
    if (Peek() == 'e' || Peek() == 'E') {
      ++pos_;
      if (Peek() == '+' || Peek() == '-') ++pos_;
      if (!Digits()) {
        return Fail(absl::StrCat("expected a digit in the exponent, found ", Found()));
      }
    }
    return true;
  }

  static int HexValue(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  // One UTF-8 sequence starting at pos_ (its first byte >= 0x80), checked
  // as RFC 3629 has it: no overlong forms, no surrogates, at most U+10FFFF.
  bool Utf8Sequence(std::string* out) {
    unsigned char lead = static_cast<unsigned char>(Peek());
    int length;
    unsigned char low = 0x80, high = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      if (lead == 0xE0) low = 0xA0;
      if (lead == 0xED) high = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      if (lead == 0xF0) low = 0x90;
      if (lead == 0xF4) high = 0x8F;
    } else {
      return Fail(absl::StrCat("invalid UTF-8: ", Found(), " cannot start a character"));
    }
    for (int i = 1; i < length; ++i) {
      size_t at = pos_ + i;
      unsigned char c = at < text_.size() ? static_cast<unsigned char>(text_[at]) : 0;
      unsigned char min = i == 1 ? low : 0x80, max = i == 1 ? high : 0xBF;
      if (c < min || c > max) {
        return Fail(absl::StrCat("invalid UTF-8: ", Found(), " is not followed by a whole character"));
      }
    }
    out->append(text_.data() + pos_, length);
    pos_ += length;
    return true;
  }

  // A string; its text (escapes kept as written) goes to `out`, for the
  // duplicate-key check.
  bool String(std::string* out) {
    ++pos_;  // the opening quote
    while (true) {
      if (AtEnd()) return Fail("a string is not closed (a '\"' is missing)");
      unsigned char c = static_cast<unsigned char>(Peek());
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c < 0x20) {
        return Fail(absl::StrCat("a string may not hold ", Found(),
                                 " (write a line break as \\n, a tab as \\t)"));
      }
      if (c >= 0x80) {
        if (!Utf8Sequence(out)) return false;
        continue;
      }
      if (c == '\\') {
        ++pos_;
        char escape = Peek();
        if (escape == 'u') {
          for (int i = 1; i <= 4; ++i) {
            size_t at = pos_ + i;
            if (at >= text_.size() || HexValue(text_[at]) < 0) {
              pos_ = at < text_.size() ? at : text_.size();
              return Fail("expected four hexadecimal digits after \\u");
            }
          }
          out->append(text_.data() + pos_ - 1, 6);
          pos_ += 5;
          continue;
        }
        if (std::string("\"\\/bfnrt").find(escape) == std::string::npos || AtEnd()) {
          return Fail(absl::StrCat("unknown escape \\", AtEnd() ? "" : std::string(1, escape),
                                   " (JSON knows \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)"));
        }
        out->push_back('\\');
        out->push_back(escape);
        ++pos_;
        continue;
      }
      out->push_back(static_cast<char>(c));
      ++pos_;
    }
  }

  bool TooDeep(int depth) {
    if (depth <= kJsonMaxDepth) return false;
    Fail(absl::StrCat("objects and lists nest deeper than ", kJsonMaxDepth, " levels"));
    return true;
  }

  bool Object(int depth) {
    if (TooDeep(depth)) return false;
    ++pos_;  // '{'
    std::set<std::string> keys;
    SkipSpace();
    if (Peek() == '}') {
      ++pos_;
      return true;
    }
    while (true) {
      if (Peek() != '"') {
        if (Peek() == '}') {
          return Fail("expected a field name after ',', found '}' (a trailing comma is not allowed)");
        }
        return Fail(absl::StrCat("expected a field name in double quotes, found ", Found()));
      }
      size_t key_at = pos_;
      std::string key;
      if (!String(&key)) return false;
      if (!keys.insert(key).second) {
        pos_ = key_at;
        return Fail(absl::StrCat("the field \"", key, "\" appears twice in this object"));
      }
      SkipSpace();
      if (Peek() != ':') {
        return Fail(absl::StrCat("expected ':' after the field name \"", key, "\", found ", Found()));
      }
      ++pos_;
      SkipSpace();
      if (!Value(depth)) return false;
      SkipSpace();
      if (Peek() == '}') {
        ++pos_;
        return true;
      }
      if (Peek() != ',') {
        return Fail(absl::StrCat("expected ',' or '}' after the value of \"", key, "\", found ",
                                 Found()));
      }
      ++pos_;
      SkipSpace();
    }
  }

  bool List(int depth) {
    if (TooDeep(depth)) return false;
    ++pos_;  // '['
    SkipSpace();
    if (Peek() == ']') {
      ++pos_;
      return true;
    }
    while (true) {
      if (Peek() == ']') {
        return Fail("expected a value after ',', found ']' (a trailing comma is not allowed)");
      }
      if (!Value(depth)) return false;
      SkipSpace();
      if (Peek() == ']') {
        ++pos_;
        return true;
      }
      if (Peek() != ',') {
        return Fail(absl::StrCat("expected ',' or ']' after a list element, found ", Found()));
      }
      ++pos_;
      SkipSpace();
    }
  }
};

}  // namespace

std::string JsonQuoted(absl::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += absl::StrFormat("\\u%04x", c);
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out += "\"";
  return out;
}

absl::Status CheckJsonSyntax(absl::string_view text) {
  return SyntaxChecker(text).Check(/*object_only=*/false);
}

absl::Status CheckJsonObjectSyntax(absl::string_view text) {
  return SyntaxChecker(text).Check(/*object_only=*/true);
}

}  // namespace garuda
