#include "lib/audit/event_json.h"

#include <charconv>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"

namespace garuda {
namespace {

using google::protobuf::Value;

constexpr int kMaxDepth = 60;

class EventReader {
 public:
  explicit EventReader(absl::string_view text) : text_(text) {}

  absl::Status Read(audit::AuditEvent* event) {
    event->Clear();
    SkipSpace();
    if (!Consume('{')) return Malformed("expected '{'");
    SkipSpace();
    bool seen[6] = {};
    if (!Consume('}')) {
      for (;;) {
        SkipSpace();
        std::string key;
        if (!String(&key)) return Malformed("expected a field name");
        SkipSpace();
        if (!Consume(':')) return Malformed("expected ':'");
        SkipSpace();
        absl::Status status = Member(key, seen, event);
        if (!status.ok()) return status;
        SkipSpace();
        if (Consume('}')) break;
        if (!Consume(',')) return Malformed("expected ',' or '}'");
      }
    }
    SkipSpace();
    if (i_ != text_.size()) return Malformed("text after the object");
    return absl::OkStatus();
  }

 private:
  absl::Status Malformed(absl::string_view what) const {
    if (error_[0] != '\0') what = error_;
    return absl::InvalidArgumentError(
        absl::StrCat("not a JSON object: ", what, " at byte ", i_ + 1));
  }

  static const char* KindName(char c) {
    switch (c) {
      case '"':
        return "a string";
      case '{':
        return "an object";
      case '[':
        return "a list";
      case 't':
      case 'f':
        return "true or false";
      default:
        return "a number";
    }
  }

  absl::Status Member(const std::string& key, bool* seen,
                      audit::AuditEvent* event) {
    static const char* const kNames[] = {"kind",     "tool",   "target",
                                         "decision", "reason", "fields"};
    int index = -1;
    for (int k = 0; k < 6; ++k) {
      if (key == kNames[k]) index = k;
    }
    if (index < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown field \"", key, "\""));
    }
    if (seen[index]) {
      return absl::InvalidArgumentError(
          absl::StrCat("field \"", key, "\" appears twice"));
    }
    seen[index] = true;
    if (Literal("null")) return absl::OkStatus();
    if (i_ >= text_.size()) return Malformed("expected a value");
    char first = text_[i_];
    if (index == 5) {
      if (first != '{') {
        return absl::InvalidArgumentError(absl::StrCat(
            "field \"fields\" must be an object, not ", KindName(first)));
      }
      Value value;
      if (!ParseValue(&value, 1)) return Malformed("bad value");
      *event->mutable_fields() = std::move(*value.mutable_struct_value());
      return absl::OkStatus();
    }
    if (first != '"') {
      if (!ParseValue(nullptr, 1)) return Malformed("bad value");
      return absl::InvalidArgumentError(absl::StrCat(
          "field \"", key, "\" must be a string, not ", KindName(first)));
    }
    std::string* out = nullptr;
    switch (index) {
      case 0:
        out = event->mutable_kind();
        break;
      case 1:
        out = event->mutable_tool();
        break;
      case 2:
        out = event->mutable_target();
        break;
      case 3:
        out = event->mutable_decision();
        break;
      default:
        out = event->mutable_reason();
    }
    if (!String(out)) return Malformed("bad string");
    return absl::OkStatus();
  }

