#include "lib/policy/merge.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/base/json_message.h"
#include "lib/policy/merge_test_fixture.h"

namespace garuda {
namespace {

TEST_F(MergeTest, NothingSetGivesTheDefaults) {
  MergedSettings merged = Merge();
  EXPECT_FALSE(merged.strict());
  EXPECT_FALSE(merged.require_sandbox());
  EXPECT_EQ(merged.settings.commands().mode(), "direct");
  EXPECT_EQ(merged.settings.commands().backend(), "auto");
  EXPECT_FALSE(merged.settings.sandbox().network());
}

TEST_F(MergeTest, StrictFromAnySourceMakesTheResultStrict) {
  for (Settings* source :
       {&sources_.managed_policy, &sources_.user_policy,
        &sources_.user_settings, &sources_.project_settings}) {
    *source = Parse(R"({"profile":"strict"})");
    MergedSettings merged = Merge();
    EXPECT_TRUE(merged.strict());
    EXPECT_FALSE(merged.strict_source.empty());
    source->Clear();
    // Negative control: without it the result is not strict.
    EXPECT_FALSE(Merge().strict());
  }
}

TEST_F(MergeTest, ProjectWithDefaultProfileDoesNotTurnOffPolicyStrict) {
  sources_.user_policy = Parse(R"({"profile":"strict"})");
  sources_.project_settings =
      Parse(R"({"profile":"default","requireSandbox":false})");
  MergedSettings merged = Merge();
  EXPECT_TRUE(merged.strict());
  EXPECT_TRUE(merged.require_sandbox());
  EXPECT_EQ(merged.strict_source, "/home/u/.garuda/policy.json");
  // The same for the managed policy.
  sources_.user_policy.Clear();
  sources_.managed_policy = Parse(R"({"profile":"strict"})");
  EXPECT_TRUE(Merge().strict());
  EXPECT_EQ(Merge().strict_source, "/etc/garuda/policy.json");
}

TEST_F(MergeTest, ProjectCanTurnStrictOn) {
  sources_.user_policy = Parse(R"({"profile":"default"})");
  sources_.project_settings = Parse(R"({"profile":"strict"})");
  MergedSettings merged = Merge();
  EXPECT_TRUE(merged.strict());
  EXPECT_EQ(merged.strict_source, "/p/.garuda/settings.json");
}

TEST_F(MergeTest, StrictImpliesRequireSandbox) {
  sources_.managed_policy = Parse(R"({"profile":"strict"})");
  sources_.user_policy = Parse(R"({"requireSandbox":false})");
  MergedSettings merged = Merge();
  EXPECT_TRUE(merged.require_sandbox());
  EXPECT_EQ(merged.require_sandbox_source, "/etc/garuda/policy.json");
}

TEST_F(MergeTest, RequireSandboxStrictestWins) {
  sources_.managed_policy = Parse(R"({"requireSandbox":true})");
  sources_.project_settings = Parse(R"({"requireSandbox":false})");
  sources_.user_settings = Parse(R"({"requireSandbox":false})");
  EXPECT_TRUE(Merge().require_sandbox());
  EXPECT_FALSE(Merge().strict());
  // A lower source can turn it on too.
  sources_.managed_policy.Clear();
  sources_.project_settings = Parse(R"({"requireSandbox":true})");
  EXPECT_TRUE(Merge().require_sandbox());
  // Negative control.
  sources_.project_settings.Clear();
  EXPECT_FALSE(Merge().require_sandbox());
}

TEST_F(MergeTest, UnknownProfileNamesTheFileAndField) {
  sources_.project_settings = Parse(R"({"profile":"strickt"})");
  auto merged = MergeSettings(sources_);
  ASSERT_FALSE(merged.ok());
  EXPECT_NE(merged.status().message().find("/p/.garuda/settings.json"),
            absl::string_view::npos);
  EXPECT_NE(merged.status().message().find("profile"), absl::string_view::npos);
}

TEST_F(MergeTest, PolicyOverridesProjectForModeAndNetwork) {
  sources_.user_policy = Parse(R"({"commands":{"mode":"staged"},
                                   "sandbox":{"network":false}})");
  sources_.project_settings = Parse(R"({"commands":{"mode":"direct"},
                                        "sandbox":{"network":true}})");
  MergedSettings merged = Merge();
  EXPECT_EQ(merged.settings.commands().mode(), "staged");
  EXPECT_FALSE(merged.settings.sandbox().network());
  // Without the policy, the project still cannot widen: the defaults
  // (direct, network off) stand, and a notice says why the project's
  // network was ignored.
  sources_.user_policy.Clear();
  merged = Merge();
  EXPECT_EQ(merged.settings.commands().mode(), "direct");
  EXPECT_FALSE(merged.settings.sandbox().network());
  ASSERT_EQ(merged.notices.size(), 1u);
  EXPECT_NE(merged.notices[0].find("sandbox.network true is ignored"),
            std::string::npos)
      << merged.notices[0];
  EXPECT_NE(merged.notices[0].find("/p/.garuda/settings.json"),
            std::string::npos);
}

