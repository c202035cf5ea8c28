// The model a session talks to: the `model` section of the settings
// (~/.garuda/settings.json or the project's .garuda/settings.json, merged by
// lib/policy), overridden by the agent's --provider, --model and --base-url
// flags; the key only from the environment.
#ifndef GARUDA_LIB_PROVIDER_CONFIG_H_
#define GARUDA_LIB_PROVIDER_CONFIG_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "lib/provider/client.h"
#include "proto/settings.pb.h"

namespace garuda {
namespace provider {

inline constexpr uint32_t kDefaultMaxTokens = 8192;

// Command-line overrides; empty means "as the settings say".
struct ModelOverrides {
  std::string provider;
  std::string model;
  std::string base_url;
};

// Whether any model is configured (settings or flags name a provider).
bool ModelConfigured(const ModelSettings& settings,
                     const ModelOverrides& overrides);

// Options for ModelClient::Create. The key comes from OPENAI_API_KEY or
// ANTHROPIC_API_KEY through `getenv`; none is needed for a base URL other
// than the provider's own (a local server), and the provider's own service
// without its key is an error that names the variable.
absl::StatusOr<ClientOptions> ClientOptionsFromSettings(
    const ModelSettings& settings, const ModelOverrides& overrides,
    const std::function<const char*(const char*)>& getenv);

// The environment variable that holds `provider`'s key.
std::string ApiKeyVariable(const std::string& provider);

// Unsets every provider's key variable, once the key has been read: the
// helpers the agent starts, and the commands they run on the host, inherit
// the agent's environment and must never see the key.
void RemoveApiKeysFromEnvironment();

}  // namespace provider
}  // namespace garuda

#endif  // GARUDA_LIB_PROVIDER_CONFIG_H_
