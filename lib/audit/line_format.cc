#include "lib/audit/line_format.h"

#include <charconv>
#include <climits>
#include <cmath>
#include <map>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "lib/audit/json_check.h"
#include "lib/base/sha256.h"

namespace garuda {
namespace {

using google::protobuf::ListValue;
using google::protobuf::Struct;
using google::protobuf::Value;

constexpr absl::string_view kHashMember = ",\"hash\":\"";
// `,"hash":"` + 64 hex digits + `"}`
constexpr size_t kSuffixSize = 9 + 64 + 2;
constexpr int kMaxDepth = kMaxJsonDepth;

// Well-formed UTF-8 (no overlong forms, no surrogates, at most U+10FFFF).
bool IsUtf8(absl::string_view text) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(text.data());
  const unsigned char* end = p + text.size();
  while (p < end) {
    if (*p < 0x80) {
      ++p;
      continue;
    }
    int length = Utf8SequenceLength(p, end);
    if (length == 0) return false;
    p += length;
  }
  return true;
}

absl::Status CheckValueUtf8(const Value& value, const std::string& path,
                            int depth);

absl::Status CheckStructUtf8(const Struct& object, const std::string& path,
                             int depth) {
  if (depth > kMaxDepth - 4) {
    return absl::InvalidArgumentError(absl::StrCat(
        "field \"", path, "\" nests deeper than ", kMaxDepth - 4, " levels"));
  }
  for (const auto& [key, value] : object.fields()) {
    std::string field_path = absl::StrCat(path, ".", key);
    if (!IsUtf8(key)) {
      return absl::InvalidArgumentError(
          absl::StrCat("a key in \"", path, "\" is not valid UTF-8"));
    }
    absl::Status status = CheckValueUtf8(value, field_path, depth + 1);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::Status CheckValueUtf8(const Value& value, const std::string& path,
                            int depth) {
  switch (value.kind_case()) {
    case Value::kStringValue:
      if (!IsUtf8(value.string_value())) {
        return absl::InvalidArgumentError(
            absl::StrCat("field \"", path, "\" is not valid UTF-8"));
      }
      return absl::OkStatus();
    case Value::kNumberValue:
      if (!std::isfinite(value.number_value())) {
        return absl::InvalidArgumentError(
            absl::StrCat("field \"", path, "\" is not a finite number"));
      }
      return absl::OkStatus();
    case Value::kStructValue:
      return CheckStructUtf8(value.struct_value(), path, depth + 1);
    case Value::kListValue: {
      int index = 0;
      for (const Value& element : value.list_value().values()) {
        absl::Status status = CheckValueUtf8(
            element, absl::StrCat(path, "[", index++, "]"), depth + 1);
        if (!status.ok()) return status;
      }
      return absl::OkStatus();
    }
    default:
      return absl::OkStatus();
  }
}

}  // namespace

void AppendJsonString(absl::string_view text, std::string* out) {
  static const char kHex[] = "0123456789abcdef";
  out->push_back('"');
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out->append(text.data() + start, i - start);
    start = i + 1;
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        out->append("\\u00");
        out->push_back(kHex[c >> 4]);
        out->push_back(kHex[c & 0xf]);
    }
  }
  out->append(text.data() + start, text.size() - start);
  out->push_back('"');
}

