#include "lib/provider/json.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "lib/budget/limits.h"

namespace garuda {
namespace provider {

absl::StatusOr<Value> ParseJson(absl::string_view text,
                                absl::string_view what) {
  Value value;
  google::protobuf::util::JsonParseOptions options;
  auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(text.data(), text.size()), &value, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, " is not valid JSON: ",
        absl::string_view(status.message().data(), status.message().size())));
  }
  return value;
}

std::string ToJson(const Value& value) {
  std::string out;
  // Cannot fail: every string in a Value we built went through ValidUtf8.
  (void)google::protobuf::util::MessageToJsonString(value, &out);
  return out;
}

namespace {

// The length of the valid UTF-8 sequence at the start of `s`, or 0.
size_t Utf8SequenceLength(absl::string_view s) {
  const unsigned char c = static_cast<unsigned char>(s[0]);
  if (c < 0x80) return 1;
  size_t length;
  uint32_t code;
  if ((c & 0xE0) == 0xC0) {
    length = 2;
    code = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    length = 3;
    code = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    length = 4;
    code = c & 0x07;
  } else {
    return 0;
  }
  if (s.size() < length) return 0;
  for (size_t i = 1; i < length; ++i) {
    const unsigned char next = static_cast<unsigned char>(s[i]);
    if ((next & 0xC0) != 0x80) return 0;
    code = (code << 6) | (next & 0x3F);
  }
  // Overlong forms, surrogates and values past U+10FFFF are invalid.
  static constexpr uint32_t kMinimum[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (code < kMinimum[length] || code > 0x10FFFF ||
      (code >= 0xD800 && code <= 0xDFFF)) {
    return 0;
  }
  return length;
}

}  // namespace

std::string ValidUtf8(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const size_t length = Utf8SequenceLength(text);
    if (length == 0) {
      out.append("\xEF\xBF\xBD");
      text.remove_prefix(1);
    } else {
      out.append(text.data(), length);
      text.remove_prefix(length);
    }
  }
  return out;
}

Value JsonString(absl::string_view text) {
  Value value;
  value.set_string_value(ValidUtf8(text));
  return value;
}

Value JsonNumber(double number) {
  Value value;
  value.set_number_value(number);
  return value;
}

Value JsonBool(bool b) {
  Value value;
  value.set_bool_value(b);
  return value;
}

Value JsonNull() {
  Value value;
  value.set_null_value(google::protobuf::NULL_VALUE);
  return value;
}

Value JsonObject() {
  Value value;
  value.mutable_struct_value();
  return value;
}

Value JsonList() {
  Value value;
  value.mutable_list_value();
  return value;
}

Value* Set(Value* object, absl::string_view name, Value member) {
  Value& slot =
      (*object->mutable_struct_value()->mutable_fields())[std::string(name)];
  slot = std::move(member);
  return &slot;
}

Value* Append(Value* list, Value element) {
  Value* slot = list->mutable_list_value()->add_values();
  *slot = std::move(element);
  return slot;
}

const Value* Member(const Value& object, absl::string_view name) {
  if (!object.has_struct_value()) return nullptr;
  const auto& fields = object.struct_value().fields();
  auto it = fields.find(std::string(name));
  return it == fields.end() ? nullptr : &it->second;
}

const Value* ObjectMember(const Value& object, absl::string_view name) {
  const Value* member = Member(object, name);
  return member != nullptr && member->has_struct_value() ? member : nullptr;
}

const google::protobuf::ListValue* ListMember(const Value& object,
                                              absl::string_view name) {
  const Value* member = Member(object, name);
  return member != nullptr && member->has_list_value() ? &member->list_value()
                                                       : nullptr;
}

std::string StringMember(const Value& object, absl::string_view name) {
  const Value* member = Member(object, name);
  return member != nullptr && member->kind_case() == Value::kStringValue
             ? member->string_value()
             : std::string();
}

bool HasStringMember(const Value& object, absl::string_view name) {
  const Value* member = Member(object, name);
  return member != nullptr && member->kind_case() == Value::kStringValue;
}

std::optional<int64_t> TokenCountMember(const Value& object,
                                        absl::string_view name) {
  const Value* member = Member(object, name);
  if (member == nullptr || member->kind_case() != Value::kNumberValue) {
    return std::nullopt;
  }
  const double number = member->number_value();
  if (!(number >= 0) || number > static_cast<double>(budget::kMaxTokens) ||
      std::floor(number) != number) {
    return std::nullopt;
  }
  return static_cast<int64_t>(number);
}

}  // namespace provider
}  // namespace garuda
