#include "lib/changeset/rules.h"

#include "gtest/gtest.h"

namespace garuda {
namespace {

TEST(SensitiveNamesTest, DefaultListMatchesSecretNames) {
  const SensitiveNames& names = SensitiveNames::Default();
  for (const char* path :
       {".env", "app/.env.local", "certs/server.pem", "id_rsa",
        "home/.ssh/id_ed25519", ".npmrc", ".pypirc", ".netrc",
        "x/.aws/credentials", "server.key"}) {
    EXPECT_TRUE(names.Matches(path)) << path;
  }
  for (const char* path : {"src/main.c", "README.md", "environment.c",
                           "credentials/readme", "aws/credentials"}) {
    EXPECT_FALSE(names.Matches(path)) << path;
  }
}

TEST(SensitiveNamesTest, ParseSkipsComments) {
  SensitiveNames names = SensitiveNames::Parse("# c\n\n*.secret\n");
  ASSERT_EQ(names.patterns().size(), 1u);
  EXPECT_TRUE(names.Matches("a/b.secret"));
}

}  // namespace
}  // namespace garuda
