// The staged change's question as a person meets it in a terminal session
// (issue 19 point 2): the real `garuda-applier serve --consent=terminal`,
// asked on a pseudo-terminal, with a two-file change list of a staged
// command. The per-file choice leaves the unchosen file unchanged in the
// project; the pager pages and searches; the diff is coloured only where
// the terminal has colours; an answer is one key press, with the terminal
// in raw mode for the question and back as it was after it, also when the
// applier is killed by SIGTERM in the middle of it.
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "lib/agent/tool_display.h"
#include "lib/base/files.h"
#include "lib/base/visible.h"
#include "lib/changeset/builder.h"
#include "lib/changeset/changeset.h"
#include "lib/changeset/test_tree.h"
#include "lib/ipc/helper_process.h"
#include "lib/ipc/sealed_memfd.h"
#include "lib/base/json_syntax.h"
#include "proto/applier_service.pb.h"
#include "tests/agent/fakes.h"
#include "tests/agent/pty_person.h"

namespace garuda {
namespace {

using garuda::testing::PtyPerson;
using garuda::testing::Read;
using garuda::testing::Runfile;
using garuda::testing::Write;

class StagedQuestionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pair_ = garuda::testing::MakeProjectPair("staged-question");
    home_ = pair_.base + "/home";
    garuda::testing::MakeDir(home_ + "/.garuda");
    ::setenv("HOME", home_.c_str(), 1);
    ::setenv("GARUDA_MANAGED_POLICY_DIR", (pair_.base + "/managed").c_str(), 1);
    // No colours unless a test asks for them.
    ::unsetenv("TERM");
    ::unsetenv("NO_COLOR");
    auto person = PtyPerson::Open();
    ASSERT_TRUE(person.ok()) << person.status();
    person_ = std::move(*person);
    x_before_ = Read(pair_.project + "/src/x.c");
    y_before_ = Read(pair_.project + "/src/y.c");
  }

  void TearDown() override {
    if (applier_ != nullptr) applier_->Stop().IgnoreError();
  }

  void StartApplier() {
    ipc::HelperOptions options;
    options.argv = {Runfile("cmd/garuda-applier/garuda-applier"),
                    "serve",
                    "--channel-fd=3",
                    "--project",
                    pair_.project,
                    "--quiet",
                    "--consent=terminal",
                    "--terminal=" + person_->path()};
    options.channel.max_frame_bytes = 4 << 20;
    auto started = ipc::HelperProcess::Spawn(options);
    ASSERT_TRUE(started.ok()) << started.status();
    applier_ = std::move(*started);
  }

  // The staged command changed both files; the list as the stager seals it.
  UniqueFd TwoFileChange(const std::string& x = "x changed\n",
                         const std::string& y = "y changed\n") {
    Write(pair_.staged + "/src/x.c", x);
    Write(pair_.staged + "/src/y.c", y);
    BuildOptions options;
    options.project = pair_.project;
    options.command = "sed -i s/old/new/ src/x.c src/y.c";
    auto change_set = BuildFromCopy(pair_.staged, options);
    EXPECT_TRUE(change_set.ok()) << change_set.status();
    EXPECT_TRUE(LoadContents(&*change_set).ok());
    EXPECT_EQ(change_set->changes.size(), 2u);
    auto fd = ipc::SealedMemfd("staged", [&](int memfd) {
      return WriteChangeSet(*change_set, memfd, "test list");
    });
    EXPECT_TRUE(fd.ok()) << fd.status();
    return fd.ok() ? *std::move(fd) : UniqueFd();
  }

  absl::StatusOr<applier::ApplyOutcome> Propose(int fd) {
    applier::ApplierRequest request;
    request.set_seq(++seq_);
    applier::ApplyChangeSet* apply = request.mutable_apply();
    apply->set_reason("bash: sed -i s/old/new/ src/x.c src/y.c");
    apply->set_session_id("staged-question-test");
    apply->set_origin(applier::ApplyChangeSet::COMMAND);
    applier::ApplierReply reply;
    const int fds[] = {fd};
    absl::Status called = applier_->Call(request, &reply, nullptr, fds);
    if (!called.ok()) return called;
    if (!reply.has_applied()) {
      return absl::InternalError(reply.DebugString());
    }
    return reply.applied();
  }

