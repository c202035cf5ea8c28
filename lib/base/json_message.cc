#include "lib/base/json_message.h"

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>

#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "lib/base/files.h"
#include "lib/base/json_syntax.h"
#include "lib/base/status_macros.h"
#include "lib/base/visible.h"

namespace garuda {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Value;

constexpr char kSchemaKey[] = "$schema";

std::string ProtobufMessage(const google::protobuf::util::Status& status) {
  return std::string(status.message().data(), status.message().size());
}

const char* KindName(const Value& value) {
  switch (value.kind_case()) {
    case Value::kNullValue:
      return "null";
    case Value::kNumberValue:
      return "a number";
    case Value::kStringValue:
      return "a string";
    case Value::kBoolValue:
      return "true or false";
    case Value::kStructValue:
      return "an object";
    case Value::kListValue:
      return "a list";
    default:
      return "nothing";
  }
}

absl::Status CheckObject(const google::protobuf::Struct& object,
                         const Descriptor& descriptor,
                         const std::string& path);

// A range bound in a message, exact for the 64-bit limits.
std::string FormatLimit(double bound) {
  if (bound >= static_cast<double>(std::numeric_limits<uint64_t>::max())) {
    return absl::StrCat(std::numeric_limits<uint64_t>::max());
  }
  if (bound >= static_cast<double>(std::numeric_limits<int64_t>::max())) {
    return absl::StrCat(std::numeric_limits<int64_t>::max());
  }
  if (bound <= static_cast<double>(std::numeric_limits<int64_t>::min())) {
    return absl::StrCat(std::numeric_limits<int64_t>::min());
  }
  return absl::StrCat(static_cast<int64_t>(bound));
}

// A field by its JSON name (lowerCamelCase) or its proto name.
const FieldDescriptor* FindField(const Descriptor& descriptor,
                                 const std::string& name) {
  for (int i = 0; i < descriptor.field_count(); ++i) {
    const FieldDescriptor* field = descriptor.field(i);
    if (field->json_name() == name || field->name() == name) return field;
  }
  return nullptr;
}

// An integer field: a JSON number that is whole and in the field's range,
// or (for 64-bit fields, which proto3 JSON writes as strings) a string of
// digits in range. Checked here so that protobuf's reader never has to
// refuse it in its own words ("TYPE_UINT64").
absl::Status CheckInteger(const Value& value, const FieldDescriptor& field,
                          const std::string& path) {
  double min = 0, max = 0;
  switch (field.cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      min = std::numeric_limits<int32_t>::min();
      max = std::numeric_limits<int32_t>::max();
      break;
    case FieldDescriptor::CPPTYPE_UINT32:
      max = std::numeric_limits<uint32_t>::max();
      break;
    case FieldDescriptor::CPPTYPE_INT64:
      min = static_cast<double>(std::numeric_limits<int64_t>::min());
      max = static_cast<double>(std::numeric_limits<int64_t>::max());
      break;
    default:
      max = static_cast<double>(std::numeric_limits<uint64_t>::max());
      break;
  }
  const bool is_64_bit = field.cpp_type() == FieldDescriptor::CPPTYPE_INT64 ||
                         field.cpp_type() == FieldDescriptor::CPPTYPE_UINT64;
  const std::string expected =
      min == 0 ? absl::StrCat("a whole number from 0 to ", FormatLimit(max))
               : absl::StrCat("a whole number from ", FormatLimit(min), " to ",
                              FormatLimit(max));
  auto wrong = [&](absl::string_view found) {
    return absl::InvalidArgumentError(absl::StrCat(
        "field \"", path, "\" must be ", expected, ", not ", found));
  };
  if (is_64_bit && value.kind_case() == Value::kStringValue) {
    const std::string& text = value.string_value();
    size_t digits_from = (min < 0 && !text.empty() && text[0] == '-') ? 1 : 0;
    bool all_digits = text.size() > digits_from && text.size() <= 20;
    for (size_t i = digits_from; i < text.size() && all_digits; ++i) {
      all_digits = text[i] >= '0' && text[i] <= '9';
    }
    if (!all_digits) return wrong("a string that is not a whole number");
    errno = 0;
    char* end = nullptr;
    if (min < 0) {
      (void)std::strtoll(text.c_str(), &end, 10);
    } else {
      (void)std::strtoull(text.c_str(), &end, 10);
    }
    if (errno == ERANGE) return wrong("a number out of that range");
    return absl::OkStatus();
  }
  if (value.kind_case() != Value::kNumberValue) return wrong(KindName(value));
  double number = value.number_value();
  if (number != std::floor(number)) return wrong("a fraction");
  // The bounds of 64-bit fields are not exact doubles; the comparison with
  // max is strict there so that 2^64 itself is refused.
  if (number < min || (is_64_bit ? number >= max : number > max)) {
    return wrong("a number out of that range");
  }
  return absl::OkStatus();
}

// Checks one (non-repeated) value against the type of `field`. protobuf's
// own JSON reader is lenient in places (it takes "yes" for a bool), so the
// types are checked here first, with the field's path in the message.
absl::Status CheckScalar(const Value& value, const FieldDescriptor& field,
                         const std::string& path) {
  auto wrong = [&](const char* expected) {
    return absl::InvalidArgumentError(absl::StrCat(
        "field \"", path, "\" must be ", expected, ", not ", KindName(value)));
  };
  switch (field.cpp_type()) {
    case FieldDescriptor::CPPTYPE_BOOL:
      if (value.kind_case() != Value::kBoolValue) return wrong("true or false");
      return absl::OkStatus();
    case FieldDescriptor::CPPTYPE_STRING:
      if (value.kind_case() != Value::kStringValue) return wrong("a string");
      return absl::OkStatus();
    case FieldDescriptor::CPPTYPE_ENUM: {
      if (value.kind_case() != Value::kStringValue) return wrong("a string");
      const google::protobuf::EnumDescriptor& type = *field.enum_type();
      if (type.FindValueByName(value.string_value()) != nullptr) {
        return absl::OkStatus();
      }
      std::string names;
      for (int i = 0; i < type.value_count(); ++i) {
        absl::StrAppend(&names, i == 0 ? "" : ", ", "\"",
                        type.value(i)->name(), "\"");
      }
      return absl::InvalidArgumentError(
          absl::StrCat("field \"", path, "\" must be one of ", names, ", not \"",
                       value.string_value(), "\""));
    }
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_UINT64:
      return CheckInteger(value, field, path);
    case FieldDescriptor::CPPTYPE_FLOAT:
    case FieldDescriptor::CPPTYPE_DOUBLE:
      if (value.kind_case() != Value::kNumberValue) return wrong("a number");
      return absl::OkStatus();
    case FieldDescriptor::CPPTYPE_MESSAGE:
      if (field.message_type()->full_name() == "google.protobuf.Value" ||
          field.message_type()->full_name() == "google.protobuf.Struct") {
        return absl::OkStatus();
      }
      if (value.kind_case() != Value::kStructValue) return wrong("an object");
      return CheckObject(value.struct_value(), *field.message_type(), path);
  }
  return absl::OkStatus();
}

absl::Status CheckObject(const google::protobuf::Struct& object,
                         const Descriptor& descriptor,
                         const std::string& path) {
  for (const auto& [name, value] : object.fields()) {
    std::string field_path = path.empty() ? name : absl::StrCat(path, ".", name);
    if (path.empty() && name == kSchemaKey) {
      // Editors validate and complete a file that names its JSON Schema.
      if (value.kind_case() != Value::kStringValue) {
        return absl::InvalidArgumentError(absl::StrCat(
            "field \"", kSchemaKey, "\" must be a string, not ", KindName(value)));
      }
      continue;
    }
    const FieldDescriptor* field = FindField(descriptor, name);
    if (field == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown field \"", field_path, "\""));
    }
    if (value.kind_case() == Value::kNullValue) continue;
    if (field->is_map()) {
      if (value.kind_case() != Value::kStructValue) {
        return absl::InvalidArgumentError(absl::StrCat(
            "field \"", field_path, "\" must be an object, not ",
            KindName(value)));
      }
      const FieldDescriptor* map_value = field->message_type()->map_value();
      for (const auto& [key, entry] : value.struct_value().fields()) {
        RETURN_IF_ERROR(
            CheckScalar(entry, *map_value, absl::StrCat(field_path, ".", key)));
      }
    } else if (field->is_repeated()) {
      if (value.kind_case() != Value::kListValue) {
        return absl::InvalidArgumentError(absl::StrCat(
            "field \"", field_path, "\" must be a list, not ",
            KindName(value)));
      }
      int index = 0;
      for (const Value& element : value.list_value().values()) {
        RETURN_IF_ERROR(CheckScalar(
            element, *field, absl::StrCat(field_path, "[", index++, "]")));
      }
    } else {
      RETURN_IF_ERROR(CheckScalar(value, *field, field_path));
    }
  }
  return absl::OkStatus();
}

}  // namespace

