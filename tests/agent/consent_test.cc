// The helper that acts decides (issue 12 point 1), against the real
// programs: this test is a fake garuda-agent on the channels of
// `garuda-applier serve` and `garuda-stager serve`. It sends what a broken
// or hostile agent could send, a ChangeSet or an on_host command with no
// person's yes, and the helper refuses it with nothing written. The
// negative control of each: the same request with the person answering yes
// on a pseudo-terminal (the helper's --terminal) goes through, so the
// refusal is the helper's own decision and not a broken request.
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/changeset/changeset.h"
#include "lib/changeset/test_tree.h"
#include "lib/ipc/helper_process.h"
#include "lib/ipc/sealed_memfd.h"
#include "lib/tools/edit_tools.h"
#include "lib/tools/project.h"
#include "proto/applier_service.pb.h"
#include "proto/stager_service.pb.h"
#include "tests/agent/fakes.h"
#include "tests/agent/pty_person.h"

namespace garuda {
namespace {

using garuda::testing::PtyPerson;
using garuda::testing::Runfile;

class ConsentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string base = garuda::testing::NewTempDir("consent");
    home_ = base + "/home";
    root_ = base + "/project";
    garuda::testing::MakeDir(home_ + "/.garuda");
    garuda::testing::MakeDir(root_);
    garuda::testing::Write(root_ + "/notes.txt", "old line\n");
    ::setenv("HOME", home_.c_str(), 1);
    ::setenv("GARUDA_MANAGED_POLICY_DIR", (base + "/managed").c_str(), 1);
    auto person = PtyPerson::Open();
    ASSERT_TRUE(person.ok()) << person.status();
    person_ = std::move(*person);
  }

  void TearDown() override {
    for (auto& helper : helpers_) {
      if (helper) {
        EXPECT_TRUE(helper->Stop().ok()) << helper->exit_description();
      }
    }
  }

  // A helper started as garuda-agent starts it, with `consent`.
  ipc::HelperProcess* Start(const std::string& program,
                            const std::string& consent,
                            std::vector<std::string> more = {}) {
    ipc::HelperOptions options;
    options.argv = {Runfile(absl::StrCat("cmd/", program, "/", program)),
                    "serve",
                    "--channel-fd=3",
                    "--project",
                    root_,
                    "--quiet",
                    "--consent=" + consent,
                    "--terminal=" + person_->path()};
    options.argv.insert(options.argv.end(), more.begin(), more.end());
    options.channel.max_frame_bytes = 4 << 20;
    auto started = ipc::HelperProcess::Spawn(options);
    EXPECT_TRUE(started.ok()) << started.status();
    if (!started.ok()) return nullptr;
    helpers_.push_back(std::move(*started));
    return helpers_.back().get();
  }

  // What an agent would propose: "notes.txt" gets `content` (from what it
  // is now).
  ChangeSet Proposed(const std::string& content = "model line\n") {
    auto project = Project::Open(root_);
    EXPECT_TRUE(project.ok()) << project.status();
    WriteFileInput input;
    input.path = "notes.txt";
    input.content = content;
    auto edit = ProposeWriteFile(**project, input);
    EXPECT_TRUE(edit.ok()) << edit.status();
    return edit.ok() ? std::move(edit->change_set) : ChangeSet();
  }

  UniqueFd Sealed(const ChangeSet& change_set) {
    auto fd = ipc::SealedMemfd("test", [&](int fd) {
      return WriteChangeSet(change_set, fd, "test list");
    });
    EXPECT_TRUE(fd.ok()) << fd.status();
    return fd.ok() ? *std::move(fd) : UniqueFd();
  }

  applier::ApplierReply Apply(ipc::HelperProcess* applier, int fd,
                              applier::ApplyChangeSet::Origin origin,
                              const RelayedAnswer* relayed = nullptr) {
    applier::ApplierRequest request;
    request.set_seq(++seq_[applier]);
    applier::ApplyChangeSet* apply = request.mutable_apply();
    apply->set_reason("test");
    apply->set_session_id("consent-test");
    apply->set_origin(origin);
    if (origin == applier::ApplyChangeSet::EDIT) apply->set_tool("write_file");
    if (relayed != nullptr) *apply->mutable_relayed_answer() = *relayed;
    applier::ApplierReply reply;
    const int fds[] = {fd};
    absl::Status called = applier->Call(request, &reply, nullptr, fds);
    EXPECT_TRUE(called.ok()) << called;
    EXPECT_EQ(reply.seq(), request.seq());
    return reply;
  }