  void SkipSpace() {
    while (i_ < text_.size() && (text_[i_] == ' ' || text_[i_] == '\t' ||
                                 text_[i_] == '\n' || text_[i_] == '\r')) {
      ++i_;
    }
  }
  bool Consume(char c) {
    if (i_ < text_.size() && text_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool Literal(absl::string_view word) {
    if (text_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }
  static int HexValue(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  bool Hex4(uint32_t* code) {
    if (i_ + 4 > text_.size()) return false;
    *code = 0;
    for (int k = 0; k < 4; ++k) {
      int digit = HexValue(text_[i_ + k]);
      if (digit < 0) return false;
      *code = *code * 16 + digit;
    }
    i_ += 4;
    return true;
  }
  static void AppendUtf8(uint32_t code, std::string* out) {
    if (code < 0x80) {
      out->push_back(static_cast<char>(code));
    } else if (code < 0x800) {
      out->push_back(static_cast<char>(0xc0 | (code >> 6)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3f)));
    } else if (code < 0x10000) {
      out->push_back(static_cast<char>(0xe0 | (code >> 12)));
      out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3f)));
    } else {
      out->push_back(static_cast<char>(0xf0 | (code >> 18)));
      out->push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3f)));
      out->push_back(static_cast<char>(0x80 | (code & 0x3f)));
    }
  }
  // A JSON string into `out` (which may be null to skip it).
  bool String(std::string* out) {
    std::string skipped;
    if (out == nullptr) out = &skipped;
    out->clear();
    if (!Consume('"')) return false;
    size_t start = i_;
    while (i_ < text_.size()) {
      unsigned char c = static_cast<unsigned char>(text_[i_]);
      if (c == '"') {
        out->append(text_.data() + start, i_ - start);
        ++i_;
        return true;
      }
      if (c < 0x20) {
        error_ = "a control character in a string";
        return false;
      }
      if (c != '\\') {
        ++i_;
        continue;
      }
      out->append(text_.data() + start, i_ - start);
      if (++i_ >= text_.size()) return false;
      char escape = text_[i_++];
      switch (escape) {
        case '"':
        case '\\':
        case '/':
          out->push_back(escape);
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          uint32_t code;
          if (!Hex4(&code)) return false;
          if (code >= 0xd800 && code <= 0xdbff) {
            uint32_t low;
            if (!Literal("\\u") || !Hex4(&low) || low < 0xdc00 ||
                low > 0xdfff) {
              error_ = "a lone UTF-16 surrogate";
              return false;
            }
            code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
          } else if (code >= 0xdc00 && code <= 0xdfff) {
            error_ = "a lone UTF-16 surrogate";
            return false;
          }
          AppendUtf8(code, out);
          break;
        }
        default:
          return false;
      }
      start = i_;
    }
    return false;
  }
  bool Number(double* out) {
    size_t start = i_;
    auto digits = [&] {
      size_t from = i_;
      while (i_ < text_.size() && text_[i_] >= '0' && text_[i_] <= '9') ++i_;
      return i_ > from;
    };
    Consume('-');
    if (!Consume('0') && !digits()) return false;
    if (Consume('.') && !digits()) return false;
    if (i_ < text_.size() && (text_[i_] == 'e' || text_[i_] == 'E')) {
      ++i_;
      if (!Consume('+')) Consume('-');
      if (!digits()) return false;
    }
    double value = 0;
    std::from_chars_result result =
        std::from_chars(text_.data() + start, text_.data() + i_, value);
    if (result.ptr != text_.data() + i_ || !std::isfinite(value)) {
      error_ = "a number out of range";
      return false;
    }
    *out = value;
    return true;
  }
  // One value into `out` (null: check and skip).
  bool ParseValue(Value* out, int depth) {
    Value skipped;
    if (out == nullptr) out = &skipped;
    if (depth > kMaxDepth) {
      error_ = "nesting too deep";
      return false;
    }
    if (i_ >= text_.size()) return false;
    switch (text_[i_]) {
      case '{': {
        ++i_;
        auto* fields = out->mutable_struct_value()->mutable_fields();
        SkipSpace();
        if (Consume('}')) return true;
        for (;;) {
          SkipSpace();
          std::string key;
          if (!String(&key)) return false;
          SkipSpace();
          if (!Consume(':')) return false;
          SkipSpace();
          if (!ParseValue(&(*fields)[key], depth + 1)) return false;
          SkipSpace();
          if (Consume('}')) return true;
          if (!Consume(',')) return false;
        }
      }
      case '[': {
        ++i_;
        auto* list = out->mutable_list_value();
        SkipSpace();
        if (Consume(']')) return true;
        for (;;) {
          SkipSpace();
          if (!ParseValue(list->add_values(), depth + 1)) return false;
          SkipSpace();
          if (Consume(']')) return true;
          if (!Consume(',')) return false;
        }
      }
      case '"':
        return String(out->mutable_string_value());
      case 't':
        if (!Literal("true")) return false;
        out->set_bool_value(true);
        return true;
      case 'f':
        if (!Literal("false")) return false;
        out->set_bool_value(false);
        return true;
      case 'n':
        if (!Literal("null")) return false;
        out->set_null_value(google::protobuf::NULL_VALUE);
        return true;
      default: {
        double number;
        if (!Number(&number)) return false;
        out->set_number_value(number);
        return true;
      }
    }
  }

  absl::string_view text_;
  size_t i_ = 0;
  const char* error_ = "";
};

}  // namespace

absl::Status ParseEventJson(absl::string_view json, audit::AuditEvent* event) {
  return EventReader(json).Read(event);
}

}  // namespace garuda
