// Mistakes in settings files as a person makes them, through the real
// programs: each message names the file, the line and column or the field
// as the file spells it, and what was expected.
#include <stdlib.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "sandbox/sandbox.h"

namespace garuda {
namespace {

class SettingsMessagesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = JoinPath(std::getenv("TEST_TMPDIR"), "setXXXXXX");
    root_ = ::mkdtemp(templ.data());
    project_ = JoinPath(root_, "project");
    home_ = JoinPath(root_, "home");
    std::string etc = JoinPath(root_, "etc");
    for (const std::string& dir : {project_, home_, etc}) {
      ASSERT_TRUE(MakeDirectories(dir, 0755).ok());
    }
    ::setenv("HOME", home_.c_str(), 1);
    ::setenv("GARUDA_MANAGED_POLICY_DIR", etc.c_str(), 1);
    for (const char* name : {"OPENAI_API_KEY", "ANTHROPIC_API_KEY"}) {
      ::unsetenv(name);
    }
  }

  std::string Program(const std::string& name) {
    return JoinPath(std::getenv("TEST_SRCDIR"),
                    "garuda/cmd/" + name + "/" + name);
  }

  RunResult Run(std::vector<std::string> argv) {
    RunOptions options;
    options.argv = std::move(argv);
    options.capture_output = true;
    auto result = RunOnHost(options, project_);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : RunResult();
  }
  RunResult Stager() {
    return Run({Program("garuda-stager"), "run", "--project", project_,
                "--mode", "direct", "--", "/bin/true"});
  }
  RunResult Agent() {
    return Run({Program("garuda-agent"), "--project", project_, "-p", "hi"});
  }

  std::string WriteProjectSettings(const std::string& text) {
    return Write(JoinPath(project_, ".garuda/settings.json"), text);
  }
  std::string WriteUserSettings(const std::string& text) {
    return Write(JoinPath(home_, ".garuda/settings.json"), text);
  }
  std::string Write(const std::string& path, const std::string& text) {
    EXPECT_TRUE(MakeDirectories(Dirname(path), 0755).ok());
    EXPECT_TRUE(WriteFileAtomically(path, text, 0644).ok());
    return path;
  }

  std::string root_, project_, home_;
};

TEST_F(SettingsMessagesTest, ASyntaxErrorSaysFileLineColumnAndWhatWasExpected) {
  std::string file =
      WriteProjectSettings("{\n  \"sandbox\": {\"network\": false,}\n}\n");
  RunResult result = Stager();
  EXPECT_EQ(result.exit_code, 125);
  EXPECT_EQ(result.stderr_data,
            "garuda-stager: " + file +
                ":2:32: expected a field name after ',', found '}' (a "
                "trailing comma is not allowed)\n");
  // Control: the same file without the trailing comma is read and the
  // command runs.
  WriteProjectSettings("{\n  \"sandbox\": {\"network\": false}\n}\n");
  EXPECT_EQ(Stager().exit_code, 0);
}

TEST_F(SettingsMessagesTest, AWrongTypeNamesTheFieldAsTheFileSpellsIt) {
  std::string file = WriteUserSettings(R"({"budget": {"tokenBudget": "lots"}})");
  RunResult result = Agent();
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.stderr_data,
            "garuda-agent: " + file +
                ": field \"budget.tokenBudget\" must be a whole number from 0 "
                "to 18446744073709551615, not a string that is not a whole "
                "number\n");
}

TEST_F(SettingsMessagesTest, AMissingModelNameIsSaidBeforeAnyKey) {
  WriteUserSettings(R"({"model": {"provider": "anthropic"}})");
  RunResult result = Agent();
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_EQ(result.stderr_data,
            "garuda-agent: model.name (or --model) is missing: name the model "
            "to ask, for example {\"model\": {\"provider\": \"anthropic\", "
            "\"name\": \"claude-sonnet-4-5\"}} in ~/.garuda/settings.json\n");
}

TEST_F(SettingsMessagesTest, AnEmptyFileAndASchemaKeyAreAccepted) {
  WriteProjectSettings("");
  EXPECT_EQ(Stager().exit_code, 0);
  WriteProjectSettings(
      R"({"$schema": "../docs/settings.schema.json", "commands": {"mode": "direct"}})");
  RunResult result = Stager();
  EXPECT_EQ(result.exit_code, 0) << result.stderr_data;
}

TEST_F(SettingsMessagesTest, AKeyWrittenTwiceIsAnError) {
  std::string file = WriteProjectSettings(
      "{\"commands\": {\"mode\": \"staged\"}, \"commands\": {}}");
  RunResult result = Stager();
  EXPECT_EQ(result.exit_code, 125);
  EXPECT_EQ(result.stderr_data,
            "garuda-stager: " + file +
                ":1:34: the field \"commands\" appears twice in this object\n");
}

}  // namespace
}  // namespace garuda
