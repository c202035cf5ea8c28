#include "lib/provider/config.h"

#include <map>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace garuda {
namespace provider {
namespace {

std::function<const char*(const char*)> Env(
    std::map<std::string, std::string> values) {
  return [values = std::move(values)](const char* name) -> const char* {
    auto it = values.find(name);
    return it == values.end() ? nullptr : it->second.c_str();
  };
}

TEST(ConfigTest, ALocalOpenAiCompatibleServerNeedsNoKey) {
  ModelSettings settings;
  settings.set_provider("openai");
  settings.set_name("qwen2.5-coder");
  settings.set_base_url("http://localhost:8080/v1");
  auto options = ClientOptionsFromSettings(settings, {}, Env({}));
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->model, "qwen2.5-coder");
  EXPECT_EQ(options->max_tokens, kDefaultMaxTokens);
  EXPECT_TRUE(options->api_key.empty());
  EXPECT_TRUE(ModelClient::Create(*options).ok());
}

TEST(ConfigTest, FlagsOverrideTheSettings) {
  ModelSettings settings;
  settings.set_provider("openai");
  settings.set_name("a");
  settings.set_max_tokens(2048);
  ModelOverrides overrides{"anthropic", "claude-x", "http://127.0.0.1:9"};
  auto options = ClientOptionsFromSettings(
      settings, overrides, Env({{"ANTHROPIC_API_KEY", "sk-ant"}}));
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->provider, "anthropic");
  EXPECT_EQ(options->model, "claude-x");
  EXPECT_EQ(options->base_url, "http://127.0.0.1:9");
  EXPECT_EQ(options->max_tokens, 2048u);
  EXPECT_EQ(options->api_key.value(), "sk-ant");
}

TEST(ConfigTest, TheProvidersOwnServiceNeedsItsKey) {
  ModelSettings settings;
  settings.set_provider("anthropic");
  settings.set_name("claude");
  auto options = ClientOptionsFromSettings(settings, {}, Env({}));
  ASSERT_FALSE(options.ok());
  EXPECT_TRUE(
      absl::StrContains(options.status().message(), "ANTHROPIC_API_KEY"));
  // The other provider's key does not count.
  options =
      ClientOptionsFromSettings(settings, {}, Env({{"OPENAI_API_KEY", "sk"}}));
  EXPECT_FALSE(options.ok());
}

TEST(ConfigTest, NoModelConfigured) {
  EXPECT_FALSE(ModelConfigured(ModelSettings(), {}));
  EXPECT_TRUE(ModelConfigured(ModelSettings(), {"openai", "", ""}));
  auto options = ClientOptionsFromSettings(ModelSettings(), {}, Env({}));
  ASSERT_FALSE(options.ok());
  EXPECT_TRUE(absl::StrContains(options.status().message(), "model.provider"));
}

TEST(ConfigTest, AMissingModelNameIsSaidBeforeAnyKeyCheck) {
  ModelSettings settings;
  settings.set_provider("anthropic");  // its own service: a key is needed too
  auto options = ClientOptionsFromSettings(settings, {}, Env({}));
  ASSERT_FALSE(options.ok());
  EXPECT_TRUE(absl::StrContains(options.status().message(),
                                "model.name (or --model) is missing"))
      << options.status();
  EXPECT_FALSE(
      absl::StrContains(options.status().message(), "ANTHROPIC_API_KEY"));
  // Control: with a name, the key is what is missing.
  settings.set_name("claude");
  options = ClientOptionsFromSettings(settings, {}, Env({}));
  ASSERT_FALSE(options.ok());
  EXPECT_TRUE(
      absl::StrContains(options.status().message(), "ANTHROPIC_API_KEY"));
}

}  // namespace
}  // namespace provider
}  // namespace garuda
