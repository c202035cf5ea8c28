// garuda-applier end to end: the real binary, on projects in $TEST_TMPDIR,
// with a pseudo-terminal standing in for the person at /dev/tty.
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/changeset/test_tree.h"
#include "tests/apply/runner.h"

namespace garuda {
namespace {

using testing::ApplyArgs;
using testing::ChangeList;
using testing::ChildExec;
using testing::CopyTree;
using testing::MakeDir;
using testing::MakeScene;
using testing::NewTempDir;
using testing::Read;
using testing::Remove;
using testing::Result;
using testing::RunApplier;
using testing::Scene;
using testing::Snapshot;
using testing::Symlink;
using testing::Wait;
using testing::Write;

// Reads the terminal into *seen until one of `texts` shows up after
// `*from`, and moves `*from` past the first that did (false if the program
// closes the terminal or a minute passes first).
bool WaitForAny(int master, const std::vector<std::string>& texts,
                std::string* seen, size_t* from) {
  for (;;) {
    size_t best = std::string::npos, length = 0;
    for (const std::string& text : texts) {
      size_t found = seen->find(text, *from);
      if (found < best) {
        best = found;
        length = text.size();
      }
    }
    if (best != std::string::npos) {
      *from = best + length;
      return true;
    }
    struct pollfd p = {master, POLLIN, 0};
    if (::poll(&p, 1, 60000) <= 0) return false;
    char buffer[4096];
    ssize_t n = ::read(master, buffer, sizeof(buffer));
    if (n <= 0) return false;
    seen->append(buffer, n);
  }
}

bool WaitFor(int master, const std::string& text, std::string* seen,
             size_t* from) {
  return WaitForAny(master, {text}, seen, from);
}

// The first prompt of lib/question's after `*from`: every prompt of the
// change question and of its per-file choice ends with "[v]iew: ", its
// confirmation with "[d]iscard: ", a page of the pager with "[q] quit".
bool WaitForPrompt(int master, std::string* seen, size_t* from) {
  return WaitForAny(master, {"[v]iew: ", "[d]iscard: ", "[q] quit"}, seen,
                    from);
}

// Runs garuda-applier on a pseudo-terminal (its /dev/tty) and types each
// of `keys` once a prompt of the question appears.
Result RunAsking(const Scene& scene, const std::vector<std::string>& args,
                 const std::string& in, const std::vector<std::string>& keys) {
  std::string out = NewTempDir("out") + "/out", err = out + ".err";
  int master = -1;
  pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) ChildExec(scene, args, in, out, err);
  Result result;
  size_t from = 0;
  for (const std::string& key : keys) {
    if (!WaitForPrompt(master, &result.terminal, &from)) break;
    (void)WriteAll(master, key);
  }
  WaitFor(master, "\x01never\x01", &result.terminal, &from);  // to the end
  result.code = Wait(pid);
  ::close(master);
  result.out = Read(out);
  result.err = Read(err);
  return result;
}

TEST(ApplierTest, DiscardLeavesTheProjectUnchanged) {
  Scene scene = MakeScene();
  Write(scene.staged + "/a.txt", "beta\n");
  auto before = Snapshot(scene.project);
  std::string changes = ChangeList(scene);
  Result result = RunAsking(scene, ApplyArgs(scene, "--ask"), changes, {"d\n"});
  EXPECT_EQ(result.code, 3) << result.err << result.terminal;
  EXPECT_EQ(result.out,
            "The user discarded the changes: the project did not change\n");
  EXPECT_NE(result.terminal.find("+beta"), std::string::npos)
      << result.terminal;
  EXPECT_EQ(Snapshot(scene.project), before);
  // Negative control: the same list applied does change the project.
  Result applied =
      RunAsking(scene, ApplyArgs(scene, "--ask"), changes, {"a\n"});
  EXPECT_EQ(applied.code, 0) << applied.err << applied.terminal;
  EXPECT_EQ(applied.out, "The user applied the changes\n");
  EXPECT_EQ(Read(scene.project + "/a.txt"), "beta\n");
}

TEST(ApplierTest, CtrlCAndEndOfInputDiscard) {
  Scene scene = MakeScene();
  Write(scene.staged + "/a.txt", "beta\n");
  auto before = Snapshot(scene.project);
  std::string changes = ChangeList(scene);
  Result interrupted =
      RunAsking(scene, ApplyArgs(scene, "--ask"), changes, {"\x03"});
  EXPECT_EQ(interrupted.code, 3) << interrupted.err << interrupted.terminal;
  Result ended = RunAsking(scene, ApplyArgs(scene, "--ask"), changes, {"\x04"});
  EXPECT_EQ(ended.code, 3) << ended.err << ended.terminal;
  Result view_then_discard =
      RunAsking(scene, ApplyArgs(scene, "--ask"), changes, {"v", "q", "d"});
  EXPECT_EQ(view_then_discard.code, 3);
  EXPECT_EQ(Snapshot(scene.project), before);
}

// The per-file choice of `apply --ask`: the chosen change is written, the
// others not; a file in a folder the list makes cannot go without the
// folder, and stays out with it.
TEST(ApplierTest, ChooseFilesAppliesOnlyTheChosenOnes) {
  Scene scene = MakeScene();
  Write(scene.staged + "/a.txt", "beta\n");
  Write(scene.staged + "/added/file.txt", "new\n");
  std::string changes = ChangeList(scene);
  // The list: a.txt, added (new folder), added/file.txt. Choose: a.txt
  // yes, the folder no, its file yes (left out with it); confirm.
  Result chosen = RunAsking(scene, ApplyArgs(scene, "--ask"), changes,
                            {"c", "a", "d", "a", "a"});
  EXPECT_EQ(chosen.code, 0) << chosen.err << chosen.terminal;
  EXPECT_EQ(Read(scene.project + "/a.txt"), "beta\n");
  EXPECT_NE(::access((scene.project + "/added").c_str(), F_OK), 0);
  EXPECT_NE(chosen.terminal.find("also discarded: added/file.txt: its folder "
                                 "added is made by a change that is "
                                 "discarded"),
            std::string::npos)
      << chosen.terminal;
  EXPECT_EQ(chosen.out,
            "The user applied 1 of 3 changes: a.txt. The user discarded the "
            "others (the project did not change there): added, "
            "added/file.txt\n");
  // Negative control: the same list applied whole writes all three.
  Scene whole = MakeScene();
  Write(whole.staged + "/a.txt", "beta\n");
  Write(whole.staged + "/added/file.txt", "new\n");
  Result all =
      RunAsking(whole, ApplyArgs(whole, "--ask"), ChangeList(whole), {"a"});
  EXPECT_EQ(all.code, 0) << all.err << all.terminal;
  EXPECT_EQ(Read(whole.project + "/added/file.txt"), "new\n");
}

TEST(ApplierTest, ApplyThenUndoRestores) {
  Scene scene = MakeScene();
  auto before = Snapshot(scene.project);
  Write(scene.staged + "/a.txt", "beta\n");
  Write(scene.staged + "/added/file.txt", "new\n");
  Result applied =
      RunApplier(scene, ApplyArgs(scene, "--yes"), ChangeList(scene));
  ASSERT_EQ(applied.code, 0) << applied.err;
  EXPECT_EQ(Snapshot(scene.project), Snapshot(scene.staged));
  Result list =
      RunApplier(scene, {"undo", "--project", scene.project, "--list"});
  ASSERT_EQ(list.code, 0) << list.err;
  std::string id = list.out.substr(0, list.out.find(' '));
  EXPECT_NE(list.out.find("added/file.txt"), std::string::npos) << list.out;
  Result undone = RunApplier(scene, {"undo", "--project", scene.project, id});
  ASSERT_EQ(undone.code, 0) << undone.err;
  EXPECT_EQ(Snapshot(scene.project), before);
  // The undo store is under $HOME, not in the project.
  EXPECT_EQ(::access((scene.home + "/.garuda/undo").c_str(), F_OK), 0);
}

TEST(ApplierTest, DeletionIsListedAndApplied) {
  Scene scene = MakeScene();
  Remove(scene.staged + "/src/x.c");
  std::string changes = ChangeList(scene);
  Result shown =
      RunApplier(scene, {"show", "--project", scene.project}, changes);
  EXPECT_NE(shown.out.find("D src/x.c"), std::string::npos) << shown.out;
  Result applied = RunApplier(scene, ApplyArgs(scene, "--yes"), changes);
  EXPECT_EQ(applied.code, 0) << applied.err;
  EXPECT_EQ(::access((scene.project + "/src/x.c").c_str(), F_OK), -1);
}

TEST(ApplierTest, NoChangeAsksNothing) {
  Scene scene = MakeScene();
  // No terminal here: a question could not be asked (it would discard, 3).
  Result result =
      RunApplier(scene, ApplyArgs(scene, "--ask"), ChangeList(scene));
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out, "No changes\n");
  // Negative control: with a change and no terminal, the question fails and
  // discards.
  Write(scene.staged + "/a.txt", "beta\n");
  Result asked =
      RunApplier(scene, ApplyArgs(scene, "--ask"), ChangeList(scene));
  EXPECT_EQ(asked.code, 3);
}

