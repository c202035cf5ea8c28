// The helpers hold a job's scope themselves (issue 16, docs/jobs.md "What
// holds the scope"): this test is a fake garuda-agent on the channels of
// the real `garuda-stager serve --job` and `garuda-applier serve --job`,
// sending what a broken or hostile agent could send with every check of
// the agent left out. Negative controls: the same requests to the same
// helpers started without --job go through.
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

namespace garuda {
namespace {

using garuda::testing::Read;
using garuda::testing::Runfile;
using garuda::testing::Write;

class HelpersScopeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string base = garuda::testing::NewTempDir("scope");
    home_ = base + "/home";
    worktree_ = base + "/worktree";
    job_ = base + "/checkout/.garuda/jobs/nightly.json";
    garuda::testing::MakeDir(home_ + "/.garuda");
    Write(worktree_ + "/src/a.c", "int a;\n");
    Write(worktree_ + "/ci/deploy.yml", "deploy: safe\n");
    // The job's own rule allows every write and every command; the scope
    // must still hold.
    Write(job_, R"json({"prompt": "p", "writeScope": ["src"],
        "permissions": {"allow": ["write_file", "bash"]}})json");
    // The same rules as the person's, for the controls without --job.
    Write(home_ + "/.garuda/settings.json",
          R"json({"permissions": {"allow": ["write_file", "bash"]}})json");
    ::setenv("HOME", home_.c_str(), 1);
    ::setenv("GARUDA_MANAGED_POLICY_DIR", (base + "/managed").c_str(), 1);
  }

  void TearDown() override {
    for (auto& helper : helpers_) {
      if (helper) {
        EXPECT_TRUE(helper->Stop().ok()) << helper->exit_description();
      }
    }
  }

  ipc::HelperProcess* Start(const std::string& program, bool job) {
    ipc::HelperOptions options;
    options.argv = {Runfile(absl::StrCat("cmd/", program, "/", program)),
                    "serve",
                    "--channel-fd=3",
                    "--project",
                    worktree_,
                    "--quiet",
                    "--consent=rules"};
    if (program == "garuda-stager") options.argv.push_back("--mode=direct");
    if (job) options.argv.push_back("--job=" + job_);
    options.channel.max_frame_bytes = 4 << 20;
    auto started = ipc::HelperProcess::Spawn(options);
    EXPECT_TRUE(started.ok()) << started.status();
    if (!started.ok()) return nullptr;
    helpers_.push_back(std::move(*started));
    return helpers_.back().get();
  }

  stager::StagerReply Run(ipc::HelperProcess* stager,
                          const std::string& command, bool on_host) {
    stager::StagerRequest request;
    request.set_seq(++seq_[stager]);
    request.mutable_run()->set_command(command);
    request.mutable_run()->set_on_host(on_host);
    stager::StagerReply reply;
    absl::Status called = stager->Call(request, &reply);
    EXPECT_TRUE(called.ok()) << called;
    return reply;
  }

  applier::ApplierReply Edit(ipc::HelperProcess* applier,
                             const std::string& path,
                             const std::string& content) {
    auto project = Project::Open(worktree_);
    EXPECT_TRUE(project.ok()) << project.status();
    WriteFileInput input;
    input.path = path;
    input.content = content;
    auto edit = ProposeWriteFile(**project, input);
    EXPECT_TRUE(edit.ok()) << edit.status();
    auto fd = ipc::SealedMemfd("test", [&](int fd) {
      return WriteChangeSet(edit->change_set, fd, "test list");
    });
    EXPECT_TRUE(fd.ok()) << fd.status();
    applier::ApplierRequest request;
    request.set_seq(++seq_[applier]);
    applier::ApplyChangeSet* apply = request.mutable_apply();
    apply->set_reason("test");
    apply->set_session_id("scope-test");
    apply->set_origin(applier::ApplyChangeSet::EDIT);
    apply->set_tool("write_file");
    applier::ApplierReply reply;
    const int fds[] = {fd->get()};
    absl::Status called = applier->Call(request, &reply, nullptr, fds);
    EXPECT_TRUE(called.ok()) << called;
    return reply;
  }

  std::string home_, worktree_, job_;
  std::vector<std::unique_ptr<ipc::HelperProcess>> helpers_;
  std::map<ipc::HelperProcess*, uint64_t> seq_;
};