namespace {

void AppendNumber(double number, std::string* out) {
  // Whole numbers up to 2^53 as integers; anything else in the shortest
  // form that reads back to the same double.
  if (number == std::floor(number) && std::fabs(number) <= 9007199254740992.0) {
    if (number == 0) number = 0;  // -0 is written 0
    absl::StrAppend(out, static_cast<int64_t>(number));
    return;
  }
  char buffer[64];
  std::to_chars_result result =
      std::to_chars(buffer, buffer + sizeof(buffer), number);
  out->append(buffer, result.ptr - buffer);
}

void AppendValue(const Value& value, std::string* out);

void AppendStruct(const Struct& object, std::string* out) {
  // protobuf maps have no order; the canonical form sorts keys by bytes.
  std::map<absl::string_view, const Value*> sorted;
  for (const auto& [key, value] : object.fields()) sorted[key] = &value;
  out->push_back('{');
  bool first = true;
  for (const auto& [key, value] : sorted) {
    if (!first) out->push_back(',');
    first = false;
    AppendJsonString(key, out);
    out->push_back(':');
    AppendValue(*value, out);
  }
  out->push_back('}');
}

void AppendValue(const Value& value, std::string* out) {
  switch (value.kind_case()) {
    case Value::kBoolValue:
      out->append(value.bool_value() ? "true" : "false");
      return;
    case Value::kNumberValue:
      AppendNumber(value.number_value(), out);
      return;
    case Value::kStringValue:
      AppendJsonString(value.string_value(), out);
      return;
    case Value::kStructValue:
      AppendStruct(value.struct_value(), out);
      return;
    case Value::kListValue: {
      out->push_back('[');
      bool first = true;
      for (const Value& element : value.list_value().values()) {
        if (!first) out->push_back(',');
        first = false;
        AppendValue(element, out);
      }
      out->push_back(']');
      return;
    }
    default:
      out->append("null");
  }
}


// Reads a decimal number without sign or leading zeros at `*i`.
bool ReadUnsigned(absl::string_view text, size_t* i, uint64_t* value) {
  size_t start = *i;
  uint64_t result = 0;
  while (*i < text.size() && text[*i] >= '0' && text[*i] <= '9') {
    uint64_t digit = text[*i] - '0';
    if (result > (UINT64_MAX - digit) / 10) return false;
    result = result * 10 + digit;
    ++*i;
  }
  if (*i == start || (text[start] == '0' && *i - start > 1)) return false;
  *value = result;
  return true;
}

bool Expect(absl::string_view text, size_t* i, absl::string_view literal) {
  if (text.substr(*i, literal.size()) != literal) return false;
  *i += literal.size();
  return true;
}

}  // namespace

absl::Status ValidateEvent(const audit::AuditEvent& event) {
  if (event.kind().empty()) {
    return absl::InvalidArgumentError("field \"kind\" is required");
  }
  const std::pair<const char*, const std::string*> strings[] = {
      {"kind", &event.kind()},     {"tool", &event.tool()},
      {"target", &event.target()}, {"decision", &event.decision()},
      {"reason", &event.reason()},
  };
  for (const auto& [name, value] : strings) {
    if (!IsUtf8(*value)) {
      return absl::InvalidArgumentError(
          absl::StrCat("field \"", name, "\" is not valid UTF-8"));
    }
  }
  absl::Status status = CheckStructUtf8(event.fields(), "fields", 0);
  if (!status.ok()) return status;
  // Room for the rest of the line: about 250 bytes. An escape makes a
  // string byte at most 6 bytes and a number (9 bytes or more in binary)
  // at most 24 characters, so 6 times the binary size bounds the JSON and
  // small events need no trial serialization.
  size_t bound = 512 + 6 * event.fields().ByteSizeLong();
  for (const auto& [name, value] : strings) bound += 6 * value->size() + 16;
  if (bound <= kMaxAuditLineBytes) return absl::OkStatus();
  std::string canonical;
  AppendCanonicalEvent(event, &canonical);
  if (canonical.size() + 512 > kMaxAuditLineBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "event of ", canonical.size(), " bytes is over the limit of ",
        kMaxAuditLineBytes - 512, " bytes"));
  }
  return absl::OkStatus();
}

void AppendCanonicalEvent(const audit::AuditEvent& event, std::string* out) {
  out->append("{\"kind\":");
  AppendJsonString(event.kind(), out);
  out->append(",\"tool\":");
  AppendJsonString(event.tool(), out);
  out->append(",\"target\":");
  AppendJsonString(event.target(), out);
  out->append(",\"decision\":");
  AppendJsonString(event.decision(), out);
  out->append(",\"reason\":");
  AppendJsonString(event.reason(), out);
  if (event.has_fields() && event.fields().fields_size() > 0) {
    out->append(",\"fields\":");
    AppendStruct(event.fields(), out);
  }
  out->push_back('}');
}

std::string GenesisHash(absl::string_view log_name) {
  Sha256 sha;
  sha.Update("garuda audit genesis v1\n").Update(log_name);
  return HexDigest(sha.Finish());
}

std::string FormatAuditTime(absl::Time time) {
  // absl::FormatTime costs more than the rest of a line; the part up to the
  // seconds changes once a second.
  static thread_local int64_t cached_second = INT64_MIN;
  static thread_local std::string cached_prefix;
  const int64_t micros = absl::ToUnixMicros(time);
  int64_t second = micros / 1000000;
  int64_t fraction = micros % 1000000;
  if (fraction < 0) {
    fraction += 1000000;
    second -= 1;
  }
  if (second != cached_second) {
    cached_second = second;
    cached_prefix =
        absl::FormatTime("%Y-%m-%dT%H:%M:%S", absl::FromUnixSeconds(second),
                         absl::UTCTimeZone());
  }
  std::string out = cached_prefix;
  char digits[8] = {'.', 0, 0, 0, 0, 0, 0, 'Z'};
  for (int k = 6; k >= 1; --k) {
    digits[k] = static_cast<char>('0' + fraction % 10);
    fraction /= 10;
  }
  out.append(digits, sizeof(digits));
  return out;
}

