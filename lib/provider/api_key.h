// A provider's API key. It comes only from the environment (OPENAI_API_KEY,
// ANTHROPIC_API_KEY), goes only into the request's authentication header,
// and is cut out of every text this library hands back (a server may echo
// it in an error body).
#ifndef GARUDA_LIB_PROVIDER_API_KEY_H_
#define GARUDA_LIB_PROVIDER_API_KEY_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace garuda {
namespace provider {

inline constexpr char kRedacted[] = "[redacted]";

class ApiKey {
 public:
  ApiKey() = default;

  // From the environment variable `variable` through `getenv` (nullptr when
  // unset). Unset or empty: an empty key. A key with a space or a control
  // character is an error that names the variable, never the value.
  static absl::StatusOr<ApiKey> FromEnvironment(
      const std::string& variable,
      const std::function<const char*(const char*)>& getenv);
  // For tests.
  static absl::StatusOr<ApiKey> FromString(std::string value,
                                           absl::string_view origin);

  bool empty() const { return value_.empty(); }
  // The key itself: only for building the authentication header.
  const std::string& value() const { return value_; }

  // `text` with every occurrence of the key replaced by "[redacted]".
  std::string Redact(absl::string_view text) const;

 private:
  explicit ApiKey(std::string value) : value_(std::move(value)) {}
  std::string value_;
};

}  // namespace provider
}  // namespace garuda

#endif  // GARUDA_LIB_PROVIDER_API_KEY_H_
