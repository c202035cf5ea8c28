#include "lib/staging/tree_watch.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/base/unique_fd.h"
#include "lib/changeset/test_tree.h"
#include "lib/staging/folders.h"
#include "lib/staging/watch_test_util.h"

namespace garuda {
namespace {

using testing::MakeDir;
using testing::NewTempDir;
using testing::Shell;
using testing::Write;

// Watches every folder of `root` (as a walk would).
void WatchAll(TreeWatch* watch, const std::string& root,
              const std::string& relative = "") {
  UniqueFd fd(::open((relative.empty() ? root : root + "/" + relative).c_str(),
                     O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(fd);
  watch->Watch(relative, fd.get());
  absl::StatusOr<std::vector<std::string>> names = FolderNames(fd.get(), root);
  ASSERT_TRUE(names.ok());
  for (const std::string& name : *names) {
    std::string child = relative.empty() ? name : relative + "/" + name;
    struct stat st;
    if (::lstat((root + "/" + child).c_str(), &st) == 0 &&
        S_ISDIR(st.st_mode)) {
      WatchAll(watch, root, child);
    }
  }
}

std::unique_ptr<TreeWatch> Watched(const std::string& root) {
  absl::StatusOr<std::unique_ptr<TreeWatch>> watch =
      TreeWatch::Create(root, "the test tree");
  EXPECT_TRUE(watch.ok()) << watch.status();
  (*watch)->BeginWalk();
  WatchAll(watch->get(), root);
  EXPECT_TRUE((*watch)->trusted()) << (*watch)->broken();
  return *std::move(watch);
}

class TreeWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_watch_testing::DropEvents(false);
    root_ = NewTempDir("tree-watch") + "/tree";
    Write(root_ + "/a.txt", "a\n");
    Write(root_ + "/d/b.txt", "b\n");
    Write(root_ + "/d/e/c.txt", "c\n");
  }
  void TearDown() override { tree_watch_testing::DropEvents(false); }
  std::string root_;
};

TEST_F(TreeWatchTest, EventsNameEveryKindOfChange) {
  std::unique_ptr<TreeWatch> watch = Watched(root_);
  EXPECT_TRUE(watch->Drain().paths.empty());
  Shell(root_,
        "echo more >> a.txt && chmod +x d/b.txt && echo n > d/e/tmp && "
        "mv d/e/tmp d/e/c.txt && rm d/b.txt && ln -s a.txt d/link");
  TreeWatch::Changes changes = watch->Drain();
  EXPECT_FALSE(changes.lost);
  for (const char* path :
       {"a.txt", "d/b.txt", "d/e/tmp", "d/e/c.txt", "d/link"}) {
    EXPECT_EQ(changes.paths.count(path), 1u) << path;
  }
  EXPECT_TRUE(changes.folders.empty());
  EXPECT_TRUE(watch->Drain().paths.empty());  // each event once
}

TEST_F(TreeWatchTest, DroppedEventsMissTheChange) {
  // The negative control of every watch test: the seam drops the events.
  std::unique_ptr<TreeWatch> watch = Watched(root_);
  tree_watch_testing::DropEvents(true);
  Shell(root_, "echo more >> a.txt");
  EXPECT_TRUE(watch->Drain().paths.empty());
}

TEST_F(TreeWatchTest, NewAndMovedFoldersAreWatchedWithTheirSubtree) {
  std::unique_ptr<TreeWatch> watch = Watched(root_);
  Shell(root_, "mkdir -p n/m && echo x > n/m/f && mv d moved");
  TreeWatch::Changes changes = watch->Drain();
  EXPECT_EQ(changes.folders.count("n"), 1u);
  EXPECT_EQ(changes.folders.count("moved"), 1u);
  EXPECT_EQ(changes.paths.count("d"), 1u);
  // Now watched: a write deep inside each shows, by the new names.
  Shell(root_, "echo y >> n/m/f && echo z >> moved/e/c.txt");
  changes = watch->Drain();
  EXPECT_EQ(changes.paths.count("n/m/f"), 1u);
  EXPECT_EQ(changes.paths.count("moved/e/c.txt"), 1u);
  EXPECT_EQ(changes.paths.count("d/e/c.txt"), 0u);
}

// A write through a shared mapping raises no IN_MODIFY; the file's
// IN_CLOSE_WRITE comes when its last reference goes: at the latest when the
// process that mapped it is gone.
TEST_F(TreeWatchTest, AMmapWriteShowsWhenTheLastReferenceGoes) {
  std::unique_ptr<TreeWatch> watch = Watched(root_);
  int ready[2], go[2];
  ASSERT_EQ(::pipe2(ready, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(go, O_CLOEXEC), 0);
  std::string file = root_ + "/d/b.txt";
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int fd = ::open(file.c_str(), O_RDWR);
    if (fd < 0) ::_exit(2);
    void* map = ::mmap(nullptr, 3, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) ::_exit(3);
    ::close(fd);  // the mapping keeps the file open
    static_cast<char*>(map)[0] = 'M';
    char byte = 1;
    if (::write(ready[1], &byte, 1) != 1) ::_exit(4);
    if (::read(go[0], &byte, 1) != 1) ::_exit(5);
    ::_exit(0);  // no munmap: the exit drops the last reference
  }
  ::close(ready[1]);
  ::close(go[0]);
  char byte;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  // Written, still mapped: no event names it yet.
  EXPECT_EQ(watch->Drain().paths.count("d/b.txt"), 0u);
  ASSERT_EQ(::write(go[1], &byte, 1), 1);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(watch->Drain().paths.count("d/b.txt"), 1u);
  EXPECT_EQ(testing::Read(file), "M\n");
  ::close(ready[0]);
  ::close(go[1]);
}

// Why files with more than one link are lstat'ed every time: a write
// through a name in another folder raises no event in this one.
TEST_F(TreeWatchTest, AWriteThroughAnotherLinkRaisesNoEventHere) {
  std::string outside = NewTempDir("tree-watch-outside");
  ASSERT_EQ(::link((root_ + "/a.txt").c_str(), (outside + "/a.txt").c_str()),
            0);
  std::unique_ptr<TreeWatch> watch = Watched(root_);
  watch->Drain();
  Shell(outside, "echo through-the-link >> a.txt");
  EXPECT_TRUE(watch->Drain().paths.empty());
  // The control: the same write by the watched name is seen.
  Shell(root_, "echo by-name >> a.txt");
  EXPECT_EQ(watch->Drain().paths.count("a.txt"), 1u);
}

TEST_F(TreeWatchTest, AnOverflowTakesTheTrustBackUntilTheNextWalk) {
  std::unique_ptr<TreeWatch> watch = Watched(root_);
  EXPECT_FALSE(watch->Drain().lost);
  tree_watch_testing::InjectOverflow();
  EXPECT_TRUE(watch->Drain().lost);
  EXPECT_FALSE(watch->trusted());
  EXPECT_TRUE(watch->Drain().lost);  // until a walk
  watch->BeginWalk();
  WatchAll(watch.get(), root_);
  EXPECT_FALSE(watch->Drain().lost);
}

TEST_F(TreeWatchTest, NotTrustedBeforeAWalk) {
  absl::StatusOr<std::unique_ptr<TreeWatch>> watch =
      TreeWatch::Create(root_, "the test tree");
  ASSERT_TRUE(watch.ok());
  EXPECT_TRUE((*watch)->Drain().lost);
}

TEST_F(TreeWatchTest, AFileSystemInotifyMayNotSeeIsRefused) {
  // /proc stands for NFS, FUSE, 9p...: not a local file system written
  // only through this kernel. The control: the temporary folder is one.
  absl::StatusOr<std::unique_ptr<TreeWatch>> proc =
      TreeWatch::Create("/proc", "/proc");
  ASSERT_TRUE(proc.ok());
  UniqueFd fd(::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  (*proc)->BeginWalk();
  (*proc)->Watch("", fd.get());
  EXPECT_NE((*proc)->broken().find("file system"), std::string::npos)
      << (*proc)->broken();
  EXPECT_FALSE((*proc)->trusted());
  std::unique_ptr<TreeWatch> local = Watched(root_);
  EXPECT_TRUE(local->broken().empty()) << local->broken();
}

// fs.inotify.max_user_watches reached (ENOSPC): in a user namespace of its
// own, a child lowers the per-namespace limit to 2 watches and watches a
// tree of 3 folders.
TEST_F(TreeWatchTest, NoMoreWatchesBreaksTheWatch) {
  uid_t uid = ::getuid();
  gid_t gid = ::getgid();
  int result[2];
  ASSERT_EQ(::pipe2(result, O_CLOEXEC), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (!testing::EnterUserNamespaceWithWatchLimit(uid, gid, 2)) ::_exit(2);
    absl::StatusOr<std::unique_ptr<TreeWatch>> watch =
        TreeWatch::Create(root_, "the test tree");
    if (!watch.ok()) ::_exit(4);
    (*watch)->BeginWalk();
    WatchAll(watch->get(), root_);
    std::string broken = (*watch)->broken();
    ssize_t ignored = ::write(result[1], broken.data(), broken.size());
    (void)ignored;
    ::_exit(0);
  }
  ::close(result[1]);
  std::string broken;
  char buffer[512];
  ssize_t got;
  while ((got = ::read(result[0], buffer, sizeof(buffer))) > 0) {
    broken.append(buffer, static_cast<size_t>(got));
  }
  ::close(result[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_NE(broken.find("max_user_watches"), std::string::npos) << broken;
}

}  // namespace
}  // namespace garuda