std::string AppendAuditLine(uint64_t seq, absl::Time time,
                            absl::string_view prev,
                            const audit::AuditEvent& event, std::string* out) {
  size_t start = out->size();
  absl::StrAppend(out, "{\"v\":", kAuditFormatVersion, ",\"seq\":", seq,
                  ",\"time\":\"", FormatAuditTime(time), "\",\"prev\":\"", prev,
                  "\",\"event\":");
  AppendCanonicalEvent(event, out);
  out->push_back('}');
  Sha256 sha;
  sha.Update(absl::string_view(*out).substr(start));
  std::string hash = HexDigest(sha.Finish());
  out->pop_back();
  absl::StrAppend(out, kHashMember, hash, "\"}\n");
  return hash;
}

bool IsJsonValue(absl::string_view text) {
  return JsonChecker(text).WholeValue();
}

ParsedLine ParseAuditLine(absl::string_view line) {
  ParsedLine parsed;
  auto not_canonical = [&](ParsedLine::Kind if_json) {
    parsed.kind = IsJsonValue(line) ? if_json : ParsedLine::Kind::kNotJson;
    return parsed;
  };
  size_t i = 0;
  uint64_t version = 0;
  if (!Expect(line, &i, "{\"v\":") || !ReadUnsigned(line, &i, &version)) {
    return not_canonical(ParsedLine::Kind::kBadLayout);
  }
  parsed.version = version > 1000000 ? 1000000 : static_cast<int>(version);
  if (version != kAuditFormatVersion) {
    return not_canonical(ParsedLine::Kind::kUnknownVersion);
  }
  if (!Expect(line, &i, ",\"seq\":") || !ReadUnsigned(line, &i, &parsed.seq) ||
      !Expect(line, &i, ",\"time\":\"")) {
    return not_canonical(ParsedLine::Kind::kBadLayout);
  }
  // Only what FormatAuditTime writes: digits, '-', ':', 'T', '.', 'Z'.
  while (i < line.size() && ((line[i] >= '0' && line[i] <= '9') ||
                             line[i] == '-' || line[i] == ':' ||
                             line[i] == 'T' || line[i] == '.' ||
                             line[i] == 'Z')) {
    ++i;
  }
  if (!Expect(line, &i, "\",\"prev\":\"")) {
    return not_canonical(ParsedLine::Kind::kBadLayout);
  }
  parsed.prev = line.substr(i, 64);
  i += 64;
  if (!IsHexDigest(parsed.prev) || !Expect(line, &i, "\",\"event\":")) {
    return not_canonical(ParsedLine::Kind::kBadLayout);
  }
  if (line.size() < i + kSuffixSize ||
      line.substr(line.size() - kSuffixSize, kHashMember.size()) !=
          kHashMember ||
      line.substr(line.size() - 2) != "\"}") {
    return not_canonical(ParsedLine::Kind::kBadLayout);
  }
  parsed.hash = line.substr(line.size() - kSuffixSize + kHashMember.size(), 64);
  absl::string_view event = line.substr(i, line.size() - kSuffixSize - i);
  parsed.event = event;
  JsonChecker checker(event);
  if (!checker.WholeValue()) {
    parsed.kind = ParsedLine::Kind::kNotJson;
    return parsed;
  }
  // Before the hash: a recomputed chain over bytes the writer never emits
  // must not verify.
  if (checker.bad_utf8()) {
    parsed.kind = ParsedLine::Kind::kBadUtf8;
    return parsed;
  }
  if (checker.non_canonical_escape()) {
    parsed.kind = ParsedLine::Kind::kBadLayout;
    return parsed;
  }
  if (!IsHexDigest(parsed.hash) || event.substr(0, 9) != "{\"kind\":\"") {
    parsed.kind = ParsedLine::Kind::kBadLayout;
    return parsed;
  }
  // One context per thread, reused line after line.
  static thread_local Sha256 sha;
  sha.Update(line.substr(0, line.size() - kSuffixSize)).Update("}");
  char computed[64];
  HexDigestTo(sha.Finish(), computed);
  parsed.kind = absl::string_view(computed, 64) == parsed.hash
                    ? ParsedLine::Kind::kOk
                    : ParsedLine::Kind::kBadHash;
  return parsed;
}

}  // namespace garuda
