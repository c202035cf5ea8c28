#include "lib/base/helper_paths.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/version.h"

namespace garuda {
namespace {

using ::testing::HasSubstr;

std::string TempDir(const char* name) {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string templ =
      JoinPath(base != nullptr ? base : "/tmp", absl::StrCat(name, "XXXXXX"));
  return ::mkdtemp(templ.data());
}

// A stand-in program at `path`: a shell script with `body`.
void Program(const std::string& path, const std::string& body,
             mode_t mode = 0755) {
  ASSERT_TRUE(MakeDirectories(Dirname(path), 0755).ok());
  ASSERT_TRUE(
      WriteFileAtomically(path, "#!/bin/sh\n" + body + "\n", mode).ok());
}

// A helper that answers --version as this build's programs do.
void Helper(const std::string& dir, const std::string& name) {
  Program(JoinPath(dir, name),
          absl::StrCat("echo ", name, " ", kGarudaVersion));
}

TEST(HelperPathsTest, OwnFolderHoldsThisTest) {
  absl::StatusOr<std::string> own = OwnProgramFolder();
  ASSERT_TRUE(own.ok()) << own.status();
  EXPECT_EQ(::access(JoinPath(*own, "helper_paths_test").c_str(), X_OK), 0);
}

TEST(HelperPathsTest, HelpersBesideTheProgramAreFoundAndPass) {
  const std::string dir = TempDir("usr-bin");
  Helper(dir, "garuda-stager");
  Helper(dir, "garuda-applier");
  std::vector<std::string> paths = {HelperPath(dir, "garuda-stager"),
                                    HelperPath(dir, "garuda-applier")};
  EXPECT_EQ(paths[0], JoinPath(dir, "garuda-stager"));
  absl::Status checked = CheckHelpers(dir, paths);
  EXPECT_TRUE(checked.ok()) << checked;
}

TEST(HelperPathsTest, TheBuildTreeIsTheSecondPlace) {
  const std::string cmd = TempDir("cmd");
  const std::string own = JoinPath(cmd, "garuda-agent");
  ASSERT_TRUE(MakeDirectories(own, 0755).ok());
  Helper(JoinPath(cmd, "garuda-stager"), "garuda-stager");
  const std::string built =
      JoinPath(JoinPath(cmd, "garuda-stager"), "garuda-stager");
  EXPECT_EQ(HelperPath(own, "garuda-stager"), built);
  EXPECT_TRUE(CheckHelpers(own, {built}).ok());
  // One beside the program wins over the build tree's.
  Helper(own, "garuda-stager");
  EXPECT_EQ(HelperPath(own, "garuda-stager"), JoinPath(own, "garuda-stager"));
}

TEST(HelperPathsTest, AMissingHelperIsNamedWithTheReinstall) {
  const std::string dir = TempDir("usr-bin");
  Helper(dir, "garuda-stager");
  absl::Status checked = CheckHelpers(
      dir,
      {HelperPath(dir, "garuda-stager"), HelperPath(dir, "garuda-budgeter")});
  ASSERT_EQ(checked.code(), absl::StatusCode::kFailedPrecondition) << checked;
  EXPECT_THAT(checked.message(),
              HasSubstr(absl::StrCat("garuda-budgeter is not in ", dir, ": ")));
  EXPECT_THAT(checked.message(), HasSubstr(dir));
  EXPECT_THAT(checked.message(),
              HasSubstr(absl::StrCat("apt-get install --reinstall ./garuda_",
                                     kGarudaVersion, "_amd64.deb")));
}

TEST(HelperPathsTest, AMissingHelperInTheBuildTreeIsNamedWithTheBuild) {
  const std::string own =
      JoinPath(TempDir("tree"), "bazel-out/k8-fastbuild/bin/cmd/garuda-agent");
  ASSERT_TRUE(MakeDirectories(own, 0755).ok());
  absl::Status checked = CheckHelpers(own, {HelperPath(own, "garuda-auditor")});
  EXPECT_THAT(checked.message(), HasSubstr("garuda-auditor is not in "));
  EXPECT_THAT(
      checked.message(),
      HasSubstr("not in the build tree at " +
                JoinPath(Dirname(own), "garuda-auditor/garuda-auditor")));
  EXPECT_THAT(checked.message(), HasSubstr("bazel build //cmd/..."));
}

TEST(HelperPathsTest, AHelperOfAnotherVersionIsNamedWithBothVersions) {
  const std::string dir = TempDir("usr-bin");
  Helper(dir, "garuda-stager");
  Program(JoinPath(dir, "garuda-applier"), "echo garuda-applier 0.0.1");
  absl::Status checked = CheckHelpers(
      dir, {JoinPath(dir, "garuda-stager"), JoinPath(dir, "garuda-applier")});
  ASSERT_EQ(checked.code(), absl::StatusCode::kFailedPrecondition) << checked;
  EXPECT_THAT(checked.message(),
              HasSubstr(absl::StrCat(JoinPath(dir, "garuda-applier"),
                                     " is version 0.0.1 but ")));
  EXPECT_THAT(checked.message(),
              HasSubstr(absl::StrCat(" is ", kGarudaVersion)));
  EXPECT_THAT(checked.message(), HasSubstr("apt-get install --reinstall"));
}

TEST(HelperPathsTest, AnotherProgramOfTheSameNameIsRefused) {
  const std::string dir = TempDir("usr-bin");
  // Right words, failing exit; then another program's answer.
  Program(JoinPath(dir, "garuda-stager"),
          absl::StrCat("echo garuda-stager ", kGarudaVersion, "; exit 3"));
  Program(JoinPath(dir, "garuda-applier"), "echo usage: applier [-v]");
  absl::Status checked = CheckHelpers(dir, {JoinPath(dir, "garuda-stager")});
  EXPECT_THAT(checked.message(), HasSubstr("is not the helper garuda-stager"));
  EXPECT_THAT(checked.message(), HasSubstr("exit status 3"));
  checked = CheckHelpers(dir, {JoinPath(dir, "garuda-applier")});
  EXPECT_THAT(checked.message(), HasSubstr("answered \"usage: applier [-v]\""));
}

TEST(HelperPathsTest, ASilentOrFloodingProgramIsStoppedAndRefused) {
  const std::string dir = TempDir("usr-bin");
  Program(JoinPath(dir, "garuda-auditor"), "exec sleep 60");
  Program(JoinPath(dir, "garuda-budgeter"), "exec yes garuda-budgeter");
  absl::Status checked = CheckHelpers(dir, {JoinPath(dir, "garuda-auditor")},
                                      /*timeout_ms=*/300);
  EXPECT_THAT(checked.message(), HasSubstr("did not answer --version"));
  checked = CheckHelpers(dir, {JoinPath(dir, "garuda-budgeter")});
  EXPECT_THAT(checked.message(), HasSubstr("is not the helper"));
}

TEST(HelperPathsTest, AHelperThatCannotBeRunIsNamed) {
  const std::string dir = TempDir("usr-bin");
  Program(JoinPath(dir, "garuda-stager"), "true", 0644);
  absl::Status checked = CheckHelpers(dir, {JoinPath(dir, "garuda-stager")});
  EXPECT_THAT(checked.message(), HasSubstr("cannot be run"));
}

}  // namespace
}  // namespace garuda
