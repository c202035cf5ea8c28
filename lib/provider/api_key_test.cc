#include "lib/provider/api_key.h"

#include <map>

#include "gtest/gtest.h"

namespace garuda {
namespace provider {
namespace {

std::function<const char*(const char*)> Env(
    const std::map<std::string, std::string>& values) {
  return [values](const char* name) -> const char* {
    auto it = values.find(name);
    return it == values.end() ? nullptr : it->second.c_str();
  };
}

TEST(ApiKeyTest, ComesFromTheNamedVariable) {
  auto key = ApiKey::FromEnvironment("OPENAI_API_KEY",
                                     Env({{"OPENAI_API_KEY", "sk-abc"}}));
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(key->value(), "sk-abc");
  auto none = ApiKey::FromEnvironment("OPENAI_API_KEY", Env({}));
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(ApiKeyTest, ABadKeyIsNamedByItsVariableNeverShown) {
  auto key = ApiKey::FromEnvironment(
      "ANTHROPIC_API_KEY", Env({{"ANTHROPIC_API_KEY", "sk-x\r\nX-Evil: 1"}}));
  ASSERT_FALSE(key.ok());
  EXPECT_NE(key.status().message().find("ANTHROPIC_API_KEY"),
            std::string::npos);
  EXPECT_EQ(key.status().message().find("sk-x"), std::string::npos);
}

TEST(ApiKeyTest, RedactsEveryOccurrence) {
  auto key = ApiKey::FromString("sk-secret", "test");
  ASSERT_TRUE(key.ok());
  EXPECT_EQ(key->Redact("a sk-secret b sk-secret"),
            "a [redacted] b [redacted]");
  EXPECT_EQ(ApiKey().Redact("unchanged"), "unchanged");
}

}  // namespace
}  // namespace provider
}  // namespace garuda