  garuda::testing::ProjectPair pair_;
  std::string home_, x_before_, y_before_;
  std::unique_ptr<PtyPerson> person_;
  std::unique_ptr<ipc::HelperProcess> applier_;
  uint64_t seq_ = 0;
};

TEST_F(StagedQuestionTest, ChosenFilesAreAppliedAndTheOthersDiscarded) {
  StartApplier();
  // Choose files; src/x.c: apply; src/y.c: discard; confirm.
  for (const char* key : {"c", "a", "d", "a"}) person_->Queue(key);
  UniqueFd fd = TwoFileChange();
  auto outcome = Propose(fd.get());
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->kind(), applier::ApplyOutcome::APPLIED) << outcome->line();
  EXPECT_EQ(Read(pair_.project + "/src/x.c"), "x changed\n");
  EXPECT_EQ(Read(pair_.project + "/src/y.c"), y_before_);  // unchosen
  ASSERT_EQ(outcome->applied_paths_size(), 1);
  EXPECT_EQ(outcome->applied_paths(0), "src/x.c");
  ASSERT_EQ(outcome->discarded_paths_size(), 1);
  EXPECT_EQ(outcome->discarded_paths(0), "src/y.c");
  // What the model is told names both.
  EXPECT_TRUE(absl::StrContains(outcome->line(), "applied 1 of 2 changes"))
      << outcome->line();
  EXPECT_TRUE(absl::StrContains(outcome->line(), "src/x.c"));
  EXPECT_TRUE(absl::StrContains(outcome->line(), "discarded the others"));
  EXPECT_TRUE(absl::StrContains(outcome->line(), "src/y.c"));
  EXPECT_EQ(outcome->decision(), "asked: apply 1 of 2 changes");
  std::string shown = person_->Shown();
  EXPECT_TRUE(absl::StrContains(shown, "Change 2 of 2: [a]pply, [d]iscard"))
      << shown;
  EXPECT_TRUE(absl::StrContains(shown, "To discard (1): src/y.c")) << shown;
  // The title carries the command as the tool line shows it.
  EXPECT_TRUE(absl::StrContains(
      shown, "The command changed files: sed -i s/old/new/ src/x.c src/y.c"));

  // Negative control: "apply" with the same kind of list writes both.
  person_->Queue("a");
  fd = TwoFileChange("x again\n", "y again\n");
  outcome = Propose(fd.get());
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->kind(), applier::ApplyOutcome::APPLIED);
  EXPECT_EQ(Read(pair_.project + "/src/x.c"), "x again\n");
  EXPECT_EQ(Read(pair_.project + "/src/y.c"), "y again\n");
}

// The chosen subset still goes through the conflict check, all or nothing:
// the chosen file changed meanwhile, nothing is written.
TEST_F(StagedQuestionTest, TheChosenSubsetKeepsTheConflictCheck) {
  StartApplier();
  for (const char* key : {"c", "a", "d"}) person_->Queue(key);
  // At the confirmation, the person edits src/x.c in the project.
  person_->OnQuestion([this](const std::string& shown) {
    if (absl::StrContains(shown, "and discard the rest?")) {
      Write(pair_.project + "/src/x.c", "edited meanwhile\n");
    }
  });
  person_->Queue("a");
  UniqueFd fd = TwoFileChange();
  auto outcome = Propose(fd.get());
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->kind(), applier::ApplyOutcome::CONFLICT)
      << outcome->line();
  EXPECT_EQ(Read(pair_.project + "/src/x.c"), "edited meanwhile\n");
  EXPECT_EQ(Read(pair_.project + "/src/y.c"), y_before_);
  EXPECT_EQ(outcome->applied_paths_size(), 0);
}

