// Settings, policies and job files are JSON read into protobuf messages, so
// the schema is the .proto: an unknown field or a wrong type is an error that
// names the file and the field.
#ifndef GARUDA_LIB_BASE_JSON_MESSAGE_H_
#define GARUDA_LIB_BASE_JSON_MESSAGE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"
#include "google/protobuf/struct.pb.h"
#include "lib/base/files.h"

namespace garuda {

// A settings, policy or job file: no link, at most kMaxSettingsFileBytes.
inline RegularFileOptions JsonFileOptions(bool follow_links = false) {
  RegularFileOptions options;
  options.follow_links = follow_links;
  options.max_bytes = kMaxSettingsFileBytes;
  return options;
}

// Parses `json` into `message`. `source` (a file name) starts every error.
// An error can quote the bytes of `json` (a key, the place of a syntax
// error): it passes through MakeVisible, so a file cannot clear the
// terminal or set its title through a message.
absl::Status ParseJsonMessage(absl::string_view json, absl::string_view source,
                              google::protobuf::Message* message);

// Reads `path` (a regular file, links refused unless options.follow_links,
// at most options.max_bytes: kMaxSettingsFileBytes unless told) and parses
// it. A missing file is NOT_FOUND, so a caller can treat an absent optional
// file as empty.
absl::Status ReadJsonMessageFile(const std::string& path,
                                 google::protobuf::Message* message,
                                 RegularFileOptions options = JsonFileOptions());

// One line of compact JSON for `message` (field names in lowerCamelCase, as
// in the settings files).
std::string MessageToJsonLine(const google::protobuf::Message& message);
// The same with every field, empty ones included ("commit": "", "paths":
// []): a report that scripts read by key.
std::string MessageToJsonLineWithDefaults(
    const google::protobuf::Message& message);

// What a JSON value is, for messages: "a string", "a number", "true or
// false", "an object", "a list", "null".
const char* JsonKindName(const google::protobuf::Value& value);

}  // namespace garuda

#endif  // GARUDA_LIB_BASE_JSON_MESSAGE_H_
