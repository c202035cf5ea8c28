// garuda-stager serve and garuda-applier serve driven as garuda-agent drives
// them: the real binaries on a socketpair (HelperProcess::Spawn), one
// request at a time. Each refusal has its negative control.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/unique_fd.h"
#include "lib/changeset/changeset.h"
#include "lib/changeset/test_tree.h"
#include "lib/ipc/channel.h"
#include "lib/ipc/helper_process.h"
#include "lib/ipc/testing/test_util.h"
#include "proto/applier_service.pb.h"
#include "proto/stager_service.pb.h"
#include "sandbox/sandbox.h"

namespace garuda {
namespace {

using ::garuda::testing::NewTempDir;
using ::garuda::testing::Read;
using ::garuda::testing::Write;

std::string Program(const std::string& name) {
  return absl::StrCat(std::getenv("TEST_SRCDIR"), "/garuda/cmd/", name, "/",
                      name);
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

// The names in `folder` (empty when it does not exist).
std::vector<std::string> Names(const std::string& folder) {
  std::vector<std::string> names;
  UniqueFd fd(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return names;
  DIR* dir = ::fdopendir(fd.Release());
  while (struct dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(dir);
  return names;
}

class ServeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = NewTempDir("serve");
    project_ = JoinPath(root_, "project");
    home_ = JoinPath(root_, "home");
    etc_ = JoinPath(root_, "etc");
    outside_ = JoinPath(root_, "outside");
    for (const std::string& dir : {project_, home_, etc_, outside_}) {
      ASSERT_TRUE(MakeDirectories(dir, 0755).ok());
    }
    ::setenv("HOME", home_.c_str(), 1);
    ::setenv("GARUDA_MANAGED_POLICY_DIR", etc_.c_str(), 1);
    ::unsetenv("GARUDA_TEST_ONLY_FAIL_STAGING");
    // The stager and the applier decide themselves (lib/consent); with
    // nobody at a terminal here, these rules of the user's, which they read
    // themselves, let them run on_host commands and apply changes.
    ASSERT_TRUE(MakeDirectories(JoinPath(home_, ".garuda"), 0700).ok());
    Write(JoinPath(home_, ".garuda/settings.json"),
          R"({"permissions": {"allow": ["bash", "write_file"]}})");
    Write(JoinPath(project_, "a.txt"), "old\n");
    Write(JoinPath(project_, ".gitignore"), "build/\n");
    Host(
        "git init -q && git add -A && git -c user.name=t -c "
        "user.email=t@t commit -qm base");
  }
  void TearDown() override { ::unsetenv("GARUDA_TEST_ONLY_FAIL_STAGING"); }

  // A shell command on the host, in the project.
  void Host(const std::string& command) {
    RunOptions options;
    options.argv = {"/bin/sh", "-c", command};
    options.capture_output = true;
    absl::StatusOr<RunResult> result = RunOnHost(options, project_);
    ASSERT_TRUE(result.ok()) << result.status();
    ASSERT_TRUE(result->ok()) << command << ": " << result->stderr_data;
  }

  std::unique_ptr<ipc::HelperProcess> Spawn(std::vector<std::string> argv) {
    ipc::HelperOptions options;
    options.argv = std::move(argv);
    absl::StatusOr<std::unique_ptr<ipc::HelperProcess>> helper =
        ipc::HelperProcess::Spawn(options);
    EXPECT_TRUE(helper.ok()) << helper.status();
    return helper.ok() ? *std::move(helper) : nullptr;
  }

  // Each process counts its own seq from 1.
  std::unique_ptr<ipc::HelperProcess> Stager(const std::string& mode,
                                             const std::string& backend = "") {
    std::vector<std::string> argv = {Program("garuda-stager"),
                                     "serve",
                                     "--channel-fd=3",
                                     "--project",
                                     project_,
                                     "--mode",
                                     mode,
                                     "--session-id",
                                     "s1"};
    if (!backend.empty()) {
      argv.push_back("--backend");
      argv.push_back(backend);
    }
    stager_seq_ = 0;
    return Spawn(argv);
  }

  std::unique_ptr<ipc::HelperProcess> Applier() {
    applier_seq_ = 0;
    return Spawn({Program("garuda-applier"), "serve", "--channel-fd=3",
                  "--project", project_, "--undo-root",
                  JoinPath(home_, "undo")});
  }

  stager::SessionDescription Describe(ipc::HelperProcess& stager) {
    stager::StagerRequest request;
    request.set_seq(++stager_seq_);
    request.mutable_describe();
    stager::StagerReply reply;
    absl::Status called = stager.Call(request, &reply);
    EXPECT_TRUE(called.ok()) << called;
    EXPECT_EQ(reply.seq(), request.seq());
    EXPECT_TRUE(reply.has_description()) << reply.DebugString();
    return reply.description();
  }

  // Sends RunCommand; the reply, and the ChangeSet memfd when one came.
  stager::StagerReply Run(ipc::HelperProcess& stager,
                          const std::string& command,
                          UniqueFd* change_set = nullptr, bool on_host = false,
                          uint32_t timeout_seconds = 60) {
    stager::StagerRequest request;
    request.set_seq(++stager_seq_);
    request.mutable_run()->set_command(command);
    request.mutable_run()->set_on_host(on_host);
    request.mutable_run()->set_timeout_seconds(timeout_seconds);
    stager::StagerReply reply;
    std::vector<UniqueFd> fds;
    absl::Status called = stager.Call(request, &reply, &fds);
    EXPECT_TRUE(called.ok()) << called;
    EXPECT_EQ(reply.seq(), request.seq());
    if (change_set != nullptr && !fds.empty()) *change_set = std::move(fds[0]);
    return reply;
  }

  void End(ipc::HelperProcess& stager) {
    stager::StagerRequest request;
    request.set_seq(++stager_seq_);
    request.mutable_end();
    stager::StagerReply reply;
    ASSERT_TRUE(stager.Call(request, &reply).ok());
    EXPECT_TRUE(reply.has_ended()) << reply.DebugString();
    EXPECT_TRUE(stager.Stop().ok()) << stager.exit_description();
  }

  // The staging folders of this HOME.
  std::vector<std::string> StagingFolders() {
    return Names(JoinPath(home_, ".garuda/staging"));
  }

  applier::ApplierReply Apply(ipc::HelperProcess& applier, int change_set_fd) {
    applier::ApplierRequest request;
    request.set_seq(++applier_seq_);
    request.mutable_apply()->set_reason("bash: test");
    request.mutable_apply()->set_session_id("s1");
    request.mutable_apply()->set_origin(applier::ApplyChangeSet::COMMAND);
    applier::ApplierReply reply;
    int fds[] = {change_set_fd};
    absl::Status called = applier.Call(request, &reply, nullptr, fds);
    EXPECT_TRUE(called.ok()) << called;
    EXPECT_EQ(reply.seq(), request.seq());
    return reply;
  }

  applier::ApplierReply Undo(ipc::HelperProcess& applier,
                             const std::string& id) {
    applier::ApplierRequest request;
    request.set_seq(++applier_seq_);
    request.mutable_undo()->set_undo_id(id);
    request.mutable_undo()->set_session_id("s1");
    applier::ApplierReply reply;
    absl::Status called = applier.Call(request, &reply);
    EXPECT_TRUE(called.ok()) << called;
    return reply;
  }

  // A staged run of `command` that changes the project's files: its list.
  UniqueFd StagedChange(const std::string& command) {
    std::unique_ptr<ipc::HelperProcess> stager = Stager("staged");
    UniqueFd fd;
    stager::StagerReply reply = Run(*stager, command, &fd);
    EXPECT_TRUE(reply.result().has_change_set()) << reply.DebugString();
    End(*stager);
    return fd;
  }

  std::string root_, project_, home_, etc_, outside_;
  uint64_t stager_seq_ = 0;
  uint64_t applier_seq_ = 0;
};

// A command that does not finish (here its wall time ends it) still has
// its changes listed, and the list says how it ended, so the question can
// say they may be partial. Control: the same write by a command that ends
// on its own leaves that empty.
TEST_F(ServeTest, AStagedCommandThatDidNotFinishSaysSoInItsList) {
  std::unique_ptr<ipc::HelperProcess> stager = Stager("staged");
  ASSERT_NE(stager, nullptr);
  for (bool finishes : {false, true}) {
    SCOPED_TRACE(finishes ? "finishes" : "timed out");
    UniqueFd fd;
    stager::StagerReply reply =
        Run(*stager, finishes ? "echo part > a.txt" : "echo part > a.txt; exec sleep 60", &fd,
            false, finishes ? 60 : 1);
    ASSERT_TRUE(reply.has_result()) << reply.DebugString();
    ASSERT_TRUE(reply.result().has_change_set()) << reply.DebugString();
    absl::StatusOr<ChangeSet> change_set = ReadChangeSet(fd.get(), "memfd");
    ASSERT_TRUE(change_set.ok()) << change_set.status();
    ASSERT_NE(testing::FindEntry(*change_set, "a.txt"), nullptr);
    if (finishes) {
      EXPECT_EQ(change_set->header.ended_early(), "");
    } else {
      EXPECT_TRUE(absl::StartsWith(change_set->header.ended_early(), "timed out"))
          << change_set->header.ended_early();
    }
  }
  End(*stager);
}

TEST_F(ServeTest, DirectRunCapturesOutputAndExitCode) {
  std::unique_ptr<ipc::HelperProcess> stager = Stager("direct");
  ASSERT_NE(stager, nullptr);
  stager::SessionDescription description = Describe(*stager);
  EXPECT_EQ(description.mode(), "direct");
  EXPECT_EQ(description.profile(), "default");
  EXPECT_TRUE(description.sandboxed()) << description.sandbox_problem();

  UniqueFd change_set;
  stager::StagerReply reply =
      Run(*stager,
          "echo out; echo err >&2; echo direct > made.txt; "
          "hostname; exit 3",
          &change_set);
  ASSERT_TRUE(reply.has_result()) << reply.DebugString();
  const stager::CommandResult& result = reply.result();
  EXPECT_EQ(result.kind(), stager::CommandResult::EXITED);
  EXPECT_EQ(result.exit_code(), 3);
  EXPECT_EQ(result.stdout_data(), "out\ngaruda\n");  // inside the sandbox
  EXPECT_EQ(result.stderr_data(), "err\n");
  EXPECT_FALSE(result.on_host());
  EXPECT_FALSE(result.has_change_set());
  EXPECT_FALSE(change_set);
  // Direct mode writes the project (the negative control of staged mode).
  EXPECT_EQ(Read(JoinPath(project_, "made.txt")), "direct\n");

  // The cap: the rest of the output is read and dropped.
  stager::StagerRequest request;
  request.set_seq(++stager_seq_);
  request.mutable_run()->set_command("head -c 5000 /dev/zero");
  request.mutable_run()->set_output_limit(100);
  stager::StagerReply capped;
  ASSERT_TRUE(stager->Call(request, &capped).ok());
  EXPECT_EQ(capped.result().stdout_data().size(), 100u);
  EXPECT_TRUE(capped.result().stdout_truncated());

  // The timeout, in the sandbox and on the host.
  for (bool on_host : {false, true}) {
    stager::StagerReply slow = Run(*stager, "sleep 30", nullptr, on_host, 1);
    ASSERT_TRUE(slow.has_result()) << slow.DebugString();
    EXPECT_EQ(slow.result().kind(), stager::CommandResult::TIMED_OUT);
    EXPECT_EQ(slow.result().on_host(), on_host);
  }
  End(*stager);
}

TEST_F(ServeTest, StagedRunReturnsTheChangeInASealedMemfd) {
  std::unique_ptr<ipc::HelperProcess> stager = Stager("staged");
  ASSERT_NE(stager, nullptr);
  stager::SessionDescription description = Describe(*stager);
  EXPECT_EQ(description.mode(), "staged");
  EXPECT_FALSE(description.backend().empty());
  ASSERT_EQ(StagingFolders().size(), 1u);

  UniqueFd fd;
  stager::StagerReply reply =
      Run(*stager, "echo new > a.txt; echo added > b.txt; echo done", &fd);
  ASSERT_TRUE(reply.has_result()) << reply.DebugString();
  EXPECT_EQ(reply.result().stdout_data(), "done\n");
  EXPECT_TRUE(reply.result().has_change_set());
  EXPECT_EQ(reply.result().changed_files(), 2u);
  ASSERT_TRUE(fd);
  int seals = ::fcntl(fd.get(), F_GET_SEALS);
  EXPECT_TRUE(seals & F_SEAL_WRITE);
  EXPECT_TRUE(seals & F_SEAL_SEAL);
  EXPECT_LT(::write(fd.get(), "x", 1), 0);  // nobody can change it now
  absl::StatusOr<ChangeSet> change_set = ReadChangeSet(fd.get(), "memfd");
  ASSERT_TRUE(change_set.ok()) << change_set.status();
  const ChangeEntry* a = testing::FindEntry(*change_set, "a.txt");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->kind(), CHANGE_KIND_MODIFIED);
  const ChangeEntry* b = testing::FindEntry(*change_set, "b.txt");
  ASSERT_NE(b, nullptr);
  auto changed_a = std::find_if(
      change_set->changes.begin(), change_set->changes.end(),
      [](const Change& change) { return change.entry.path() == "a.txt"; });
  ASSERT_NE(changed_a, change_set->changes.end());
  EXPECT_EQ(changed_a->content, "new\n");
  // The project did not change.
  EXPECT_EQ(Read(JoinPath(project_, "a.txt")), "old\n");
  EXPECT_FALSE(Exists(JoinPath(project_, "b.txt")));

  // A command that changes nothing: no list.
  UniqueFd none;
  reply = Run(*stager, "true", &none);
  EXPECT_FALSE(reply.result().has_change_set());
  EXPECT_FALSE(none);

  End(*stager);
  EXPECT_TRUE(StagingFolders().empty());  // the view went with the session
}

class ServeBackendTest : public ServeTest,
                         public ::testing::WithParamInterface<const char*> {};

TEST_P(ServeBackendTest, IgnoredOutputsStayForTheNextCommandNotTheProject) {
  std::unique_ptr<ipc::HelperProcess> stager = Stager("staged", GetParam());
  ASSERT_NE(stager, nullptr);
  EXPECT_EQ(Describe(*stager).backend(), GetParam());
  UniqueFd fd;
  stager::StagerReply first =
      Run(*stager, "mkdir -p build && echo built > build/out", &fd);
  ASSERT_TRUE(first.has_result()) << first.DebugString();
  EXPECT_EQ(first.result().exit_code(), 0);
  EXPECT_FALSE(first.result().has_change_set());  // ignored: no question
  // The person edits the project between two commands: the view follows.
  Write(JoinPath(project_, "a.txt"), "edited\n");
  stager::StagerReply second = Run(*stager, "cat build/out a.txt", &fd);
  ASSERT_TRUE(second.has_result()) << second.DebugString();
  EXPECT_EQ(second.result().stdout_data(), "built\nedited\n");
  EXPECT_FALSE(Exists(JoinPath(project_, "build")));
  End(*stager);
}

// Many commands on one view: from the third on, the copy backend knows
// what changed from its watches instead of walking (lib/staging:
// staging_test has each rule with its negative control).
TEST_P(ServeBackendTest, EveryCommandSeesThePersonsEditsAndListsItsOwnWrites) {
  std::unique_ptr<ipc::HelperProcess> stager = Stager("staged", GetParam());
  ASSERT_NE(stager, nullptr);
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(Run(*stager, "true").result().has_change_set());
  }
  Host("echo edited >> a.txt && mkdir -p n/m && echo z > n/m/z.txt");
  stager::StagerReply seen = Run(*stager, "cat a.txt n/m/z.txt");
  EXPECT_EQ(seen.result().stdout_data(), "old\nedited\nz\n");
  UniqueFd fd;
  stager::StagerReply wrote =
      Run(*stager,
          "echo w >> a.txt && mkdir -p q && echo q > q/q.txt "
          "&& mv n n2",
          &fd);
  ASSERT_TRUE(wrote.has_result()) << wrote.DebugString();
  // a.txt, q/q.txt, n/m/z.txt, n2/m/z.txt and the folders q, n, n/m, n2,
  // n2/m: the same for both backends.
  EXPECT_EQ(wrote.result().changed_files(), 9u);
  absl::StatusOr<ChangeSet> list = ReadChangeSet(fd.get(), "memfd");
  ASSERT_TRUE(list.ok()) << list.status();
  for (const char* path : {"a.txt", "q/q.txt", "n/m/z.txt", "n2/m/z.txt"}) {
    EXPECT_NE(testing::FindEntry(*list, path), nullptr) << path;
  }
  // Not applied: the next command sees the project again.
  UniqueFd none;
  EXPECT_FALSE(Run(*stager, "true", &none).result().has_change_set());
  Host("rm -rf n");
  stager::StagerReply after =
      Run(*stager, "test ! -e n && test ! -e q && cat a.txt");
  EXPECT_EQ(after.result().exit_code(), 0) << after.DebugString();
  EXPECT_EQ(after.result().stdout_data(), "old\nedited\n");
  End(*stager);
}

INSTANTIATE_TEST_SUITE_P(Backends, ServeBackendTest,
                         ::testing::Values("overlay", "copy"));

TEST_F(ServeTest, OnHostIsRefusedInStrictAndRunsOtherwise) {
  // Negative control first: the default profile runs it on the host, where
  // it writes the real project even in staged mode (never staged).
  {
    std::unique_ptr<ipc::HelperProcess> stager = Stager("staged");
    stager::StagerReply reply =
        Run(*stager, "hostname; touch host-made", nullptr, /*on_host=*/true);
    ASSERT_TRUE(reply.has_result()) << reply.DebugString();
    EXPECT_TRUE(reply.result().on_host());
    EXPECT_NE(reply.result().stdout_data(), "garuda\n");
    EXPECT_FALSE(reply.result().has_change_set());
    EXPECT_TRUE(Exists(JoinPath(project_, "host-made")));
    // A process it leaves running on the host does not hold the reply
    // (with its output on a pipe, the reply would wait the whole sleep and
    // the test would time out).
    stager::StagerReply left =
        Run(*stager, "sleep 900 & echo $! > ../left.pid; echo started", nullptr,
            true);
    ASSERT_TRUE(left.has_result()) << left.DebugString();
    EXPECT_EQ(left.result().stdout_data(), "started\n");
    Host("kill $(cat ../left.pid)");
    End(*stager);
  }
  ::unlink(JoinPath(project_, "host-made").c_str());
  Write(JoinPath(project_, ".garuda/settings.json"),
        R"({"profile": "strict"})");
  for (const char* mode : {"direct", "staged"}) {
    std::unique_ptr<ipc::HelperProcess> stager = Stager(mode);
    EXPECT_EQ(Describe(*stager).profile(), "strict");
    stager::StagerReply reply = Run(*stager, "touch host-made", nullptr, true);
    EXPECT_TRUE(reply.has_error()) << reply.DebugString();
    EXPECT_NE(reply.error().message().find("strict profile"), std::string::npos)
        << reply.error().message();
    EXPECT_FALSE(Exists(JoinPath(project_, "host-made")));
    // The channel goes on after an error reply.
    EXPECT_TRUE(Run(*stager, "true").has_result());
    End(*stager);
  }
}

// How many running processes have `--project PROJECT` on their command
// line (the stager, its guard, a waiting or running on_host runner) and
// pass `also`, given their argv and /proc/PID/status.
int StagerProcesses(
    const std::string& project,
    const std::function<bool(const std::vector<std::string>& argv,
                             const std::string& status)>& also) {
  int count = 0;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return -1;
  while (struct dirent* entry = ::readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    const std::string dir = absl::StrCat("/proc/", entry->d_name);
    absl::StatusOr<std::string> cmdline =
        ReadFileToString(JoinPath(dir, "cmdline"));
    absl::StatusOr<std::string> status =
        ReadFileToString(JoinPath(dir, "status"));
    if (!cmdline.ok() || !status.ok()) continue;  // ended meanwhile
    std::vector<std::string> argv = absl::StrSplit(*cmdline, '\0');
    bool ours = false;
    for (size_t i = 0; i + 1 < argv.size(); ++i) {
      if (argv[i] == "--project" && argv[i + 1] == project) ours = true;
    }
    if (ours && also(argv, *status)) ++count;
  }
  ::closedir(proc);
  return count;
}

// How many on_host runners of this project run: processes whose command
// line is `garuda-stager serve ... --project PROJECT --mode host`.
int HostRunners(const std::string& project) {
  return StagerProcesses(
      project, [](const std::vector<std::string>& argv, const std::string&) {
        for (size_t i = 0; i + 1 < argv.size(); ++i) {
          if (argv[i] == "--mode" && argv[i + 1] == "host") return true;
        }
        return false;
      });
}

// The runner of on_host commands cannot be confined, so it execs only at
// the first host command the stager agrees to (docs/lockdown.md, "The host
// runner"): a session of sandboxed commands never has one.
TEST_F(ServeTest, TheHostRunnerStartsOnlyAtTheFirstAgreedHostCommand) {
  for (const char* mode : {"direct", "staged"}) {
    SCOPED_TRACE(mode);
    std::unique_ptr<ipc::HelperProcess> stager = Stager(mode);
    EXPECT_EQ(Run(*stager, "true").result().exit_code(), 0);
    EXPECT_EQ(HostRunners(project_), 0);
    // Control: after an on_host command (allowed by the user's `bash`
    // rule) the runner is there, and serves the next one too.
    stager::StagerReply host = Run(*stager, "true", nullptr, /*on_host=*/true);
    ASSERT_TRUE(host.has_result()) << host.DebugString();
    EXPECT_TRUE(host.result().on_host());
    EXPECT_EQ(HostRunners(project_), 1);
    EXPECT_TRUE(Run(*stager, "true", nullptr, true).result().on_host());
    EXPECT_EQ(HostRunners(project_), 1);
    End(*stager);
    EXPECT_EQ(HostRunners(project_), 0);
  }
}

// Processes of this project's stager that are not locked down:
// no_new_privs unset, no seccomp filter.
int UnconfinedStagerProcesses(const std::string& project) {
  return StagerProcesses(
      project, [](const std::vector<std::string>&, const std::string& status) {
        return absl::StrContains(status, "NoNewPrivs:\t0") &&
               absl::StrContains(status, "Seccomp:\t0");
      });
}

// Where no host command can be agreed to (here: no person to ask, and no
// allow rule for bash), the stager keeps no on_host runner, not even one
// waiting before its exec: the session has no unconfined process. The
// control: with an allow rule for bash (SetUp's), the waiting runner is
// there, unconfined, from the start, and gone with the session.
TEST_F(ServeTest, NoUnconfinedProcessWhereNoHostCommandCanBeAgreedTo) {
  for (const char* mode : {"direct", "staged"}) {
    SCOPED_TRACE(mode);
    Write(JoinPath(home_, ".garuda/settings.json"),
          R"({"permissions": {"allow": ["write_file"]}})");
    std::unique_ptr<ipc::HelperProcess> stager = Stager(mode);
    EXPECT_EQ(Run(*stager, "true").result().exit_code(), 0);
    EXPECT_EQ(UnconfinedStagerProcesses(project_), 0);
    stager::StagerReply host = Run(*stager, "true", nullptr, /*on_host=*/true);
    EXPECT_TRUE(host.has_error()) << host.DebugString();
    EXPECT_EQ(UnconfinedStagerProcesses(project_), 0);
    End(*stager);
  }
}

TEST_F(ServeTest, NegativeControlAnAllowRuleForBashKeepsTheRunnerWaiting) {
  for (const char* mode : {"direct", "staged"}) {
    SCOPED_TRACE(mode);
    std::unique_ptr<ipc::HelperProcess> stager = Stager(mode);
    EXPECT_EQ(Run(*stager, "true").result().exit_code(), 0);
    EXPECT_EQ(HostRunners(project_), 0);  // not exec'd
    EXPECT_EQ(UnconfinedStagerProcesses(project_), 1);
    End(*stager);
    EXPECT_EQ(UnconfinedStagerProcesses(project_), 0);
  }
}

TEST_F(ServeTest, WithoutASandboxOnlyAnAgreedOnHostCommandRuns) {
  // The fake probe (DirectRunCapturesOutputAndExitCode is the control: there
  // the sandbox works and the command runs in it).
  ::setenv("GARUDA_TEST_ONLY_PRETEND_NO_SANDBOX", "1", 1);
  std::unique_ptr<ipc::HelperProcess> stager = Stager("direct");
  ::unsetenv("GARUDA_TEST_ONLY_PRETEND_NO_SANDBOX");
  stager::SessionDescription description = Describe(*stager);
  EXPECT_FALSE(description.sandboxed());
  EXPECT_NE(description.sandbox_problem().find("fix"), std::string::npos)
      << description.sandbox_problem();
  stager::StagerReply refused = Run(*stager, "touch made");
  EXPECT_TRUE(refused.has_error()) << refused.DebugString();
  EXPECT_FALSE(Exists(JoinPath(project_, "made")));
  stager::StagerReply host =
      Run(*stager, "touch made", nullptr, /*on_host=*/true);
  ASSERT_TRUE(host.has_result()) << host.DebugString();
  EXPECT_TRUE(host.result().on_host());
  EXPECT_TRUE(Exists(JoinPath(project_, "made")));
  End(*stager);
}

TEST_F(ServeTest, AStagingFailureIsAnErrorReplyAndNothingRuns) {
  // The command writes a marker in a writable folder outside the project,
  // so that a run shows in either mode.
  Write(JoinPath(home_, ".garuda/settings.json"),
        absl::StrCat(R"({"sandbox": {"writePaths": [")", outside_, R"("]}})"));
  const std::string marker = JoinPath(outside_, "ran");
  const std::string command = absl::StrCat("touch ", marker);
  // Negative control: without the seam the command runs.
  {
    std::unique_ptr<ipc::HelperProcess> stager = Stager("staged");
    stager::StagerReply reply = Run(*stager, command);
    ASSERT_TRUE(reply.has_result()) << reply.DebugString();
    EXPECT_TRUE(Exists(marker));
    End(*stager);
  }
  ::unlink(marker.c_str());
  ::setenv("GARUDA_TEST_ONLY_FAIL_STAGING", "1", 1);
  std::unique_ptr<ipc::HelperProcess> stager = Stager("staged");
  stager::SessionDescription description = Describe(*stager);
  EXPECT_EQ(description.mode(), "staged");  // never direct mode instead
  stager::StagerReply reply = Run(*stager, command);
  ASSERT_TRUE(reply.has_error()) << reply.DebugString();
  EXPECT_NE(reply.error().message().find("could not be set up"),
            std::string::npos)
      << reply.error().message();
  EXPECT_FALSE(Exists(marker));
  End(*stager);
}

TEST_F(ServeTest, AKilledStagersViewIsRemovedAtTheNextStart) {
  {
    std::unique_ptr<ipc::HelperProcess> stager = Stager("staged");
    ASSERT_TRUE(Run(*stager, "echo x > a.txt").has_result());
    EXPECT_EQ(StagingFolders().size(), 1u);
    // The destructor kills it (SIGKILL): nothing cleans up.
  }
  std::vector<std::string> left = StagingFolders();
  ASSERT_EQ(left.size(), 1u);  // the negative control
  // The process killed is the guard; the view's lock is held by its child,
  // the run, and whatever the run had forked, which die of
  // PR_SET_PDEATHSIG just after. The next start comes once they are gone.
  std::string lock_file =
      JoinPath(JoinPath(JoinPath(home_, ".garuda/staging"), left[0]), "lock");
  UniqueFd lock(::open(lock_file.c_str(), O_RDWR | O_CLOEXEC));
  ASSERT_TRUE(lock) << lock_file;
  absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    ASSERT_LT(absl::Now(), deadline)
        << "the killed stager's processes still hold " << lock_file;
    ::usleep(1000);
  }
  lock.Reset();
  std::unique_ptr<ipc::HelperProcess> stager = Stager("staged");
  Describe(*stager);
  std::vector<std::string> now = StagingFolders();
  ASSERT_EQ(now.size(), 1u);
  EXPECT_NE(now[0], left[0]);
  End(*stager);
}