TEST(ApplierTest, ConflictRefusesAndWritesNothing) {
  Scene scene = MakeScene();
  Write(scene.staged + "/a.txt", "from the command\n");
  Write(scene.staged + "/other.txt", "new\n");
  std::string changes = ChangeList(scene);
  Write(scene.project + "/a.txt", "the person's edit\n");
  auto before = Snapshot(scene.project);
  Result result = RunApplier(scene, ApplyArgs(scene, "--yes"), changes);
  EXPECT_EQ(result.code, 4) << result.err;
  EXPECT_NE(result.err.find("a.txt"), std::string::npos);
  EXPECT_EQ(Snapshot(scene.project), before);
  EXPECT_EQ(RunApplier(scene, ApplyArgs(scene, "--dry-run"), changes).code, 4);
}

TEST(ApplierTest, ReplacedRenamedFoldersAndModeChanges) {
  Scene scene = MakeScene();
  Remove(scene.staged + "/d");  // rm -rf d && mkdir d && touch d/new
  MakeDir(scene.staged + "/d");
  Write(scene.staged + "/d/new", "");
  ::rename((scene.staged + "/src").c_str(), (scene.staged + "/source").c_str());
  ::chmod((scene.staged + "/tool.sh").c_str(), 0700);
  Result result =
      RunApplier(scene, ApplyArgs(scene, "--yes"), ChangeList(scene));
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(Snapshot(scene.project), Snapshot(scene.staged));
}