// Issue 13, point 3: the project's settings outranked the person's. The
// person's ~/.garuda/settings.json says staged and network off; the
// project's says direct and network on: the person's stand, with a notice
// for each. Control: the same project settings narrowing (staged, network
// off over the person's direct, network on) are taken.
TEST_F(MergeTest, AProjectCanNarrowButNeverWidenThePersonsSettings) {
  sources_.user_settings = Parse(R"({"commands":{"mode":"staged"},
                                     "sandbox":{"network":false,
                                     "limits":{"processes":100}}})");
  sources_.project_settings = Parse(R"({"commands":{"mode":"direct"},
                                        "sandbox":{"network":true,
                                        "writePaths":["build"],
                                        "limits":{"processes":5000,
                                                  "memoryMb":256}}})");
  MergedSettings merged = Merge();
  EXPECT_EQ(merged.settings.commands().mode(), "staged");
  EXPECT_FALSE(merged.settings.sandbox().network());
  EXPECT_EQ(merged.settings.sandbox().write_paths_size(), 0);
  EXPECT_EQ(merged.settings.sandbox().limits().processes(), 100u);
  EXPECT_EQ(merged.settings.sandbox().limits().memory_mb(), 256u);
  ASSERT_EQ(merged.notices.size(), 4u);
  for (const char* what :
       {"commands.mode \"direct\"", "sandbox.network true",
        "sandbox.writePaths", "sandbox.limits.processes 5000"}) {
    bool found = false;
    for (const std::string& notice : merged.notices) {
      if (notice.find(what) != std::string::npos) found = true;
    }
    EXPECT_TRUE(found) << what;
  }

  sources_.user_settings = Parse(R"({"commands":{"mode":"direct"},
                                     "sandbox":{"network":true}})");
  sources_.project_settings = Parse(R"({"commands":{"mode":"staged"},
                                        "sandbox":{"network":false}})");
  merged = Merge();
  EXPECT_EQ(merged.settings.commands().mode(), "staged");
  EXPECT_FALSE(merged.settings.sandbox().network());
  EXPECT_TRUE(merged.notices.empty());
  // And with the person's network on, a project's "on" is no widening.
  sources_.project_settings = Parse(R"({"sandbox":{"network":true}})");
  merged = Merge();
  EXPECT_TRUE(merged.settings.sandbox().network());
  EXPECT_TRUE(merged.notices.empty());
}

// Issue 13, point 10: a process limit and sized /tmp and /dev/shm by
// default, which the person's files may raise and a project only lower.
TEST_F(MergeTest, DefaultLimitsThePersonCanRaise) {
  const SandboxLimits& defaults = Merge().settings.sandbox().limits();
  EXPECT_GT(defaults.processes(), 0u);
  EXPECT_GT(defaults.tmp_mb(), 0u);
  EXPECT_GT(defaults.shm_mb(), 0u);
  EXPECT_EQ(defaults.memory_mb(), 0u) << "memory is unbounded by default";
  uint32_t processes = defaults.processes();
  sources_.user_settings = Parse(absl::StrCat(
      R"({"sandbox":{"limits":{"processes":)", processes * 4, "}}}"));
  EXPECT_EQ(Merge().settings.sandbox().limits().processes(), processes * 4);
  sources_.user_settings.Clear();
  sources_.project_settings = Parse(absl::StrCat(
      R"({"sandbox":{"limits":{"processes":)", processes * 4, "}}}"));
  EXPECT_EQ(Merge().settings.sandbox().limits().processes(), processes);
  sources_.project_settings =
      Parse(R"({"sandbox":{"limits":{"processes":8}}})");
  EXPECT_EQ(Merge().settings.sandbox().limits().processes(), 8u);
}