TEST_F(ServeTest, AGarbageFrameEndsTheStagersChannel) {
  std::unique_ptr<ipc::HelperProcess> stager = Stager("staged");
  // A command changes a.txt in the view, so that the project's a.txt below
  // says something: the broken channel applies nothing of it.
  stager::StagerReply ran = Run(*stager, "echo changed > a.txt");
  ASSERT_TRUE(ran.has_result()) << ran.DebugString();
  EXPECT_EQ(ran.result().changed_files(), 1u);
  EXPECT_EQ(StagingFolders().size(), 1u);
  ASSERT_TRUE(ipc::SendRaw(stager->channel().fd(),
                           ipc::LengthPrefix(7) + "\xff\xff\xff garbage")
                  .ok());
  // Bytes that do not parse get an error reply that says so, and end the
  // channel.
  stager::StagerReply reply;
  absl::Status status = stager->channel().Receive(&reply);
  ASSERT_TRUE(status.ok()) << status;
  ASSERT_TRUE(reply.has_error()) << reply.DebugString();
  EXPECT_EQ(reply.error().code(),
            static_cast<int>(absl::StatusCode::kInvalidArgument));
  EXPECT_NE(reply.error().message().find("does not parse"), std::string::npos)
      << reply.error().message();
  // It exits by itself with status 1 (a broken channel), with no crash.
  absl::Status stopped = stager->Stop();
  EXPECT_FALSE(stopped.ok());
  EXPECT_NE(stager->exit_description().find("exited with status 1"),
            std::string::npos)
      << stager->exit_description();
  EXPECT_TRUE(StagingFolders().empty());
  EXPECT_EQ(Read(JoinPath(project_, "a.txt")), "old\n");
}

