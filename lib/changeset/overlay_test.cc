// The overlay walk: upper layers built by hand (whiteouts made with mknod,
// opaque folders with setxattr; we run as root) and, where the kernel lets
// us, a real overlay mounted in a user namespace so the walk reads what the
// kernel itself writes.
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/changeset/beneath.h"
#include "lib/changeset/builder.h"
#include "lib/changeset/test_tree.h"

namespace garuda {
namespace {

using testing::MakeDir;
using testing::NewTempDir;
using testing::Write;

struct Layers {
  std::string project, upper;
};

Layers MakeLayers() {
  std::string base = NewTempDir("overlay");
  Layers layers{base + "/project", base + "/upper"};
  Write(layers.project + "/a.txt", "a\n");
  Write(layers.project + "/keep.txt", "keep\n");
  Write(layers.project + "/d/one", "1\n");
  Write(layers.project + "/d/sub/two", "2\n");
  Write(layers.project + "/src/main.c", "int main;\n");
  Write(layers.project + "/run.sh", "#!/bin/sh\n", 0755);
  MakeDir(layers.upper);
  return layers;
}

void Whiteout(const std::string& path) {
  ASSERT_EQ(::mknod(path.c_str(), S_IFCHR | 0000, makedev(0, 0)), 0) << path;
}

void SetAttribute(const std::string& path, const std::string& name,
                  const std::string& value) {
  ASSERT_EQ(
      ::lsetxattr(path.c_str(), name.c_str(), value.data(), value.size(), 0), 0)
      << name << " on " << path << ": " << std::strerror(errno);
}

ChangeSet Walk(const Layers& layers) {
  BuildOptions options;
  options.project = layers.project;
  absl::StatusOr<ChangeSet> change_set =
      BuildFromOverlayUpper(layers.upper, options);
  EXPECT_TRUE(change_set.ok()) << change_set.status();
  return change_set.ok() ? *std::move(change_set) : ChangeSet();
}

const ChangeEntry* Find(const ChangeSet& change_set, const std::string& path) {
  for (const Change& change : change_set.changes) {
    if (change.entry.path() == path) return &change.entry;
  }
  return nullptr;
}

TEST(OverlayWalkTest, WhiteoutsAreDeletionsOfFilesAndSubtrees) {
  Layers layers = MakeLayers();
  Whiteout(layers.upper + "/a.txt");
  Whiteout(layers.upper + "/d");
  ChangeSet change_set = Walk(layers);
  EXPECT_FALSE(change_set.summary.incomplete())
      << change_set.summary.incomplete_reason();
  for (const char* path : {"a.txt", "d/one", "d/sub/two", "d/sub", "d"}) {
    const ChangeEntry* entry = Find(change_set, path);
    ASSERT_NE(entry, nullptr) << path;
    EXPECT_EQ(entry->kind(), CHANGE_KIND_DELETED) << path;
    EXPECT_EQ(entry->new_type(), FILE_TYPE_ABSENT);
  }
  EXPECT_EQ(change_set.changes.size(), 5u);
  EXPECT_EQ(Find(change_set, "keep.txt"), nullptr);
}

TEST(OverlayWalkTest, OpaqueFolderIsAReplacedFolder) {
  for (const char* attribute :
       {"trusted.overlay.opaque", "user.overlay.opaque"}) {
    Layers layers = MakeLayers();
    MakeDir(layers.upper + "/src");
    SetAttribute(layers.upper + "/src", attribute, "y");
    Write(layers.upper + "/src/new.c", "new\n");
    ChangeSet change_set = Walk(layers);
    const ChangeEntry* folder = Find(change_set, "src");
    ASSERT_NE(folder, nullptr) << attribute;
    EXPECT_EQ(folder->kind(), CHANGE_KIND_REPLACED_FOLDER);
    ASSERT_NE(Find(change_set, "src/main.c"), nullptr) << attribute;
    EXPECT_EQ(Find(change_set, "src/main.c")->kind(), CHANGE_KIND_DELETED);
    ASSERT_NE(Find(change_set, "src/new.c"), nullptr);
    EXPECT_EQ(Find(change_set, "src/new.c")->kind(), CHANGE_KIND_ADDED);
    // Negative control: without the attribute the old file stays (merge).
    Layers merged = MakeLayers();
    MakeDir(merged.upper + "/src");
    Write(merged.upper + "/src/new.c", "new\n");
    ChangeSet merged_set = Walk(merged);
    EXPECT_EQ(Find(merged_set, "src/main.c"), nullptr);
    EXPECT_EQ(merged_set.changes.size(), 1u);
  }
}

TEST(OverlayWalkTest, UnchangedCopyUpIsNoChange) {
  Layers layers = MakeLayers();
  Write(layers.upper + "/run.sh", "#!/bin/sh\n", 0755);  // same content, mode
  MakeDir(layers.upper + "/d", 0755);                    // a folder copied up
  SetAttribute(layers.upper + "/run.sh", "trusted.overlay.origin", "x");
  ChangeSet change_set = Walk(layers);
  EXPECT_TRUE(change_set.NoChanges());
  // Negative control: the mode alone differs.
  ASSERT_EQ(::chmod((layers.upper + "/run.sh").c_str(), 0700), 0);
  ChangeSet mode = Walk(layers);
  ASSERT_EQ(mode.changes.size(), 1u);
  EXPECT_EQ(mode.changes[0].entry.kind(), CHANGE_KIND_MODE_CHANGED);
}

TEST(OverlayWalkTest, SpecialFilesAndSetuidAreRefused) {
  Layers layers = MakeLayers();
  ASSERT_EQ(
      ::mknod((layers.upper + "/null").c_str(), S_IFCHR | 0666, makedev(1, 3)),
      0);
  ASSERT_EQ(::mkfifo((layers.upper + "/fifo").c_str(), 0644), 0);
  Write(layers.upper + "/suid", "x", 0755);
  ASSERT_EQ(::chmod((layers.upper + "/suid").c_str(), 04755), 0);
  ChangeSet change_set = Walk(layers);
  EXPECT_EQ(change_set.summary.refused_size(), 3);
  EXPECT_TRUE(change_set.changes.empty());
}

TEST(OverlayWalkTest, UnknownOverlayAttributeMakesTheListIncomplete) {
  for (const char* attribute :
       {"trusted.overlay.redirect", "user.overlay.metacopy",
        "trusted.overlay.whiteout"}) {
    Layers layers = MakeLayers();
    MakeDir(layers.upper + "/d");
    SetAttribute(layers.upper + "/d", attribute, "/elsewhere");
    ChangeSet change_set = Walk(layers);
    EXPECT_TRUE(change_set.summary.incomplete()) << attribute;
    EXPECT_NE(change_set.summary.incomplete_reason().find(attribute),
              std::string::npos);
  }
  // An opaque value other than "y" is not guessed either.
  Layers layers = MakeLayers();
  MakeDir(layers.upper + "/d");
  SetAttribute(layers.upper + "/d", "user.overlay.opaque", "x");
  EXPECT_TRUE(Walk(layers).summary.incomplete());
}

TEST(OverlayWalkTest, GitFolderIsCountedNotListed) {
  Layers layers = MakeLayers();
  Write(layers.upper + "/.git/objects/ab/cdef", "object");
  Write(layers.upper + "/.git/index", "index");
  ChangeSet change_set = Walk(layers);
  EXPECT_TRUE(change_set.changes.empty());
  ASSERT_EQ(change_set.summary.ignored_size(), 1);
  EXPECT_EQ(change_set.summary.ignored(0).folder(), ".git/");
  EXPECT_EQ(change_set.summary.ignored(0).files(), 2u);
}

// A real overlay: the same commands run in the merged view and on a plain
// copy must give the same change list.
TEST(OverlayWalkTest, RealOverlayInAUserNamespace) {
  Layers layers = MakeLayers();
  std::string base = Dirname(layers.upper);
  MakeDir(base + "/work");
  MakeDir(base + "/merged");
  std::string script = absl::StrCat(
      "set -e; mount -t overlay overlay -o lowerdir=", layers.project,
      ",upperdir=", layers.upper, ",workdir=", base, "/work,userxattr ", base,
      "/merged; cd ", base, "/merged; ",
      "rm a.txt; rm -rf d; mkdir d; touch d/new; echo changed > keep.txt; "
      "chmod 700 run.sh; mkdir -p src/deep; echo x > src/deep/f; "
      "ln -s keep.txt link; cp -a . ",
      base, "/result");
  int status = std::system(
      absl::StrCat("unshare -Urm sh -c '", script, "' 2>", base, "/err")
          .c_str());
  if (status != 0) {
    GTEST_SKIP() << "this kernel does not mount overlayfs here: "
                 << testing::Read(base + "/err");
  }
  ChangeSet change_set = Walk(layers);
  EXPECT_FALSE(change_set.summary.incomplete())
      << change_set.summary.incomplete_reason();
  EXPECT_TRUE(change_set.summary.refused().empty());
  BuildOptions options;
  options.project = layers.project;
  absl::StatusOr<ChangeSet> from_copy =
      BuildFromCopy(base + "/result", options);
  ASSERT_TRUE(from_copy.ok());
  std::map<std::string, std::pair<int, int>> overlay_paths, copy_paths;
  for (const Change& c : change_set.changes) {
    overlay_paths[c.entry.path()] = {c.entry.new_type(), c.entry.base().type()};
  }
  for (const Change& c : from_copy->changes) {
    copy_paths[c.entry.path()] = {c.entry.new_type(), c.entry.base().type()};
  }
  // The same list, but for the replaced folder, which a copy cannot see.
  overlay_paths.erase("d");
  EXPECT_EQ(overlay_paths, copy_paths);
  const ChangeEntry* d = Find(change_set, "d");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->kind(),
            CHANGE_KIND_REPLACED_FOLDER);  // the kernel made it opaque
}

}  // namespace
}  // namespace garuda
