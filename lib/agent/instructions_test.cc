#include "lib/agent/instructions.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"

namespace garuda {
namespace agent {
namespace {

class InstructionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = JoinPath(std::getenv("TEST_TMPDIR"), "insXXXXXX");
    root_ = ::mkdtemp(templ.data());
    project_ = JoinPath(root_, "project");
    home_ = JoinPath(root_, "home");
    ASSERT_TRUE(MakeDirectories(project_, 0755).ok());
    ASSERT_TRUE(MakeDirectories(JoinPath(home_, ".garuda"), 0755).ok());
  }
  void Write(const std::string& path, const std::string& text) {
    ASSERT_TRUE(WriteFileAtomically(path, text, 0644).ok());
  }
  std::string root_, project_, home_;
};

TEST_F(InstructionsTest, AgentsMdOfTheProjectAndOfThePerson) {
  Write(project_ + "/AGENTS.md", "Run make test before you finish.\n");
  Write(project_ + "/CLAUDE.md", "never read when AGENTS.md exists\n");
  Write(home_ + "/.garuda/AGENTS.md", "Answer in French.\n");
  ProjectInstructions loaded = LoadProjectInstructions(project_, home_);
  ASSERT_EQ(loaded.files.size(), 2u);
  EXPECT_EQ(loaded.files[0].path, "~/.garuda/AGENTS.md");
  EXPECT_EQ(loaded.files[1].path, "AGENTS.md");
  std::string prompt = InstructionsPrompt(loaded);
  EXPECT_TRUE(absl::StrContains(prompt, "<instructions file=\"AGENTS.md\">\n"
                                        "Run make test before you finish.\n"));
  EXPECT_TRUE(absl::StrContains(prompt, "Answer in French."));
  EXPECT_FALSE(absl::StrContains(prompt, "never read"));
  EXPECT_EQ(InstructionsLine(loaded),
            "Instructions: ~/.garuda/AGENTS.md (18 bytes), AGENTS.md (33 bytes)");
}

TEST_F(InstructionsTest, ClaudeMdWhenThereIsNoAgentsMd) {
  Write(project_ + "/CLAUDE.md", "Use tabs.\n");
  ProjectInstructions loaded = LoadProjectInstructions(project_, "");
  ASSERT_EQ(loaded.files.size(), 1u);
  EXPECT_EQ(loaded.files[0].path, "CLAUDE.md");
  EXPECT_EQ(loaded.files[0].text, "Use tabs.\n");
}

TEST_F(InstructionsTest, NoneIsNothing) {
  ProjectInstructions loaded = LoadProjectInstructions(project_, home_);
  EXPECT_TRUE(loaded.files.empty());
  EXPECT_EQ(InstructionsPrompt(loaded), "");
  EXPECT_EQ(InstructionsLine(loaded), "");
}

TEST_F(InstructionsTest, ALinkOrAFifoIsNotRead) {
  Write(root_ + "/secret", "the host's secret\n");
  ASSERT_EQ(::symlink((root_ + "/secret").c_str(), (project_ + "/AGENTS.md").c_str()), 0);
  ProjectInstructions loaded = LoadProjectInstructions(project_, "");
  EXPECT_TRUE(loaded.files.empty());
  EXPECT_EQ(InstructionsLine(loaded),
            "Instructions: AGENTS.md is a symbolic link: not read");
  EXPECT_FALSE(absl::StrContains(InstructionsPrompt(loaded), "secret"));
  // A FIFO must not hang the start.
  ASSERT_EQ(::unlink((project_ + "/AGENTS.md").c_str()), 0);
  ASSERT_EQ(::mkfifo((project_ + "/AGENTS.md").c_str(), 0644), 0);
  loaded = LoadProjectInstructions(project_, "");
  EXPECT_TRUE(loaded.files.empty());
  EXPECT_EQ(InstructionsLine(loaded),
            "Instructions: AGENTS.md is not a regular file: not read");
  // Control: a regular file at the same name is read.
  ASSERT_EQ(::unlink((project_ + "/AGENTS.md").c_str()), 0);
  Write(project_ + "/AGENTS.md", "ok\n");
  EXPECT_EQ(LoadProjectInstructions(project_, "").files.size(), 1u);
}

TEST_F(InstructionsTest, ALargeFileIsCutAtACharacter) {
  std::string text(kMaxInstructionsBytes - 1, 'a');
  text += "\xc3\xa9";  // é across the cap
  text += std::string(100, 'b');
  Write(project_ + "/AGENTS.md", text);
  ProjectInstructions loaded = LoadProjectInstructions(project_, "");
  ASSERT_EQ(loaded.files.size(), 1u);
  EXPECT_TRUE(loaded.files[0].cut);
  EXPECT_EQ(loaded.files[0].text, std::string(kMaxInstructionsBytes - 1, 'a'));
  EXPECT_TRUE(absl::StrContains(InstructionsPrompt(loaded), "[cut: the file has 32869 bytes"));
  EXPECT_EQ(InstructionsLine(loaded), "Instructions: AGENTS.md (cut at 32.0 KB of 32.1 KB)");
}

}  // namespace
}  // namespace agent
}  // namespace garuda