// garuda-stager serve locks itself down before it serves (Role::kStager):
// its seccomp role refuses userfaultfd, and a filter is inherited, so a
// command it starts in the sandbox gets EPERM too, although the command's
// own filter allows it. The negative control: the same call from an
// on_host command (the on_host runner takes no lockdown) works.
TEST_F(ServeTest, TheStagersLockdownHoldsForWhatItStarts) {
  const std::string attempt =
      "python3 -c 'import ctypes, os\n"
      "number = {\"x86_64\": 323, \"aarch64\": 282}[os.uname().machine]\n"
      "libc = ctypes.CDLL(None, use_errno=True)\n"
      "fd = libc.syscall(number, 1)  # UFFD_USER_MODE_ONLY\n"
      "print(\"ok\" if fd >= 0 else os.strerror(ctypes.get_errno()))'";
  for (const char* mode : {"direct", "staged"}) {
    std::unique_ptr<ipc::HelperProcess> stager = Stager(mode);
    stager::StagerReply sandboxed = Run(*stager, attempt);
    ASSERT_TRUE(sandboxed.has_result()) << sandboxed.DebugString();
    EXPECT_EQ(sandboxed.result().stdout_data(), "Operation not permitted\n")
        << mode << ": " << sandboxed.result().stderr_data();
    stager::StagerReply host = Run(*stager, attempt, nullptr, /*on_host=*/true);
    ASSERT_TRUE(host.has_result()) << host.DebugString();
    EXPECT_EQ(host.result().stdout_data(), "ok\n")
        << mode << ": " << host.result().stderr_data();
    End(*stager);
  }
}

