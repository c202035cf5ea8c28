// A validator for the part of JSON Schema (2020-12) that Garuda's own
// schemas use (docs/stream-json.schema.json): type, properties, required,
// additionalProperties, items, const, enum, oneOf, minimum, and $ref to
// "#/$defs/NAME". Any other keyword is an error, so a schema cannot rely on
// a check this validator would skip. Annotations ($schema, $id, title,
// description, examples) are ignored.
#ifndef GARUDA_TESTS_AGENT_JSON_SCHEMA_H_
#define GARUDA_TESTS_AGENT_JSON_SCHEMA_H_

#include "absl/status/status.h"
#include "google/protobuf/struct.pb.h"

namespace garuda {
namespace agent {

// OK when `value` is valid under `schema` (the whole document, for $ref);
// otherwise INVALID_ARGUMENT naming the place in the value ("$.usage.
// inputTokens") and what is wrong, or the schema's unsupported keyword.
absl::Status ValidateJson(const google::protobuf::Value& value,
                          const google::protobuf::Value& schema);

// The same against the subschema at "#/$defs/NAME" of `schema`.
absl::Status ValidateJsonAgainst(const google::protobuf::Value& value,
                                 const google::protobuf::Value& schema,
                                 const std::string& def_name);

}  // namespace agent
}  // namespace garuda

#endif  // GARUDA_TESTS_AGENT_JSON_SCHEMA_H_
