// A job's scope in the OS sandbox (sandbox/mount_plan.h scope_paths), and
// bubblewrap given the same policy (sandbox/bwrap_args.h), as the reference
// for behaviour: a write in the scope works, a write beside it fails, a
// denied file inside the scope stays denied, and both sandboxes agree.
// Control: without the scope, the write beside it works in both.
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/changeset/test_tree.h"
#include "sandbox/bwrap_args.h"
#include "sandbox/command_policy.h"
#include "sandbox/sandbox.h"

namespace garuda {
namespace {

using garuda::testing::Read;
using garuda::testing::Write;

class ScopeSandboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char real[4096];
    const std::string made = garuda::testing::NewTempDir("scope-sandbox");
    ASSERT_NE(::realpath(made.c_str(), real), nullptr);
    project_ = std::string(real) + "/worktree";
    Write(project_ + "/src/a.c", "int a;\n");
    Write(project_ + "/src/secret.key", "secret\n");
    Write(project_ + "/ci/deploy.yml", "deploy: safe\n");
    bwrap_ = FindBwrap();
  }

  SandboxPolicy Policy(bool scoped) {
    SandboxPolicy policy;
    policy.set_project(project_);
    policy.set_project_writable(true);
    policy.set_seccomp_role("command");
    for (const char* path : {"/usr", "/bin", "/lib", "/lib64", "/etc"}) {
      policy.add_read_only_paths(path);
    }
    policy.add_denied_paths("src/secret.key");
    (*policy.mutable_environment())["PATH"] = "/usr/bin:/bin";
    if (scoped) ScopeProjectWrites({"src"}, &policy);
    return policy;
  }

  // The exit code of `script` in our sandbox or in bubblewrap.
  int Run(bool bwrap, const SandboxPolicy& policy, const std::string& script) {
    RunOptions options;
    options.capture_output = true;
    if (bwrap) {
      options.argv = BwrapArgsFor(bwrap_, policy, -1);
      options.argv.insert(options.argv.end(), {"/bin/sh", "-c", script});
      absl::StatusOr<RunResult> ran = RunOnHost(options, project_);
      EXPECT_TRUE(ran.ok()) << ran.status();
      return ran.ok() ? ran->exit_code : -1;
    }
    options.argv = {"/bin/sh", "-c", script};
    absl::StatusOr<RunResult> ran = RunInSandbox(policy, options);
    EXPECT_TRUE(ran.ok()) << ran.status();
    return ran.ok() ? ran->exit_code : -1;
  }

  std::string project_, bwrap_;
};

TEST_F(ScopeSandboxTest, OnlyTheScopeIsWritableInBothSandboxes) {
  for (bool bwrap : {false, true}) {
    if (bwrap && bwrap_.empty()) {
      ADD_FAILURE() << "bwrap is not installed (tools/setup.sh installs it)";
      continue;
    }
    for (bool scoped : {true, false}) {
      SCOPED_TRACE(absl::StrCat(bwrap ? "bwrap" : "garuda", ", ",
                                scoped ? "scoped" : "no scope (control)"));
      Write(project_ + "/ci/deploy.yml", "deploy: safe\n");
      const SandboxPolicy policy = Policy(scoped);
      EXPECT_EQ(Run(bwrap, policy, "echo 'int a = 1;' > src/a.c"), 0);
      EXPECT_EQ(Read(project_ + "/src/a.c"), "int a = 1;\n");
      const int outside = Run(bwrap, policy, "echo evil > ci/deploy.yml");
      if (scoped) {
        EXPECT_NE(outside, 0);
        EXPECT_EQ(Read(project_ + "/ci/deploy.yml"), "deploy: safe\n");
      } else {
        EXPECT_EQ(outside, 0);
        EXPECT_EQ(Read(project_ + "/ci/deploy.yml"), "evil\n");
      }
      // The denied file inside the scope: neither read nor written.
      EXPECT_NE(Run(bwrap, policy, "cat src/secret.key | grep -q secret"), 0);
      EXPECT_NE(Run(bwrap, policy, "echo x > src/secret.key"), 0);
      EXPECT_EQ(Read(project_ + "/src/secret.key"), "secret\n");
    }
  }
}

}  // namespace
}  // namespace garuda