// A caught signal ends serve with its view removed (issue 14, point 14);
// the test above it, where SIGKILL leaves the folder, is the control.
TEST_F(ServeTest, ASignalToTheStagerRemovesItsView) {
  for (int sig : {SIGTERM, SIGHUP, SIGINT}) {
    std::unique_ptr<ipc::HelperProcess> stager = Stager("staged", "copy");
    ASSERT_TRUE(Run(*stager, "echo x > a.txt").has_result());
    ASSERT_EQ(StagingFolders().size(), 1u) << "signal " << sig;
    ASSERT_EQ(::kill(stager->pid(), sig), 0);
    // It ends by itself (the pidfd turns readable) within the deadline.
    struct pollfd ended = {stager->pidfd(), POLLIN, 0};
    ASSERT_EQ(::poll(&ended, 1, 60000), 1) << "signal " << sig;
    EXPECT_FALSE(stager->Stop().ok());
    EXPECT_TRUE(WIFSIGNALED(stager->wait_status()) &&
                WTERMSIG(stager->wait_status()) == sig)
        << stager->exit_description();
    EXPECT_TRUE(StagingFolders().empty()) << "signal " << sig;
    EXPECT_EQ(Read(JoinPath(project_, "a.txt")), "old\n");
  }
}

TEST_F(ServeTest, ApplyThroughTheApplierWritesTheProjectAndUndoRestores) {
  UniqueFd list = StagedChange("echo new > a.txt; echo added > b.txt");
  ASSERT_TRUE(list);
  std::unique_ptr<ipc::HelperProcess> applier = Applier();
  ASSERT_NE(applier, nullptr);
  applier::ApplierReply reply = Apply(*applier, list.get());
  ASSERT_TRUE(reply.has_applied()) << reply.DebugString();
  EXPECT_EQ(reply.applied().kind(), applier::ApplyOutcome::APPLIED);
  EXPECT_EQ(reply.applied().line(), "The user applied the changes");
  EXPECT_EQ(reply.applied().files(), 2u);
  EXPECT_FALSE(reply.applied().undo_id().empty());
  EXPECT_EQ(Read(JoinPath(project_, "a.txt")), "new\n");
  EXPECT_EQ(Read(JoinPath(project_, "b.txt")), "added\n");

  // The session's last apply, by session id.
  applier::ApplierReply undone = Undo(*applier, "");
  ASSERT_TRUE(undone.has_undone()) << undone.DebugString();
  EXPECT_EQ(undone.undone().kind(), applier::ApplyOutcome::APPLIED);
  EXPECT_EQ(undone.undone().undo_id(), reply.applied().undo_id());
  EXPECT_EQ(Read(JoinPath(project_, "a.txt")), "old\n");
  EXPECT_FALSE(Exists(JoinPath(project_, "b.txt")));
  // Nothing of the session is left to undo.
  applier::ApplierReply again = Undo(*applier, "");
  EXPECT_TRUE(again.has_error()) << again.DebugString();
  EXPECT_EQ(Read(JoinPath(project_, "a.txt")), "old\n");
  EXPECT_TRUE(applier->Stop().ok()) << applier->exit_description();
}

