// The command-line conventions of every program, through the real binaries:
// --help and -h (usage on stdout, exit 0, flags spelled with dashes, none of
// Abseil's own lines), --version, an unknown flag (exit 2, the close flag
// named), a missing --project folder, a missing helper program.
#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/version.h"
#include "sandbox/sandbox.h"

namespace garuda {
namespace {

const char* const kPrograms[] = {"garuda-agent",   "garuda-stager",
                                 "garuda-applier", "garuda-auditor",
                                 "garuda-audit",   "garuda-budgeter"};

std::string Program(const std::string& name) {
  return JoinPath(std::getenv("TEST_SRCDIR"),
                  "garuda/cmd/" + name + "/" + name);
}

RunResult RunProgram(std::vector<std::string> argv, const std::string& folder = "/") {
  RunOptions options;
  options.argv = std::move(argv);
  options.capture_output = true;
  auto result = RunOnHost(options, folder);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *result : RunResult();
}

TEST(CliConventionsTest, HelpIsOnStdoutWithExitZero) {
  for (const char* name : kPrograms) {
    for (const char* spelled : {"--help", "-h"}) {
      RunResult result = RunProgram({Program(name), spelled});
      EXPECT_EQ(result.exit_code, 0) << name << " " << spelled;
      EXPECT_TRUE(absl::StartsWith(result.stdout_data, absl::StrCat(name, ": ")))
          << name << ": " << result.stdout_data;
      EXPECT_TRUE(absl::StrContains(result.stdout_data, "\nFlags:\n")) << name;
      EXPECT_TRUE(absl::StrContains(result.stdout_data, "--version")) << name;
      EXPECT_EQ(result.stderr_data, "") << name;
      for (const char* absl_line : {"Try --helpfull", "No flags matched",
                                    "Flags from", "_"}) {
        if (std::string(absl_line) == "_") {
          // Flag names are spelled with dashes, as the usage line does.
          for (const char* underscored :
               {"--channel_fd", "--accept_weaker_lockdown", "--base_url",
                "--output_format"}) {
            EXPECT_FALSE(absl::StrContains(result.stdout_data, underscored))
                << name << " shows " << underscored;
          }
          continue;
        }
        EXPECT_FALSE(absl::StrContains(result.stdout_data, absl_line))
            << name << " shows " << absl_line;
      }
    }
  }
}

TEST(CliConventionsTest, VersionIsOneNumber) {
  for (const char* name : kPrograms) {
    RunResult result = RunProgram({Program(name), "--version"});
    EXPECT_EQ(result.exit_code, 0) << name;
    EXPECT_EQ(result.stdout_data, absl::StrCat(name, " ", kGarudaVersion, "\n"));
  }
}

TEST(CliConventionsTest, AnUnknownFlagExitsTwoAndNamesTheCloseOne) {
  for (const char* name : kPrograms) {
    RunResult result = RunProgram({Program(name), "--sesion", "x"});
    EXPECT_EQ(result.exit_code, 2) << name;
    EXPECT_TRUE(absl::StartsWith(
        result.stderr_data, absl::StrCat(name, ": unknown flag --sesion")))
        << result.stderr_data;
    EXPECT_TRUE(absl::StrContains(result.stderr_data,
                                  absl::StrCat(name, " --help")))
        << result.stderr_data;
    EXPECT_EQ(result.stdout_data, "");
  }
  RunResult agent = RunProgram({Program("garuda-agent"), "--base-ur", "http://x"});
  EXPECT_EQ(agent.exit_code, 2);
  EXPECT_EQ(agent.stderr_data,
            "garuda-agent: unknown flag --base-ur; did you mean --base-url? "
            "(garuda-agent --help lists the flags)\n");
  // Control: the flag spelled right is taken (the run goes on to fail for
  // another reason, not a usage error about the flag).
  RunResult spelled_right =
      RunProgram({Program("garuda-agent"), "--base-url", "http://x", "--helpers-dir",
           "/nonexistent-helpers", "-p", "hi"});
  EXPECT_FALSE(absl::StrContains(spelled_right.stderr_data, "unknown flag"))
      << spelled_right.stderr_data;
}

TEST(CliConventionsTest, AMissingProjectFolderNamesTheFlag) {
  for (const char* name : {"garuda-agent", "garuda-stager", "garuda-applier",
                           "garuda-auditor", "garuda-audit"}) {
    std::vector<std::string> argv = {Program(name), "--project",
                                     "/nonexistent/project"};
    if (std::string(name) == "garuda-audit") argv.push_back("verify");
    RunResult result = RunProgram(argv);
    EXPECT_EQ(result.exit_code, 2) << name << ": " << result.stderr_data;
    EXPECT_EQ(result.stderr_data,
              absl::StrCat(name, ": --project /nonexistent/project: no such folder\n"));
  }
}

TEST(CliConventionsTest, AMissingHelperNamesHelpersDir) {
  std::string templ = JoinPath(std::getenv("TEST_TMPDIR"), "cliXXXXXX");
  std::string root = ::mkdtemp(templ.data());
  std::string home = JoinPath(root, "home"), empty = JoinPath(root, "empty");
  ASSERT_TRUE(MakeDirectories(JoinPath(home, ".garuda"), 0755).ok());
  ASSERT_TRUE(MakeDirectories(empty, 0755).ok());
  ASSERT_TRUE(WriteFileAtomically(
                  JoinPath(home, ".garuda/settings.json"),
                  R"({"model": {"provider": "openai", "name": "m",
                      "baseUrl": "http://127.0.0.1:9/v1"}})",
                  0644)
                  .ok());
  ::setenv("HOME", home.c_str(), 1);
  RunResult result = RunProgram({Program("garuda-agent"), "--project", root,
                          "--helpers-dir", empty, "-p", "hi"},
                         root);
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(
      result.stderr_data,
      absl::StrCat("garuda-auditor is not in ", empty,
                   ": the helper programs are installed beside garuda-agent; "
                   "name their folder with --helpers-dir")))
      << result.stderr_data;
}

}  // namespace
}  // namespace garuda
