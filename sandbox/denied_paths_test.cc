#include "sandbox/denied_paths.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/unique_fd.h"

namespace garuda {
namespace {

struct SocketPair {
  UniqueFd write, read;
};

SocketPair MakePair() {
  int ends[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends), 0);
  return {UniqueFd(ends[0]), UniqueFd(ends[1])};
}

TEST(DeniedPathsTest, StepsArriveAsSent) {
  SocketPair pair = MakePair();
  std::vector<MountStep> sent = {
      {MountStep::Kind::kDenyDir, "", "/etc/ssl/private"},
      {MountStep::Kind::kDenyFile, "", "/etc/shadow"},
      {MountStep::Kind::kDenyFile, "", "/etc/a name with spaces"}};
  ASSERT_TRUE(SendDenySteps(pair.write.get(), sent).ok());
  pair.write.Reset();
  auto got = ReceiveDenySteps(pair.read.get());
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), sent.size());
  for (size_t i = 0; i < sent.size(); ++i) {
    EXPECT_EQ((*got)[i].kind, sent[i].kind);
    EXPECT_EQ((*got)[i].target, sent[i].target);
  }
  // None at all is a list too, with its end marker.
  SocketPair empty = MakePair();
  ASSERT_TRUE(SendDenySteps(empty.write.get(), {}).ok());
  empty.write.Reset();
  auto none = ReceiveDenySteps(empty.read.get());
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_TRUE(none->empty());
}

// A supervisor that stops before the end marker (it failed, or died) leaves
// PID 1 with an error, never with a shorter list that it would apply.
TEST(DeniedPathsTest, AListCutShortIsAnError) {
  SocketPair pair = MakePair();
  const std::string cut = std::string("d/etc/ssl/private") + '\0' + "f/etc/sh";
  ASSERT_EQ(::write(pair.write.get(), cut.data(), cut.size()),
            static_cast<ssize_t>(cut.size()));
  pair.write.Reset();
  auto got = ReceiveDenySteps(pair.read.get());
  EXPECT_FALSE(got.ok());
  // Nothing sent at all: the same.
  SocketPair silent = MakePair();
  silent.write.Reset();
  EXPECT_FALSE(ReceiveDenySteps(silent.read.get()).ok());
  // The control: the same bytes with the record and the marker finished.
  SocketPair whole = MakePair();
  const std::string done = cut + "adow" + '\0' + "E";
  ASSERT_EQ(::write(whole.write.get(), done.data(), done.size()),
            static_cast<ssize_t>(done.size()));
  whole.write.Reset();
  auto finished = ReceiveDenySteps(whole.read.get());
  ASSERT_TRUE(finished.ok()) << finished.status();
  EXPECT_EQ(finished->size(), 2u);
}

class DeniedStepsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = JoinPath(std::getenv("TEST_TMPDIR"), "ldXXXXXX");
    root_ = ::mkdtemp(templ.data());
  }
  void Make(const std::string& relative, mode_t mode, bool folder) {
    const std::string path = JoinPath(root_, relative);
    if (folder) {
      ASSERT_TRUE(MakeDirectories(path, mode).ok());
      ASSERT_EQ(::chmod(path.c_str(), mode), 0);
    } else {
      ASSERT_TRUE(WriteFileAtomically(path, "x", mode).ok());
    }
  }
  std::vector<std::string> Targets(const SandboxPolicy& policy) {
    MountPlan plan;
    plan.project = root_;
    auto steps = DeniedSteps(policy, plan, nullptr);
    EXPECT_TRUE(steps.ok()) << steps.status();
    std::vector<std::string> targets;
    if (steps.ok()) {
      for (const MountStep& step : *steps) targets.push_back(step.target);
    }
    return targets;
  }
  std::string root_;
};

// Named and private paths together, outermost only: a private file inside a
// named folder is left to the folder's mount (it would need a mount point
// in a folder nobody may open), a private folder around a named path covers
// it.
TEST_F(DeniedStepsTest, NamedAndPrivatePathsOutermostOnly) {
  Make("public", 0755, true);
  Make("public/private-file", 0600, false);
  Make("keys", 0700, true);
  Make("keys/named", 0755, true);
  Make("alone", 0600, false);
  SandboxPolicy policy;
  policy.add_deny_private_under(root_);
  policy.add_denied_paths("public");
  policy.add_denied_paths("keys/named");
  EXPECT_EQ(Targets(policy),
            (std::vector<std::string>{JoinPath(root_, "alone"),
                                      JoinPath(root_, "keys"),
                                      JoinPath(root_, "public")}));
  // The control: without the named paths the file inside "public" is one.
  policy.clear_denied_paths();
  EXPECT_EQ(Targets(policy),
            (std::vector<std::string>{JoinPath(root_, "alone"),
                                      JoinPath(root_, "keys"),
                                      JoinPath(root_, "public/private-file")}));
}

}  // namespace
}  // namespace garuda
