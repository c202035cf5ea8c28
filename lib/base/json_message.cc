#include "lib/base/json_message.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/question/visible.h"

namespace garuda {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Value;

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

// A field by its JSON name (lowerCamelCase) or its proto name.
const FieldDescriptor* FindField(const Descriptor& descriptor,
                                 const std::string& name) {
  for (int i = 0; i < descriptor.field_count(); ++i) {
    const FieldDescriptor* field = descriptor.field(i);
    if (field->json_name() == name || field->name() == name) return field;
  }
  return nullptr;
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
    case FieldDescriptor::CPPTYPE_ENUM:
      if (value.kind_case() != Value::kStringValue) return wrong("a string");
      return absl::OkStatus();
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_UINT64: {
      const bool is_64_bit =
          field.cpp_type() == FieldDescriptor::CPPTYPE_INT64 ||
          field.cpp_type() == FieldDescriptor::CPPTYPE_UINT64;
      if (is_64_bit && value.kind_case() == Value::kStringValue) {
        // Proto3 JSON writes 64-bit integers as strings; protobuf's reader
        // checks the digits.
        return absl::OkStatus();
      }
      if (value.kind_case() != Value::kNumberValue) return wrong("a number");
      double number = value.number_value();
      bool is_unsigned =
          field.cpp_type() == FieldDescriptor::CPPTYPE_UINT32 ||
          field.cpp_type() == FieldDescriptor::CPPTYPE_UINT64;
      if (number != std::floor(number) || (is_unsigned && number < 0)) {
        return wrong(is_unsigned ? "a whole number, 0 or more"
                                 : "a whole number");
      }
      return absl::OkStatus();
    }
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
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
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
  return absl::Status(status.code(), MakeVisible(status.message()));
}

absl::Status ReadJsonMessageFile(const std::string& path,
                                 google::protobuf::Message* message,
                                 RegularFileOptions options) {
  ASSIGN_OR_RETURN(std::string text, ReadRegularFile(path, options));
  return ParseJsonMessage(text, path, message);
}

std::string MessageToJsonLine(const google::protobuf::Message& message) {
  std::string out;
  google::protobuf::util::JsonPrintOptions options;
  (void)google::protobuf::util::MessageToJsonString(message, &out, options);
  return out;
}

const char* JsonKindName(const Value& value) { return KindName(value); }

}  // namespace garuda