TEST_F(ServeTest, AConflictWritesNothing) {
  UniqueFd list = StagedChange("echo new > a.txt; echo added > b.txt");
  ASSERT_TRUE(list);
  // The person changes a.txt after the list was made.
  Write(JoinPath(project_, "a.txt"), "person\n");
  std::unique_ptr<ipc::HelperProcess> applier = Applier();
  applier::ApplierReply reply = Apply(*applier, list.get());
  ASSERT_TRUE(reply.has_applied()) << reply.DebugString();
  EXPECT_EQ(reply.applied().kind(), applier::ApplyOutcome::CONFLICT);
  ASSERT_EQ(reply.applied().conflicts_size(), 1);
  EXPECT_EQ(reply.applied().conflicts(0), "a.txt");
  EXPECT_NE(reply.applied().line().find("conflict"), std::string::npos);
  EXPECT_EQ(Read(JoinPath(project_, "a.txt")), "person\n");
  EXPECT_FALSE(Exists(JoinPath(project_, "b.txt")));
  EXPECT_TRUE(applier->Stop().ok()) << applier->exit_description();
}

TEST_F(ServeTest, AnIncompleteListIsRefusedAndWritesNothing) {
  ::setenv("GARUDA_TEST_ONLY_FILE_LIMIT", "1", 1);
  std::unique_ptr<ipc::HelperProcess> stager = Stager("staged");
  ::unsetenv("GARUDA_TEST_ONLY_FILE_LIMIT");
  UniqueFd list;
  stager::StagerReply reply = Run(*stager, "touch n1 n2 n3", &list);
  ASSERT_TRUE(reply.has_result()) << reply.DebugString();
  EXPECT_TRUE(reply.result().change_set_incomplete());
  ASSERT_TRUE(list);
  End(*stager);
  std::unique_ptr<ipc::HelperProcess> applier = Applier();
  applier::ApplierReply applied = Apply(*applier, list.get());
  ASSERT_TRUE(applied.has_applied()) << applied.DebugString();
  EXPECT_EQ(applied.applied().kind(), applier::ApplyOutcome::REFUSED);
  EXPECT_NE(applied.applied().line().find("incomplete"), std::string::npos);
  EXPECT_FALSE(Exists(JoinPath(project_, "n1")));
}

