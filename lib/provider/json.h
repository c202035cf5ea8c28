// The JSON of the provider wire formats, read and written through protobuf's
// google.protobuf.Value (already linked; no second JSON library).
#ifndef GARUDA_LIB_PROVIDER_JSON_H_
#define GARUDA_LIB_PROVIDER_JSON_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/struct.pb.h"

namespace garuda {
namespace provider {

using google::protobuf::Value;

// Parses any JSON value. The error names `what` (e.g. "a stream event").
absl::StatusOr<Value> ParseJson(absl::string_view text, absl::string_view what);

// Compact JSON text of `value`.
std::string ToJson(const Value& value);

// `text` with every invalid UTF-8 sequence replaced by U+FFFD: protobuf (and
// the providers) take only valid UTF-8, and a command's output may not be.
std::string ValidUtf8(absl::string_view text);

// Builders. Strings pass through ValidUtf8.
Value JsonString(absl::string_view text);
Value JsonNumber(double number);
Value JsonBool(bool value);
Value JsonNull();
Value JsonObject();
Value JsonList();
// Sets object[name] (object must be an object); returns the new member.
Value* Set(Value* object, absl::string_view name, Value member);
// Appends to a list; returns the new element.
Value* Append(Value* list, Value element);

// Readers: nullptr / "" / nullopt when `object` is not an object, the member
// is absent, or it has another type.
const Value* Member(const Value& object, absl::string_view name);
const Value* ObjectMember(const Value& object, absl::string_view name);
const google::protobuf::ListValue* ListMember(const Value& object,
                                              absl::string_view name);
std::string StringMember(const Value& object, absl::string_view name);
bool HasStringMember(const Value& object, absl::string_view name);
// A token count: a whole number in [0, 2^50]. Anything else (absent, null,
// negative, fractional, a string) is nullopt, which makes the usage invalid.
std::optional<int64_t> TokenCountMember(const Value& object,
                                        absl::string_view name);

}  // namespace provider
}  // namespace garuda

#endif  // GARUDA_LIB_PROVIDER_JSON_H_