namespace {

absl::Status ParseJsonMessageRaw(absl::string_view json,
                                 absl::string_view source,
                                 google::protobuf::Message* message) {
  message->Clear();
  absl::Status syntax = CheckJsonObjectSyntax(json);
  if (!syntax.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ":", syntax.message()));
  }
  google::protobuf::util::JsonParseOptions options;
  const google::protobuf::StringPiece input(json.data(), json.size());

  google::protobuf::Struct object;
  auto status =
      google::protobuf::util::JsonStringToMessage(input, &object, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        source, ": not a JSON object: ", ProtobufMessage(status)));
  }
  absl::Status checked = CheckObject(object, *message->GetDescriptor(), "");
  if (!checked.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": ", checked.message()));
  }
  // Every field was checked above, names and types; the only key left for
  // protobuf's reader to skip is "$schema".
  options.ignore_unknown_fields = true;
  status = google::protobuf::util::JsonStringToMessage(input, message, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": ", ProtobufMessage(status)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseJsonMessage(absl::string_view json, absl::string_view source,
                              google::protobuf::Message* message) {
  absl::Status status = ParseJsonMessageRaw(json, source, message);
  if (status.ok()) return status;
  // The message can quote the file (a key, the text near a syntax error).
  return absl::Status(status.code(), MakeMessageVisible(status.message()));
}

absl::Status ReadJsonMessageFile(const std::string& path,
                                 google::protobuf::Message* message,
                                 RegularFileOptions options) {
  ASSIGN_OR_RETURN(std::string text, ReadRegularFile(path, options));
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    // An empty file is an empty object: a person who empties a settings
    // file means "no settings here".
    message->Clear();
    return absl::OkStatus();
  }
  return ParseJsonMessage(text, path, message);
}

std::string MessageToJsonLine(const google::protobuf::Message& message) {
  std::string out;
  google::protobuf::util::JsonPrintOptions options;
  (void)google::protobuf::util::MessageToJsonString(message, &out, options);
  return out;
}

std::string MessageToJsonLineWithDefaults(
    const google::protobuf::Message& message) {
  std::string out;
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  // A message of plain fields always prints; a failure would be a bug.
  (void)google::protobuf::util::MessageToJsonString(message, &out, options);
  return out;
}

const char* JsonKindName(const Value& value) { return KindName(value); }

}  // namespace garuda
