#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/apply/apply.h"
#include "lib/changeset/builder.h"
#include "lib/changeset/test_tree.h"
#include "lib/lockdown/roles.h"
#include "lib/lockdown/test_child.h"

namespace garuda {
namespace {

using testing::Remove;
using testing::Snapshot;
using testing::Write;

absl::Status LockDownApplier(std::vector<std::string> writable) {
  RoleNeeds needs;
  needs.writable_paths = std::move(writable);
  return LockDownAs(Role::kApplier, needs, {}).status();
}

// In a child: lock down as the applier for `project` and `undo`, apply the
// copy's changes, then try to write `outside`. Returns "<applied> <outside>".
std::string ApplyThenWriteOutside(const std::string& project,
                                  const std::string& staged,
                                  const std::string& undo,
                                  const std::string& outside, bool lock) {
  absl::StatusOr<std::string> result = RunInChild([&]() -> std::string {
    BuildOptions build;
    build.project = project;
    absl::StatusOr<ChangeSet> change_set = BuildFromCopy(staged, build);
    if (!change_set.ok()) return change_set.status().ToString();
    absl::Status loaded = LoadContents(&*change_set);
    if (!loaded.ok()) return loaded.ToString();
    if (lock) {
      absl::Status locked = LockDownApplier({project, undo});
      if (!locked.ok()) return locked.ToString();
    }
    ApplyOptions options;
    options.project = project;
    options.undo_root = undo;
    absl::StatusOr<ApplyResult> applied = ApplyChangeSet(*change_set, options);
    std::string first =
        applied.ok() && applied->outcome == ApplyOutcome::kApplied
            ? "applied"
            : (applied.ok() ? "refused" : applied.status().ToString());
    int fd = ::open(outside.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    std::string second = fd >= 0 ? "wrote-outside" : ErrnoName(fd);
    if (fd >= 0) ::close(fd);
    int sock = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    std::string third = sock >= 0 ? "socket" : ErrnoName(sock);
    if (sock >= 0) ::close(sock);
    return absl::StrCat(first, " ", second, " ", third);
  });
  return result.ok() ? *result : result.status().ToString();
}

TEST(ApplierLockdownTest, WritesOnlyTheProjectAndTheUndoStore) {
  testing::ProjectPair pair = testing::MakeProjectPair("lockdown");
  const std::string &base = pair.base, &project = pair.project,
                    &staged = pair.staged;
  std::string undo = base + "/undo";
  testing::MakeDir(undo, 0700);
  Write(staged + "/a.txt", "changed\n");
  Remove(staged + "/d");
  Write(staged + "/new/file", "new\n");
  EXPECT_EQ(
      ApplyThenWriteOutside(project, staged, undo, base + "/outside", true),
      "applied EACCES EPERM");
  EXPECT_EQ(Snapshot(project), Snapshot(staged));
  EXPECT_EQ(::access((base + "/outside").c_str(), F_OK), -1);
  // Negative control: without the lockdown the same process writes outside.
  Write(staged + "/a.txt", "again\n");
  EXPECT_EQ(
      ApplyThenWriteOutside(project, staged, undo, base + "/outside", false),
      "applied wrote-outside socket");
}

// In a child: lock down (or not), then try to run /bin/true. Returns "ran",
// "EPERM" or what else happened.
std::string RunProgramAfter(bool lock, const std::string& project) {
  absl::StatusOr<std::string> result = RunInChild([&]() -> std::string {
    if (lock) {
      absl::Status locked = LockDownApplier({project});
      if (!locked.ok()) return locked.ToString();
    }
    pid_t pid = ::fork();
    if (pid == 0) {
      char* argv[] = {const_cast<char*>("/bin/true"), nullptr};
      ::execv(argv[0], argv);
      ::_exit(errno == EPERM ? 3 : 4);
    }
    int status = 0;
    if (::waitpid(pid, &status, 0) != pid) return "waitpid failed";
    if (!WIFEXITED(status)) return "killed";
    switch (WEXITSTATUS(status)) {
      case 0:
        return "ran";
      case 3:
        return "EPERM";
      default:
        return absl::StrCat("exit ", WEXITSTATUS(status));
    }
  });
  return result.ok() ? *result : result.status().ToString();
}

TEST(ApplierLockdownTest, StartsNoProgram) {
  testing::ProjectPair pair = testing::MakeProjectPair("noexec");
  EXPECT_EQ(RunProgramAfter(true, pair.project), "EPERM");
  // Negative control: before the lockdown the same child runs it.
  EXPECT_EQ(RunProgramAfter(false, pair.project), "ran");
}

}  // namespace
}  // namespace garuda