TEST_F(ServeTest, BadListsAndGarbageFramesWriteNothing) {
  std::map<std::string, std::string> before = testing::Snapshot(project_);
  std::unique_ptr<ipc::HelperProcess> applier = Applier();
  // A list that is not a ChangeSet stream: an error reply, the channel
  // goes on.
  UniqueFd junk(::memfd_create("junk", MFD_CLOEXEC));
  ASSERT_TRUE(WriteAll(junk.get(), "\x05\x00\x00\x00junk!").ok());
  ::lseek(junk.get(), 0, SEEK_SET);
  applier::ApplierReply reply = Apply(*applier, junk.get());
  EXPECT_TRUE(reply.has_error()) << reply.DebugString();
  // A pipe is refused (its writer could hold the applier forever).
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  UniqueFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
  reply = Apply(*applier, read_end.get());
  EXPECT_TRUE(reply.has_error()) << reply.DebugString();
  // A garbage frame ends the channel; the applier exits without a crash.
  ASSERT_TRUE(ipc::SendRaw(applier->channel().fd(),
                           ipc::LengthPrefix(7) + "\xff\xff\xff garbage")
                  .ok());
  // Bytes that do not parse get an error reply that says so, and end the
  // channel.
  applier::ApplierReply last;
  absl::Status received = applier->channel().Receive(&last);
  ASSERT_TRUE(received.ok()) << received;
  ASSERT_TRUE(last.has_error()) << last.DebugString();
  EXPECT_NE(last.error().message().find("does not parse"), std::string::npos)
      << last.error().message();
  // The applier exits by itself, not by a signal (no crash).
  EXPECT_FALSE(applier->Stop().ok());
  EXPECT_NE(applier->exit_description().find("exited with status"),
            std::string::npos)
      << applier->exit_description();
  EXPECT_EQ(testing::Snapshot(project_), before);
}

}  // namespace
}  // namespace garuda
