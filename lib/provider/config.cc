#include "lib/provider/config.h"

#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace garuda {
namespace provider {

bool ModelConfigured(const ModelSettings& settings,
                     const ModelOverrides& overrides) {
  return !settings.provider().empty() || !overrides.provider.empty();
}

std::string ApiKeyVariable(const std::string& provider) {
  return provider == "anthropic" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
}

void RemoveApiKeysFromEnvironment() {
  for (const char* provider : {"openai", "anthropic"}) {
    ::unsetenv(ApiKeyVariable(provider).c_str());
  }
}

absl::StatusOr<ClientOptions> ClientOptionsFromSettings(
    const ModelSettings& settings, const ModelOverrides& overrides,
    const std::function<const char*(const char*)>& getenv) {
  ClientOptions options;
  options.provider =
      overrides.provider.empty() ? settings.provider() : overrides.provider;
  options.model = overrides.model.empty() ? settings.name() : overrides.model;
  options.base_url =
      overrides.base_url.empty() ? settings.base_url() : overrides.base_url;
  options.max_tokens =
      settings.max_tokens() != 0 ? settings.max_tokens() : kDefaultMaxTokens;
  if (options.provider != "openai" && options.provider != "anthropic") {
    return absl::InvalidArgumentError(absl::StrCat(
        "model.provider (or --provider) is \"", options.provider,
        "\"; use \"openai\" (also for llama.cpp, vLLM and Ollama) or "
        "\"anthropic\""));
  }
  // Said before anything about keys: without a model name nothing else
  // matters.
  if (options.model.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model.name (or --model) is missing: name the model to ask, for "
        "example {\"model\": {\"provider\": \"",
        options.provider, "\", \"name\": \"",
        options.provider == "anthropic" ? "claude-sonnet-4-5" : "qwen2.5-coder",
        "\"}} in ~/.garuda/settings.json"));
  }
  const std::string variable = ApiKeyVariable(options.provider);
  absl::StatusOr<ApiKey> key = ApiKey::FromEnvironment(variable, getenv);
  if (!key.ok()) return key.status();
  options.api_key = *std::move(key);
  // The provider's own service (no base URL, or its URL) needs the key.
  const bool own_service =
      options.base_url.empty() ||
      absl::StrContains(options.base_url, "api.openai.com") ||
      absl::StrContains(options.base_url, "api.anthropic.com");
  if (own_service && options.api_key.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(
        variable, " is not set: the ", options.provider,
        " service needs its API key in the environment (a local server set "
        "in model.baseUrl needs none)"));
  }
  return options;
}

}  // namespace provider
}  // namespace garuda