TEST(ApplierTest, ModeChangeOnly) {
  Scene scene = MakeScene();
  ASSERT_EQ(::chmod((scene.staged + "/a.txt").c_str(), 0600), 0);
  std::string changes = ChangeList(scene);
  Result shown =
      RunApplier(scene, {"show", "--project", scene.project}, changes);
  EXPECT_NE(shown.out.find("m a.txt  (mode 0644 -> 0600)"), std::string::npos)
      << shown.out;
  Result result = RunApplier(scene, ApplyArgs(scene, "--yes"), changes);
  ASSERT_EQ(result.code, 0) << result.err;
  struct stat st;
  ASSERT_EQ(::stat((scene.project + "/a.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(Read(scene.project + "/a.txt"), "a\n");
}

TEST(ApplierTest, FileBecomesFolderAndBack) {
  Scene scene = MakeScene();
  Remove(scene.staged + "/a.txt");
  Write(scene.staged + "/a.txt/inner", "inside\n");
  Remove(scene.staged + "/d");
  Write(scene.staged + "/d", "a file now\n");
  Result result =
      RunApplier(scene, ApplyArgs(scene, "--yes"), ChangeList(scene));
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(Snapshot(scene.project), Snapshot(scene.staged));
}

TEST(ApplierTest, SymlinkInsideAppliedOutsideRefused) {
  Scene scene = MakeScene();
  Symlink("src/x.c", scene.staged + "/inside");
  Result inside =
      RunApplier(scene, ApplyArgs(scene, "--yes"), ChangeList(scene));
  ASSERT_EQ(inside.code, 0) << inside.err;
  EXPECT_EQ(Read(scene.project + "/inside"), "int x;\n");
  Symlink("../../etc/passwd", scene.staged + "/outside");
  auto before = Snapshot(scene.project);
  Result outside =
      RunApplier(scene, ApplyArgs(scene, "--yes"), ChangeList(scene));
  EXPECT_EQ(outside.code, 5) << outside.err;
  EXPECT_NE(outside.err.find("out of the project"), std::string::npos);
  EXPECT_EQ(Snapshot(scene.project), before);
}

TEST(ApplierTest, WriteThroughASymlinkedFolderIsRefused) {
  Scene scene = MakeScene();
  std::string outside = NewTempDir("outside");
  MakeDir(scene.project + "/via");
  MakeDir(scene.staged + "/via");
  Write(scene.staged + "/via/planted", "planted\n");
  std::string changes = ChangeList(scene);
  // After the list was made, the project's folder became a link outward.
  Remove(scene.project + "/via");
  Symlink(outside, scene.project + "/via");
  Result result = RunApplier(scene, ApplyArgs(scene, "--yes"), changes);
  EXPECT_EQ(result.code, 5) << result.err;
  EXPECT_NE(result.err.find("symbolic link"), std::string::npos) << result.err;
  EXPECT_EQ(::access((outside + "/planted").c_str(), F_OK), -1);
  // Negative control: an open that follows links writes outside the root.
  Write(scene.project + "/via/planted", "planted\n");
  EXPECT_EQ(Read(outside + "/planted"), "planted\n");
}

TEST(ApplierTest, HundredMegabyteFile) {
  Scene scene = MakeScene();
  std::string big(100 << 20, '\0');
  for (size_t i = 0; i < big.size(); i += 4096)
    big[i] = static_cast<char>(i / 4096);
  Write(scene.staged + "/big.bin", big);
  Result result =
      RunApplier(scene, ApplyArgs(scene, "--yes"), ChangeList(scene));
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_TRUE(Read(scene.project + "/big.bin") == big);
}

TEST(ApplierTest, NamesWithSpacesNewlinesAndBadBytes) {
  Scene scene = MakeScene();
  std::vector<std::string> names = {"with space.txt", "new\nline.txt",
                                    "bad\xff\xfe.txt", "dir with space/x y"};
  for (const std::string& name : names) Write(scene.staged + "/" + name, name);
  std::string changes = ChangeList(scene);
  Result shown =
      RunApplier(scene, {"show", "--project", scene.project}, changes);
  EXPECT_NE(shown.out.find("\"new\\nline.txt\""), std::string::npos)
      << shown.out;
  EXPECT_NE(shown.out.find("bad\\xff\\xfe.txt"), std::string::npos)
      << shown.out;
  Result result = RunApplier(scene, ApplyArgs(scene, "--yes"), changes);
  ASSERT_EQ(result.code, 0) << result.err;
  for (const std::string& name : names) {
    EXPECT_EQ(Read(scene.project + "/" + name), name);
  }
}

TEST(ApplierTest, SensitiveIgnoredFileIsShownByNameAndNotApplied) {
  Scene scene = MakeScene();
  Write(scene.project + "/.gitignore", ".env\nbuild/\n");
  ASSERT_EQ(std::system(absl::StrCat("git -C '", scene.project,
                                     "' init -q >/dev/null 2>&1")
                            .c_str()),
            0);
  Remove(scene.staged);
  CopyTree(scene.project, scene.staged);
  Write(scene.staged + "/.env", "TOKEN=secret\n");
  for (int i = 0; i < 5; ++i)
    Write(absl::StrCat(scene.staged, "/build/o", i), "o");
  Write(scene.staged + "/a.txt", "beta\n");
  std::string changes = ChangeList(scene);
  Result shown =
      RunApplier(scene, {"show", "--project", scene.project}, changes);
  EXPECT_NE(shown.out.find("Sensitive files written"), std::string::npos)
      << shown.out;
  EXPECT_NE(shown.out.find("  .env\n"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("build/: 5 files"), std::string::npos) << shown.out;
  EXPECT_EQ(shown.out.find("TOKEN"), std::string::npos);
  Result result = RunApplier(scene, ApplyArgs(scene, "--yes"), changes);
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(::access((scene.project + "/.env").c_str(), F_OK), -1);
  EXPECT_EQ(::access((scene.project + "/build").c_str(), F_OK), -1);
  EXPECT_EQ(Read(scene.project + "/a.txt"), "beta\n");
}

TEST(ApplierTest, IncompleteListOffersOnlyDiscard) {
  Scene scene = MakeScene();
  for (int i = 0; i < 30; ++i)
    Write(absl::StrCat(scene.staged, "/many/", i), "x");
  auto before = Snapshot(scene.project);
  std::string changes = ChangeList(scene, {"--file-limit", "10"});
  Result result = RunAsking(scene, ApplyArgs(scene, "--ask"), changes,
                            {"a\n", "apply\n", "d\n"});
  EXPECT_EQ(result.code, 3) << result.err << result.terminal;
  EXPECT_NE(result.terminal.find("Apply is not offered"), std::string::npos);
  EXPECT_NE(result.terminal.find("limit of 10 files"), std::string::npos);
  EXPECT_EQ(Snapshot(scene.project), before);
  EXPECT_EQ(RunApplier(scene, ApplyArgs(scene, "--yes"), changes).code, 3);
  // Negative control: without the limit the same change can be applied.
  Result complete =
      RunAsking(scene, ApplyArgs(scene, "--ask"), ChangeList(scene), {"a\n"});
  EXPECT_EQ(complete.code, 0) << complete.err << complete.terminal;
}

TEST(ApplierTest, OverlayUpperLayerIsApplied) {
  Scene scene = MakeScene();
  // An upper layer as overlayfs writes it: whiteouts (character devices
  // 0/0), an opaque folder, a changed file.
  std::string upper = scene.base + "/upper";
  MakeDir(upper);
  ASSERT_EQ(::mknod((upper + "/a.txt").c_str(), S_IFCHR, makedev(0, 0)), 0);
  MakeDir(upper + "/d");
  std::string opaque = "y";
  ASSERT_EQ(::setxattr((upper + "/d").c_str(), "trusted.overlay.opaque",
                       opaque.data(), opaque.size(), 0),
            0);
  Write(upper + "/d/new", "");
  Write(upper + "/src/x.c", "int x = 1;\n");
  Remove(scene.staged + "/a.txt");  // the merged view, for comparison
  Remove(scene.staged + "/d");
  Write(scene.staged + "/d/new", "");
  Write(scene.staged + "/src/x.c", "int x = 1;\n");
  std::string changes = ChangeList(scene, {"--upper", upper});
  Result shown =
      RunApplier(scene, {"show", "--project", scene.project}, changes);
  EXPECT_NE(shown.out.find("R d  (folder removed and made again)"),
            std::string::npos)
      << shown.out;
  Result result = RunApplier(scene, ApplyArgs(scene, "--yes"), changes);
  ASSERT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(Snapshot(scene.project), Snapshot(scene.staged));
}

TEST(ApplierTest, UsageErrors) {
  Scene scene = MakeScene();
  EXPECT_EQ(RunApplier(scene, {"apply"}).code, 2);
  EXPECT_EQ(RunApplier(scene, {"apply", "--yes", "--ask"}).code, 2);
  EXPECT_EQ(RunApplier(scene, {"frobnicate"}).code, 2);
  EXPECT_EQ(RunApplier(scene, {"undo"}).code, 2);
  // Garbage on stdin is an error, not an apply.
  std::string garbage = NewTempDir("garbage") + "/g";
  Write(garbage, "not a change list");
  EXPECT_EQ(RunApplier(scene, ApplyArgs(scene, "--yes"), garbage).code, 1);
}

}  // namespace
}  // namespace garuda