TEST_F(MergeTest, NetworkOffInAPolicyIsRemembered) {
  sources_.managed_policy = Parse(R"({"sandbox":{"network":false}})");
  sources_.project_settings = Parse(R"({"sandbox":{"network":true}})");
  MergedSettings merged = Merge();
  EXPECT_FALSE(merged.settings.sandbox().network());
  EXPECT_EQ(merged.network_off_policy_source, "/etc/garuda/policy.json");
  // Negative controls: off in the user's settings only, or on in a policy,
  // leaves a flag free to turn it on.
  sources_.managed_policy.Clear();
  sources_.user_settings = Parse(R"({"sandbox":{"network":false}})");
  EXPECT_EQ(Merge().network_off_policy_source, "");
  sources_.user_policy = Parse(R"({"sandbox":{"network":true}})");
  EXPECT_EQ(Merge().network_off_policy_source, "");
}

TEST_F(MergeTest, DeniedPathsAreTheUnion) {
  sources_.managed_policy = Parse(R"({"sandbox":{"denyPaths":["secrets"]}})");
  sources_.project_settings = Parse(R"({"sandbox":{"denyPaths":["keys"]}})");
  EXPECT_EQ(Merge().settings.sandbox().deny_paths_size(), 2);
}

TEST_F(MergeTest, ProjectCannotAddWritablePathsOutsideItself) {
  for (const char* bad : {"/home/u", "~", "../x", "a/../../b"}) {
    sources_.project_settings =
        Parse(std::string(R"({"sandbox":{"writePaths":[")") + bad + R"("]}})");
    auto merged = MergeSettings(sources_);
    EXPECT_FALSE(merged.ok()) << bad;
  }
  // Negative control: a path inside the project is no error (it is ignored
  // with a notice: it could only widen), and any path from a policy.
  sources_.project_settings = Parse(R"({"sandbox":{"writePaths":["build"]}})");
  sources_.user_policy =
      Parse(R"({"sandbox":{"writePaths":["/home/u/.cache"]}})");
  EXPECT_EQ(Merge().settings.sandbox().write_paths_size(), 1);
}

TEST_F(MergeTest, EachLimitIsTheSmallestOfAnySource) {
  sources_.managed_policy =
      Parse(R"({"sandbox":{"limits":{"memoryMb":2048,"processes":64}}})");
  // A project can lower a limit...
  sources_.project_settings =
      Parse(R"({"sandbox":{"limits":{"memoryMb":512,"cpuSeconds":30}}})");
  // ...and among the person's files the smallest wins.
  sources_.user_settings = Parse(
      R"({"sandbox":{"limits":{"processes":4096,"wallTimeSeconds":600}}})");
  const SandboxLimits& limits = Merge().settings.sandbox().limits();
  EXPECT_EQ(limits.memory_mb(), 512u);
  EXPECT_EQ(limits.processes(), 64u);
  EXPECT_EQ(limits.cpu_seconds(), 30u);
  EXPECT_EQ(limits.wall_time_seconds(), 600u);
  EXPECT_EQ(limits.file_size_mb(), 0u);
}

TEST_F(MergeTest, AuditOnlyFromPolicyFiles) {
  sources_.project_settings = Parse(R"({"audit":{"checkpoint":true}})");
  EXPECT_FALSE(Merge().settings.audit().checkpoint());
  sources_.user_policy = Parse(R"({"audit":{"checkpoint":true}})");
  EXPECT_TRUE(Merge().settings.audit().checkpoint());
}

}  // namespace
}  // namespace garuda