  stager::StagerReply RunOnHost(ipc::HelperProcess* stager,
                                const std::string& command,
                                const RelayedAnswer* relayed = nullptr) {
    stager::StagerRequest request;
    request.set_seq(++seq_[stager]);
    request.mutable_run()->set_command(command);
    request.mutable_run()->set_on_host(true);
    if (relayed != nullptr) {
      *request.mutable_run()->mutable_relayed_answer() = *relayed;
    }
    stager::StagerReply reply;
    absl::Status called = stager->Call(request, &reply);
    EXPECT_TRUE(called.ok()) << called;
    EXPECT_EQ(reply.seq(), request.seq());
    return reply;
  }

  std::string Notes() { return garuda::testing::Read(root_ + "/notes.txt"); }
  bool HostMade() {
    return ::access((root_ + "/host-made").c_str(), F_OK) == 0;
  }
  void Settings(const std::string& json) {
    garuda::testing::Write(home_ + "/.garuda/settings.json", json);
  }

  std::string home_, root_;
  std::unique_ptr<PtyPerson> person_;
  std::vector<std::unique_ptr<ipc::HelperProcess>> helpers_;
  // Each channel counts its own requests from 1.
  std::map<ipc::HelperProcess*, uint64_t> seq_;
};

TEST_F(ConsentTest, AChangeNobodyAgreedToIsNotWritten) {
  ipc::HelperProcess* applier = Start("garuda-applier", "rules");
  ASSERT_NE(applier, nullptr);
  ChangeSet change_set = Proposed();
  for (auto origin :
       {applier::ApplyChangeSet::COMMAND, applier::ApplyChangeSet::EDIT}) {
    UniqueFd fd = Sealed(change_set);
    applier::ApplierReply reply = Apply(applier, fd.get(), origin);
    ASSERT_TRUE(reply.has_applied()) << reply.DebugString();
    EXPECT_EQ(reply.applied().kind(), applier::ApplyOutcome::DECLINED);
    EXPECT_TRUE(absl::StrContains(reply.applied().decision(), "no person"))
        << reply.applied().decision();
    EXPECT_EQ(Notes(), "old line\n");
  }
  EXPECT_EQ(person_->questions(), 0);  // rules only: nobody was asked
}

// The negative control: the same list, and the person says yes at the
// applier's own question.
TEST_F(ConsentTest, TheSameChangeIsWrittenWhenThePersonSaysYes) {
  ipc::HelperProcess* applier = Start("garuda-applier", "terminal");
  ASSERT_NE(applier, nullptr);
  person_->Queue("a");
  UniqueFd fd = Sealed(Proposed());
  applier::ApplierReply reply =
      Apply(applier, fd.get(), applier::ApplyChangeSet::COMMAND);
  ASSERT_TRUE(reply.has_applied()) << reply.DebugString();
  EXPECT_EQ(reply.applied().kind(), applier::ApplyOutcome::APPLIED)
      << reply.applied().line();
  EXPECT_EQ(reply.applied().decision(), "asked: apply");
  EXPECT_EQ(Notes(), "model line\n");
  EXPECT_TRUE(absl::StrContains(person_->Shown(), "notes.txt"));

  // An edit gets the permission question with its diff; a no writes
  // nothing, a yes writes.
  ChangeSet back = Proposed("old line\n");
  person_->Queue("n");
  fd = Sealed(back);
  reply = Apply(applier, fd.get(), applier::ApplyChangeSet::EDIT);
  EXPECT_EQ(reply.applied().kind(), applier::ApplyOutcome::DECLINED);
  EXPECT_EQ(reply.applied().decision(), "asked: no");
  EXPECT_EQ(Notes(), "model line\n");
  EXPECT_TRUE(absl::StrContains(person_->Shown(), "Write notes.txt"));
  person_->Queue("y");
  fd = Sealed(back);
  reply = Apply(applier, fd.get(), applier::ApplyChangeSet::EDIT);
  EXPECT_EQ(reply.applied().kind(), applier::ApplyOutcome::APPLIED)
      << reply.applied().line();
  EXPECT_EQ(Notes(), "old line\n");
}