// The title says the command as the agent's tool line does, also for a
// command of several lines, tabs, hidden characters and more than 200
// bytes (the line is cut at the same character).
TEST_F(StagedQuestionTest, TheTitleSaysTheCommandAsTheToolLineDoes) {
  std::string command = "printf 'a\tb' >> src/x.c &&\n  echo \xe2\x80\xae";
  for (int i = 0; i < 30; ++i) command += " \xc3\xa9t\xc3\xa9";
  std::string line = agent::ToolCallSummary(
      "bash", absl::StrCat(R"({"command":)", JsonQuoted(command),
                           "}"),
      command);
  ASSERT_TRUE(absl::StartsWith(line, "bash: ")) << line;
  StartApplier();
  person_->Queue("d");
  Write(pair_.staged + "/src/x.c", "x changed\n");
  BuildOptions options;
  options.project = pair_.project;
  options.command = command;
  auto change_set = BuildFromCopy(pair_.staged, options);
  ASSERT_TRUE(change_set.ok()) << change_set.status();
  ASSERT_TRUE(LoadContents(&*change_set).ok());
  auto fd = ipc::SealedMemfd("staged", [&](int memfd) {
    return WriteChangeSet(*change_set, memfd, "test list");
  });
  ASSERT_TRUE(fd.ok());
  ASSERT_TRUE(Propose(fd->get()).ok());
  // The terminal shows the tool line made visible (lib/terminal/terminal.cc).
  std::string title = absl::StrCat("The command changed files: ",
                                   MakeTextVisible(line.substr(6)), "\r\n");
  EXPECT_TRUE(absl::StrContains(person_->Shown(), title))
      << title << "\n" << person_->Shown();
}

TEST_F(StagedQuestionTest, ViewPagesAndSearchesInOurOwnPager) {
  StartApplier();
  std::string many;
  for (int i = 0; i < 200; ++i) many += absl::StrCat("line ", i, "\n");
  // View; a page on; search; back to the question; discard.
  person_->QueueKeys("v");
  person_->QueueKeys(" ");
  person_->Queue("/line 150");
  person_->QueueKeys("q");
  person_->Queue("d");
  UniqueFd fd = TwoFileChange(many, "y\n");
  auto outcome = Propose(fd.get());
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->kind(), applier::ApplyOutcome::DECLINED);
  std::string shown = person_->Shown();
  EXPECT_TRUE(absl::StrContains(shown, "-- lines 1-23 of ")) << shown;
  EXPECT_TRUE(absl::StrContains(shown, "-- lines 24-46 of ")) << shown;
  EXPECT_TRUE(absl::StrContains(shown, "found \"line 150\"")) << shown;
  // The question comes back after q, with the summary beside it.
  size_t quit = shown.rfind("[q] quit");
  ASSERT_NE(quit, std::string::npos);
  EXPECT_NE(shown.find("2 files: +", quit), std::string::npos) << shown;
  EXPECT_NE(shown.find("Apply these changes?", quit), std::string::npos);
  EXPECT_EQ(Read(pair_.project + "/src/x.c"), x_before_);
  // Without escapes ($TERM unset) it prints pages; the second screen is
  // for a terminal that has escapes (below).
  EXPECT_FALSE(absl::StrContains(shown, "\x1b[?1049h"));
}

// With escapes the pager draws on the terminal's second screen and leaves
// it, so the question is on the screen as it was.
TEST_F(StagedQuestionTest, ThePagerUsesTheSecondScreen) {
  ::setenv("TERM", "xterm", 1);
  ::setenv("NO_COLOR", "1", 1);
  StartApplier();
  person_->QueueKeys("v");
  person_->QueueKeys("q");
  person_->Queue("d");
  UniqueFd fd = TwoFileChange();
  auto outcome = Propose(fd.get());
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->kind(), applier::ApplyOutcome::DECLINED);
  std::string shown = person_->Shown();
  size_t enter = shown.find("\x1b[?1049h");
  ASSERT_NE(enter, std::string::npos) << shown;
  size_t leave = shown.find("\x1b[?1049l", enter);
  ASSERT_NE(leave, std::string::npos);
  EXPECT_NE(shown.find("Apply these changes?", leave), std::string::npos);
  EXPECT_EQ(Read(pair_.project + "/src/x.c"), x_before_);
}

