// The copy backend in serve mode (ServeSeveralCommands): the watches of the
// project and of the copy say what a refresh and a list look at. Real
// processes make the changes: the person's edits in the project between two
// commands, and the commands' writes in the copy. Each scenario runs twice:
// with the watches' events, the change is seen; with them dropped (the test
// seam), the same scenario misses it, which proves that the scenario goes
// through the watches and not through a walk.
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/changeset/builder.h"
#include "lib/changeset/test_tree.h"
#include "lib/staging/backend.h"
#include "lib/staging/tree_watch.h"
#include "lib/staging/watch_test_util.h"

namespace garuda {
namespace {

using testing::NewTempDir;
using testing::Read;
using testing::Shell;
using testing::Write;

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

// The tree without .git and the ignored build/.
std::map<std::string, std::string> Tracked(const std::string& root) {
  std::map<std::string, std::string> all = testing::Snapshot(root);
  for (auto it = all.begin(); it != all.end();) {
    if (absl::StartsWith(it->first, ".git") && it->first != ".gitignore") {
      it = all.erase(it);
    } else if (it->first == "build" || absl::StartsWith(it->first, "build/")) {
      it = all.erase(it);
    } else {
      ++it;
    }
  }
  return all;
}

// "a hard link" -> "a_hard_link".
std::string TestName(const char* text) {
  std::string name;
  for (const char* c = text; *c; ++c) {
    name += std::isalnum(static_cast<unsigned char>(*c)) ? *c : '_';
  }
  return name;
}

// Writes `text` at the start of `path` through a shared mapping, in a
// process of its own that closes the file before writing and exits without
// unmapping it.
void MmapWrite(const std::string& path, const std::string& text) {
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int fd = ::open(path.c_str(), O_RDWR);
    if (fd < 0) ::_exit(2);
    void* map =
        ::mmap(nullptr, text.size(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) ::_exit(3);
    ::close(fd);
    std::memcpy(map, text.data(), text.size());
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

class CopyWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_watch_testing::DropEvents(false);
    base_ = NewTempDir("copy-watch");
    project_ = base_ + "/project";
    outside_ = base_ + "/outside";
    std::string folder = base_ + "/session";
    Write(project_ + "/.gitignore", "build/\n");
    Write(project_ + "/src/a.c", "a\n");
    Write(project_ + "/src/b.c", "b\n");
    Write(project_ + "/src/linked.c", "linked\n");
    Write(project_ + "/README", "readme\n");
    Write(project_ + "/docs/x.md", "x\n");
    Write(project_ + "/docs/sub/y.md", "y\n");
    Shell(project_, "git init -q && git add -A");
    // A file of the project with a second name outside it.
    testing::MakeDir(outside_);
    ASSERT_EQ(::link((project_ + "/src/linked.c").c_str(),
                     (outside_ + "/linked.c").c_str()),
              0);
    testing::MakeDir(folder, 0700);
    backend_ = MakeStagingBackend("copy", project_, folder);
    ASSERT_TRUE(backend_->Create().ok());
    backend_->ServeSeveralCommands();
    copy_ = backend_->ListedRoot();
    // The first commands walk both trees and put the watches in place.
    for (int i = 0; i < 2; ++i) Command("true");
  }
  void TearDown() override { tree_watch_testing::DropEvents(false); }

  // One command as StagedView::Run does it: the refresh, the command (a
  // real process in the copy), the list.
  ChangeSet Command(const std::string& command,
                    const std::function<void()>& before_list = nullptr) {
    absl::Status refreshed = backend_->Refresh();
    EXPECT_TRUE(refreshed.ok()) << refreshed;
    Shell(copy_, command);
    if (before_list) before_list();
    BuildOptions options;
    options.project = project_;
    options.command = command;
    absl::StatusOr<ChangeSet> list = backend_->List(options);
    EXPECT_TRUE(list.ok()) << list.status();
    return list.ok() ? *std::move(list) : ChangeSet();
  }

  // The person's edit between two commands, then the next refresh: whether
  // the copy has the project's state again.
  bool EditReachesTheView(const std::string& edit, const std::string& where) {
    Shell(where.empty() ? project_ : where, edit);
    EXPECT_TRUE(backend_->Refresh().ok());
    return Tracked(copy_) == Tracked(project_);
  }

  std::string base_, project_, outside_, copy_;
  std::unique_ptr<StagingBackend> backend_;
};

struct Edit {
  const char* name;
  const char* command;
  bool outside = false;  // run in the folder outside the project
};

class PersonEditTest : public CopyWatchTest,
                       public ::testing::WithParamInterface<Edit> {};

TEST_P(PersonEditTest, ReachesTheViewBeforeTheNextCommand) {
  ASSERT_EQ(Tracked(copy_), Tracked(project_));
  EXPECT_TRUE(EditReachesTheView(GetParam().command,
                                 GetParam().outside ? outside_ : ""))
      << GetParam().name;
}

TEST_P(PersonEditTest, IsMissedWithTheEventsDropped) {
  if (GetParam().outside) {
    // A write through a name outside the project raises no event in it
    // (TreeWatchTest.AWriteThroughAnotherLinkRaisesNoEventHere): the file
    // is lstat'ed at every refresh because it has two links, so dropping
    // the events changes nothing.
    tree_watch_testing::DropEvents(true);
    EXPECT_TRUE(EditReachesTheView(GetParam().command, outside_));
    return;
  }
  tree_watch_testing::DropEvents(true);
  EXPECT_FALSE(EditReachesTheView(GetParam().command, ""))
      << GetParam().name << ": seen without its events, so not through them";
}

INSTANTIATE_TEST_SUITE_P(
    Edits, PersonEditTest,
    ::testing::Values(
        Edit{"in place", "echo more >> src/a.c"},
        Edit{"atomic rename over",
             "printf new > src/.b.tmp && mv src/.b.tmp src/b.c"},
        Edit{"chmod", "chmod 755 README"},
        Edit{"new folder with files",
             "mkdir -p lib/deep && echo z > lib/deep/z.c && echo w > lib/w.c"},
        Edit{"deleted folder", "rm -rf docs"},
        Edit{"a hard link from outside", "echo through-the-link >> linked.c",
             true}),
    [](const ::testing::TestParamInfo<Edit>& info) {
      return TestName(info.param.name);
    });

TEST_F(CopyWatchTest, AHardLinkMadeInTheProjectIsFollowedThroughBothNames) {
  // The new name raises events; the old one gets no event when written
  // through the new one, so the new link makes the refresh walk, and from
  // then on both names are lstat'ed at every refresh.
  EXPECT_TRUE(
      EditReachesTheView("ln src/a.c src/a3.c && echo via-a3 >> src/a3.c", ""));
  EXPECT_TRUE(EditReachesTheView("echo again >> src/a3.c", ""));
  EXPECT_EQ(Read(copy_ + "/src/a.c"), "a\nvia-a3\nagain\n");
}

TEST_F(CopyWatchTest, AChangeOfTheIgnoreRulesIsFollowed) {
  ChangeSet built = Command("mkdir -p build && echo o > build/out");
  EXPECT_TRUE(built.changes.empty());
  EXPECT_TRUE(Exists(copy_ + "/build/out"));
  // One more command: the next refresh no longer looks at build/ for being
  // the last command's change.
  EXPECT_TRUE(Command("true").changes.empty());
  EXPECT_TRUE(Exists(copy_ + "/build/out"));
  // build/ is no longer ignored: the copy follows the project there too.
  Write(project_ + "/.gitignore", "\n");
  ASSERT_TRUE(backend_->Refresh().ok());
  EXPECT_FALSE(Exists(copy_ + "/build/out"));
}

// What a command does, and the paths its list must hold.
struct Write_ {
  const char* name;
  const char* command;  // empty: the mmap write below
  std::vector<const char*> listed;
};

class CommandWriteTest : public CopyWatchTest,
                         public ::testing::WithParamInterface<Write_> {
 protected:
  ChangeSet Run() {
    std::string command = GetParam().command;
    if (!command.empty()) return Command(command);
    return Command("true", [this] { MmapWrite(copy_ + "/src/a.c", "M"); });
  }
};

TEST_P(CommandWriteTest, IsInItsChangeList) {
  ChangeSet list = Run();
  for (const char* path : GetParam().listed) {
    EXPECT_NE(testing::FindEntry(list, path), nullptr)
        << GetParam().name << ": " << path << " is not listed";
  }
  // The next command starts from the project again.
  ChangeSet next = Command("true");
  EXPECT_TRUE(next.changes.empty());
  EXPECT_EQ(Tracked(copy_), Tracked(project_));
}

TEST_P(CommandWriteTest, IsMissedWithTheEventsDropped) {
  ASSERT_TRUE(backend_->Refresh().ok());
  tree_watch_testing::DropEvents(true);
  std::string command = GetParam().command;
  if (command.empty()) {
    MmapWrite(copy_ + "/src/a.c", "M");
  } else {
    Shell(copy_, command);
  }
  BuildOptions options;
  options.project = project_;
  absl::StatusOr<ChangeSet> list = backend_->List(options);
  ASSERT_TRUE(list.ok()) << list.status();
  for (const char* path : GetParam().listed) {
    EXPECT_EQ(testing::FindEntry(*list, path), nullptr)
        << GetParam().name << ": " << path
        << " listed without its events, so not through them";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Writes, CommandWriteTest,
    ::testing::Values(Write_{"in place", "echo more >> src/a.c", {"src/a.c"}},
                      Write_{"mmap", "", {"src/a.c"}},
                      Write_{
                          "new folder tree",
                          "mkdir -p n/m && echo f > n/m/f.c && echo g > n/g.c",
                          {"n/m/f.c", "n/g.c"}},
                      Write_{"rename of a folder",
                             "mv docs documents",
                             {"docs/x.md", "docs/sub/y.md", "documents/x.md",
                              "documents/sub/y.md"}},
                      Write_{"delete", "rm src/b.c", {"src/b.c"}},
                      Write_{"mode change", "chmod 755 README", {"README"}},
                      Write_{"hard link",
                             "ln src/a.c src/a2.c && echo via-a2 >> src/a2.c",
                             {"src/a2.c", "src/a.c"}}),
    [](const ::testing::TestParamInfo<Write_>& info) {
      return TestName(info.param.name);
    });

TEST_F(CopyWatchTest, AnOverflowOfTheCopysEventsFallsBackToTheWalk) {
  for (bool overflow : {true, false}) {
    SCOPED_TRACE(overflow ? "overflow" : "no overflow (the control)");
    ASSERT_TRUE(backend_->Refresh().ok());
    tree_watch_testing::DropEvents(true);
    Shell(copy_, "echo lost >> src/b.c");
    if (overflow) tree_watch_testing::InjectOverflow();
    BuildOptions options;
    options.project = project_;
    absl::StatusOr<ChangeSet> list = backend_->List(options);
    tree_watch_testing::DropEvents(false);
    ASSERT_TRUE(list.ok()) << list.status();
    EXPECT_EQ(testing::FindEntry(*list, "src/b.c") != nullptr, overflow);
  }
}

TEST_F(CopyWatchTest, AnOverflowOfTheProjectsEventsFallsBackToTheWalk) {
  for (bool overflow : {true, false}) {
    SCOPED_TRACE(overflow ? "overflow" : "no overflow (the control)");
    tree_watch_testing::DropEvents(true);
    Shell(project_, absl::StrCat("echo ", overflow, " >> src/b.c"));
    if (overflow) tree_watch_testing::InjectOverflow();
    ASSERT_TRUE(backend_->Refresh().ok());
    tree_watch_testing::DropEvents(false);
    EXPECT_EQ(Read(copy_ + "/src/b.c") == Read(project_ + "/src/b.c"),
              overflow);
    // The walk put every watch back: the next edit is seen again.
    Shell(project_, "echo seen >> src/a.c");
    ASSERT_TRUE(backend_->Refresh().ok());
    EXPECT_EQ(Read(copy_ + "/src/a.c"), Read(project_ + "/src/a.c"));
  }
}

// fs.inotify.max_user_watches reached (ENOSPC): the watches are given up,
// said once on stderr, and every command walks. In a child with a user
// namespace of its own whose watch limit is 2, a person's edit made with
// the events dropped still reaches the view (the walk sees it); the
// negative control is PersonEditTest.IsMissedWithTheEventsDropped (with
// the watches, the same dropped events miss it).
TEST(CopyWatchLimitTest, NoMoreWatchesMeansTheWalk) {
  tree_watch_testing::DropEvents(false);
  std::string base = NewTempDir("copy-watch-enospc");
  std::string project = base + "/project";
  Write(project + "/src/a.c", "a\n");
  Write(project + "/docs/sub/y.md", "y\n");
  testing::MakeDir(base + "/session", 0700);
  std::string log = base + "/stderr";
  uid_t uid = ::getuid();
  gid_t gid = ::getgid();
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int err = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (err < 0 || ::dup2(err, 2) < 0) ::_exit(2);
    if (!testing::EnterUserNamespaceWithWatchLimit(uid, gid, 2)) ::_exit(3);
    std::unique_ptr<StagingBackend> backend =
        MakeStagingBackend("copy", project, base + "/session");
    if (!backend->Create().ok()) ::_exit(5);
    backend->ServeSeveralCommands();
    BuildOptions options;
    options.project = project;
    for (int i = 0; i < 3; ++i) {
      if (!backend->Refresh().ok() || !backend->List(options).ok()) {
        ::_exit(6);
      }
    }
    tree_watch_testing::DropEvents(true);
    if (std::system(
            absl::StrCat("echo edited >> '", project, "/src/a.c'").c_str()) !=
            0 ||
        !backend->Refresh().ok()) {
      ::_exit(7);
    }
    std::string copy = backend->ListedRoot();
    ::_exit(Read(copy + "/src/a.c") == "a\nedited\n" ? 0 : 8);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << Read(log);
  std::string said = Read(log);
  for (const char* tree : {"watches for the project", "watches for the copy"}) {
    size_t first = said.find(tree);
    EXPECT_NE(first, std::string::npos) << tree << ": " << said;
    EXPECT_EQ(said.find(tree, first + 1), std::string::npos)
        << tree << " said more than once: " << said;
  }
}

}  // namespace
}  // namespace garuda
