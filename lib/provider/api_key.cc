#include "lib/provider/api_key.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace garuda {
namespace provider {

absl::StatusOr<ApiKey> ApiKey::FromString(std::string value,
                                          absl::string_view origin) {
  for (const char c : value) {
    const unsigned char u = static_cast<unsigned char>(c);
    // Printable ASCII only: anything else could split the HTTP header it is
    // sent in.
    if (u <= 0x20 || u >= 0x7F) {
      return absl::InvalidArgumentError(absl::StrCat(
          origin,
          " holds a space, a control or a non-ASCII character; an API "
          "key has none (the value is not shown)"));
    }
  }
  return ApiKey(std::move(value));
}

absl::StatusOr<ApiKey> ApiKey::FromEnvironment(
    const std::string& variable,
    const std::function<const char*(const char*)>& getenv) {
  const char* value = getenv(variable.c_str());
  if (value == nullptr || *value == '\0') return ApiKey();
  return FromString(value, absl::StrCat("the environment variable ", variable));
}

std::string ApiKey::Redact(absl::string_view text) const {
  if (value_.empty()) return std::string(text);
  return absl::StrReplaceAll(text, {{value_, kRedacted}});
}

}  // namespace provider
}  // namespace garuda