TEST_F(StagedQuestionTest, ColoursOnlyWhereTheTerminalHasThem) {
  ::setenv("TERM", "xterm-256color", 1);
  StartApplier();
  person_->Queue("d");
  UniqueFd fd = TwoFileChange();
  ASSERT_TRUE(Propose(fd.get()).ok());
  std::string shown = person_->Shown();
  EXPECT_TRUE(absl::StrContains(shown, "\x1b[32m+x changed\x1b[0m")) << shown;
  EXPECT_TRUE(absl::StrContains(shown, "\x1b[31m-")) << shown;
  applier_->Stop().IgnoreError();
  applier_.reset();

  // NO_COLOR, and a dumb terminal: the same diff without escapes.
  for (const char* setting : {"NO_COLOR", "TERM"}) {
    ::setenv("TERM", "xterm-256color", 1);
    if (std::string(setting) == "NO_COLOR") {
      ::setenv("NO_COLOR", "1", 1);
    } else {
      ::unsetenv("NO_COLOR");
      ::setenv("TERM", "dumb", 1);
    }
    auto person = PtyPerson::Open();
    ASSERT_TRUE(person.ok());
    person_ = std::move(*person);
    seq_ = 0;
    StartApplier();
    person_->Queue("d");
    fd = TwoFileChange("x third\n", "y third\n");
    ASSERT_TRUE(Propose(fd.get()).ok());
    shown = person_->Shown();
    EXPECT_TRUE(absl::StrContains(shown, "+x third")) << setting;
    EXPECT_FALSE(absl::StrContains(shown, "\x1b[3")) << setting << shown;
    applier_->Stop().IgnoreError();
    applier_.reset();
  }
}

// One key press, no Enter: the terminal is raw for the question (no line
// editing, no echo) and as it was before once it is answered.
TEST_F(StagedQuestionTest, OneKeyPressAnswersAndTheTerminalIsRestored) {
  struct termios before;
  ASSERT_EQ(::tcgetattr(person_->terminal_fd(), &before), 0);
  ASSERT_NE(before.c_lflag & ICANON, 0u);  // the control: line mode now
  StartApplier();
  tcflag_t during = ICANON;
  person_->OnQuestion([this, &during](const std::string&) {
    struct termios now;
    if (::tcgetattr(person_->terminal_fd(), &now) == 0) {
      during = now.c_lflag & (ICANON | ECHO);
    }
  });
  person_->QueueKeys("a");  // no newline: a line-mode read would wait
  UniqueFd fd = TwoFileChange();
  auto outcome = Propose(fd.get());
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_EQ(outcome->kind(), applier::ApplyOutcome::APPLIED);
  EXPECT_EQ(during, 0u);  // raw while it asked
  struct termios after;
  ASSERT_EQ(::tcgetattr(person_->terminal_fd(), &after), 0);
  EXPECT_EQ(after.c_lflag & (ICANON | ECHO | ISIG),
            before.c_lflag & (ICANON | ECHO | ISIG));
  EXPECT_EQ(after.c_cc[VSUSP], before.c_cc[VSUSP]);
}

// A SIGTERM in the middle of the question ends the applier, and the
// terminal is put back first.
TEST_F(StagedQuestionTest, SigtermAtTheQuestionRestoresTheTerminal) {
  struct termios before;
  ASSERT_EQ(::tcgetattr(person_->terminal_fd(), &before), 0);
  StartApplier();
  pid_t pid = applier_->pid();
  tcflag_t during = ICANON;
  person_->OnQuestion([this, pid, &during](const std::string&) {
    struct termios now;
    if (::tcgetattr(person_->terminal_fd(), &now) == 0) {
      during = now.c_lflag & ICANON;
    }
    ::kill(pid, SIGTERM);
  });
  person_->QueueKeys("");  // nothing typed
  UniqueFd fd = TwoFileChange();
  auto outcome = Propose(fd.get());
  EXPECT_FALSE(outcome.ok());  // the applier is gone
  EXPECT_EQ(during, 0u);       // it was raw: restoring was needed
  struct termios after;
  ASSERT_EQ(::tcgetattr(person_->terminal_fd(), &after), 0);
  EXPECT_EQ(after.c_lflag & (ICANON | ECHO), before.c_lflag & (ICANON | ECHO));
  EXPECT_EQ(Read(pair_.project + "/src/x.c"), x_before_);
  applier_->Stop().IgnoreError();
  applier_.reset();
}

}  // namespace
}  // namespace garuda