// Without a person, the rules the applier read itself decide: the user's
// allow rule lets it write; the same rule in the project's own settings
// does not (a cloned project cannot allow itself changes).
TEST_F(ConsentTest, WithoutAPersonTheAppliersOwnRulesDecide) {
  garuda::testing::MakeDir(root_ + "/.garuda");
  garuda::testing::Write(root_ + "/.garuda/settings.json",
                         R"({"permissions": {"allow": ["write_file"]}})");
  ipc::HelperProcess* project_only = Start("garuda-applier", "rules");
  ASSERT_NE(project_only, nullptr);
  UniqueFd fd = Sealed(Proposed());
  applier::ApplierReply reply =
      Apply(project_only, fd.get(), applier::ApplyChangeSet::COMMAND);
  EXPECT_EQ(reply.applied().kind(), applier::ApplyOutcome::DECLINED);
  EXPECT_EQ(Notes(), "old line\n");

  Settings(R"json({"permissions": {"allow": ["write_file(notes.txt)"]}})json");
  ipc::HelperProcess* applier = Start("garuda-applier", "rules");
  ASSERT_NE(applier, nullptr);
  fd = Sealed(Proposed());
  reply = Apply(applier, fd.get(), applier::ApplyChangeSet::COMMAND);
  EXPECT_EQ(reply.applied().kind(), applier::ApplyOutcome::APPLIED)
      << reply.applied().line();
  EXPECT_TRUE(
      absl::StrContains(reply.applied().decision(), "write_file(notes.txt)"))
      << reply.applied().decision();
  EXPECT_EQ(Notes(), "model line\n");
}