TEST_F(HelpersScopeTest, TheStagerScopesAJobsCommandsItself) {
  for (bool job : {true, false}) {
    SCOPED_TRACE(job ? "--job" : "without --job (control)");
    garuda::testing::Write(worktree_ + "/ci/deploy.yml", "deploy: safe\n");
    ipc::HelperProcess* stager = Start("garuda-stager", job);
    ASSERT_NE(stager, nullptr);
    stager::StagerReply outside =
        Run(stager, "echo evil > ci/deploy.yml", false);
    ASSERT_TRUE(outside.has_result()) << outside.DebugString();
    stager::StagerReply inside = Run(stager, "echo 'int b;' > src/b.c", false);
    ASSERT_TRUE(inside.has_result()) << inside.DebugString();
    EXPECT_EQ(inside.result().exit_code(), 0);
    if (job) {
      EXPECT_NE(outside.result().exit_code(), 0);
      EXPECT_TRUE(absl::StrContains(outside.result().stderr_data(),
                                    "Read-only file system"))
          << outside.result().stderr_data();
      EXPECT_EQ(Read(worktree_ + "/ci/deploy.yml"), "deploy: safe\n");
    } else {
      EXPECT_EQ(outside.result().exit_code(), 0);
      EXPECT_EQ(Read(worktree_ + "/ci/deploy.yml"), "evil\n");
    }
  }
}

TEST_F(HelpersScopeTest, TheStagerRunsNothingOnTheHostForAJob) {
  const std::string marker = worktree_ + "/host-made";
  ipc::HelperProcess* stager = Start("garuda-stager", true);
  ASSERT_NE(stager, nullptr);
  stager::StagerReply reply = Run(stager, "touch " + marker, true);
  ASSERT_TRUE(reply.has_error()) << reply.DebugString();
  EXPECT_EQ(reply.error().code(),
            static_cast<int>(absl::StatusCode::kPermissionDenied));
  EXPECT_TRUE(absl::StrContains(reply.error().message(),
                                "a job never runs a command outside"))
      << reply.error().message();
  EXPECT_NE(::access(marker.c_str(), F_OK), 0);

  // Control: without --job the person's allow rule lets it run on the host.
  ipc::HelperProcess* plain = Start("garuda-stager", false);
  ASSERT_NE(plain, nullptr);
  reply = Run(plain, "touch " + marker, true);
  ASSERT_TRUE(reply.has_result()) << reply.DebugString();
  EXPECT_EQ(::access(marker.c_str(), F_OK), 0);
}

TEST_F(HelpersScopeTest, TheApplierRefusesAnEditOutsideTheScope) {
  ipc::HelperProcess* applier = Start("garuda-applier", true);
  ASSERT_NE(applier, nullptr);
  applier::ApplierReply outside = Edit(applier, "ci/deploy.yml", "evil\n");
  ASSERT_TRUE(outside.has_applied()) << outside.DebugString();
  EXPECT_EQ(outside.applied().kind(), applier::ApplyOutcome::REFUSED)
      << outside.applied().line();
  EXPECT_TRUE(absl::StrContains(outside.applied().line(),
                                "outside the job's write scope"))
      << outside.applied().line();
  EXPECT_EQ(Read(worktree_ + "/ci/deploy.yml"), "deploy: safe\n");
  // In the scope, the job's own allow rule lets it write.
  applier::ApplierReply inside = Edit(applier, "src/a.c", "int a = 1;\n");
  EXPECT_EQ(inside.applied().kind(), applier::ApplyOutcome::APPLIED)
      << inside.applied().line();
  EXPECT_EQ(Read(worktree_ + "/src/a.c"), "int a = 1;\n");

  // Control: without --job the same rule (the person's) writes it.
  ipc::HelperProcess* plain = Start("garuda-applier", false);
  ASSERT_NE(plain, nullptr);
  applier::ApplierReply control = Edit(plain, "ci/deploy.yml", "evil\n");
  EXPECT_EQ(control.applied().kind(), applier::ApplyOutcome::APPLIED)
      << control.applied().line();
  EXPECT_EQ(Read(worktree_ + "/ci/deploy.yml"), "evil\n");
}

}  // namespace
}  // namespace garuda