// The list must be a sealed memfd: an agent that could still change it
// after the question (or while the applier reads it) is refused. Control:
// the same bytes sealed are applied.
TEST_F(ConsentTest, AnUnsealedListIsRefused) {
  Settings(R"({"permissions": {"allow": ["write_file"]}})");
  ipc::HelperProcess* applier = Start("garuda-applier", "rules");
  ASSERT_NE(applier, nullptr);
  ChangeSet change_set = Proposed();
  UniqueFd open(::memfd_create("unsealed", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  ASSERT_TRUE(open);
  ASSERT_TRUE(WriteChangeSet(change_set, open.get(), "unsealed").ok());
  applier::ApplierReply reply =
      Apply(applier, open.get(), applier::ApplyChangeSet::COMMAND);
  ASSERT_TRUE(reply.has_error()) << reply.DebugString();
  EXPECT_TRUE(absl::StrContains(reply.error().message(), "F_SEAL_WRITE"))
      << reply.error().message();
  EXPECT_EQ(Notes(), "old line\n");

  UniqueFd fd = Sealed(change_set);
  reply = Apply(applier, fd.get(), applier::ApplyChangeSet::COMMAND);
  EXPECT_EQ(reply.applied().kind(), applier::ApplyOutcome::APPLIED)
      << reply.DebugString();
  EXPECT_EQ(Notes(), "model line\n");
}

// A relayed answer ("the person said yes") is the agent's word: refused by
// an applier that can find out itself, taken (and named) only by one
// started to take it.
TEST_F(ConsentTest, ARelayedYesIsTakenOnlyWhereTheAnswerCanComeOnlyThrough) {
  RelayedAnswer yes;
  yes.set_from("acp");
  yes.set_yes(true);
  for (const char* mode : {"rules", "terminal"}) {
    ipc::HelperProcess* applier = Start("garuda-applier", mode);
    ASSERT_NE(applier, nullptr);
    UniqueFd fd = Sealed(Proposed());
    applier::ApplierReply reply =
        Apply(applier, fd.get(), applier::ApplyChangeSet::EDIT, &yes);
    ASSERT_TRUE(reply.has_error()) << mode << ": " << reply.DebugString();
    EXPECT_EQ(reply.error().code(),
              static_cast<int>(absl::StatusCode::kPermissionDenied));
    EXPECT_EQ(Notes(), "old line\n") << mode;
  }
  EXPECT_EQ(person_->questions(), 0);

  ipc::HelperProcess* relayed = Start("garuda-applier", "relayed");
  ASSERT_NE(relayed, nullptr);
  UniqueFd fd = Sealed(Proposed());
  RelayedAnswer no = yes;
  no.set_yes(false);
  applier::ApplierReply reply =
      Apply(relayed, fd.get(), applier::ApplyChangeSet::EDIT, &no);
  EXPECT_EQ(reply.applied().kind(), applier::ApplyOutcome::DECLINED);
  EXPECT_EQ(Notes(), "old line\n");
  fd = Sealed(Proposed());
  reply = Apply(relayed, fd.get(), applier::ApplyChangeSet::EDIT, &yes);
  EXPECT_EQ(reply.applied().kind(), applier::ApplyOutcome::APPLIED)
      << reply.DebugString();
  EXPECT_EQ(reply.applied().decision(),
            "answer relayed by garuda-agent from acp: yes");
  EXPECT_EQ(Notes(), "model line\n");
}

TEST_F(ConsentTest, AnOnHostCommandNobodyAgreedToDoesNotRun) {
  ipc::HelperProcess* stager = Start("garuda-stager", "rules");
  ASSERT_NE(stager, nullptr);
  stager::StagerReply reply = RunOnHost(stager, "touch host-made");
  ASSERT_TRUE(reply.has_error()) << reply.DebugString();
  EXPECT_EQ(reply.error().code(),
            static_cast<int>(absl::StatusCode::kPermissionDenied));
  EXPECT_TRUE(absl::StrContains(reply.error().message(), "no person"))
      << reply.error().message();
  EXPECT_FALSE(HostMade());

  // A relayed yes is not taken either.
  RelayedAnswer yes;
  yes.set_from("acp");
  yes.set_yes(true);
  reply = RunOnHost(stager, "touch host-made", &yes);
  ASSERT_TRUE(reply.has_error()) << reply.DebugString();
  EXPECT_FALSE(HostMade());
}

// The negative controls: the person says no, then yes, at the stager's
// own question; and an allow rule the stager read itself.
TEST_F(ConsentTest, AnOnHostCommandRunsWhenThePersonOrARuleAgrees) {
  ipc::HelperProcess* stager = Start("garuda-stager", "terminal");
  ASSERT_NE(stager, nullptr);
  person_->Queue("n");
  stager::StagerReply reply = RunOnHost(stager, "touch host-made");
  ASSERT_TRUE(reply.has_error()) << reply.DebugString();
  EXPECT_FALSE(HostMade());
  EXPECT_TRUE(
      absl::StrContains(person_->Shown(), "Run on the host: touch host-made"));
  person_->Queue("y");
  reply = RunOnHost(stager, "touch host-made");
  ASSERT_TRUE(reply.has_result()) << reply.DebugString();
  EXPECT_TRUE(reply.result().on_host());
  EXPECT_EQ(reply.result().consent(), "asked: yes");
  EXPECT_TRUE(HostMade());
  EXPECT_EQ(person_->questions(), 2);
  ::unlink((root_ + "/host-made").c_str());

  Settings(R"json({"permissions": {"allow": ["bash(touch *)"]}})json");
  ipc::HelperProcess* ruled = Start("garuda-stager", "rules");
  ASSERT_NE(ruled, nullptr);
  reply = RunOnHost(ruled, "touch host-made");
  ASSERT_TRUE(reply.has_result()) << reply.DebugString();
  EXPECT_TRUE(absl::StrContains(reply.result().consent(), "bash(touch *)"))
      << reply.result().consent();
  EXPECT_TRUE(HostMade());
  // The rule covers what it names only.
  reply = RunOnHost(ruled, "rm host-made");
  ASSERT_TRUE(reply.has_error()) << reply.DebugString();
  EXPECT_TRUE(HostMade());
}

}  // namespace
}  // namespace garuda
