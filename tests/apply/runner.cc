#include "tests/apply/runner.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"

namespace garuda::testing {

std::string ApplierBinary() {
  return absl::StrCat(std::getenv("TEST_SRCDIR"),
                      "/garuda/cmd/garuda-applier/garuda-applier");
}

Scene MakeScene() {
  Scene s;
  static_cast<ProjectPair&>(s) = MakeProjectPair("scene");
  s.home = s.base + "/home";
  MakeDir(s.home);
  return s;
}

void ChildExec(const Scene& scene, const std::vector<std::string>& args,
               const std::string& in, const std::string& out,
               const std::string& err) {
  // Under forkpty, 0 is the terminal: a copy keeps it open (and the
  // program's /dev/tty alive) once 0, 1 and 2 are redirected.
  if (::isatty(0)) (void)::dup(0);
  int in_fd = ::open(in.empty() ? "/dev/null" : in.c_str(), O_RDONLY);
  int out_fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  int err_fd = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ::dup2(in_fd, 0);
  ::dup2(out_fd, 1);
  ::dup2(err_fd, 2);
  ::setenv("HOME", scene.home.c_str(), 1);
  std::vector<char*> argv;
  std::string binary = ApplierBinary();
  argv.push_back(binary.data());
  for (const std::string& arg : args)
    argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  ::execv(argv[0], argv.data());
  ::_exit(127);
}

int Wait(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

Result RunApplier(const Scene& scene, const std::vector<std::string>& args,
                  const std::string& in) {
  std::string out = NewTempDir("out") + "/out", err = out + ".err";
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setsid();  // no controlling terminal: /dev/tty cannot be opened
    ChildExec(scene, args, in, out, err);
  }
  Result result;
  result.code = Wait(pid);
  result.out = Read(out);
  result.err = Read(err);
  return result;
}

std::string ChangeList(const Scene& scene, std::vector<std::string> extra) {
  std::string path = NewTempDir("cs") + "/changes";
  std::vector<std::string> args = {"diff-dirs", "--project", scene.project};
  if (extra.empty() || extra[0] != "--upper") {
    args.insert(args.end(), {"--staged", scene.staged});
  }
  args.insert(args.end(), extra.begin(), extra.end());
  std::string out = path;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setsid();
    ChildExec(scene, args, "", out, path + ".err");
  }
  EXPECT_EQ(Wait(pid), 0) << Read(path + ".err");
  return path;
}

std::string WriteList(const ChangeSet& change_set) {
  std::string path = NewTempDir("crafted") + "/changes";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  EXPECT_GE(fd, 0);
  absl::Status written = WriteChangeSet(change_set, fd, path);
  EXPECT_TRUE(written.ok()) << written;
  ::close(fd);
  return path;
}

std::vector<std::string> ApplyArgs(const Scene& scene, const std::string& how) {
  return {"apply", "--project", scene.project, how};
}

Paused StartPaused(const Scene& scene, const std::vector<std::string>& args,
                   const std::string& in, int step) {
  Paused paused;
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    ADD_FAILURE() << "socketpair";
    return paused;
  }
  paused.out = NewTempDir("out") + "/out";
  paused.err = paused.out + ".err";
  paused.pid = ::fork();
  if (paused.pid == 0) {
    ::setsid();
    // A SIGQUIT sent by a test leaves no core file behind.
    struct rlimit no_core = {0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
    // The seam's end, kept across exec at a fixed number.
    ::dup2(pair[1], 9);
    ::setenv("GARUDA_TEST_ONLY_APPLY_PAUSE", absl::StrCat(step, ":9").c_str(),
             1);
    ChildExec(scene, args, in, paused.out, paused.err);
  }
  ::close(pair[1]);
  paused.seam = pair[0];
  std::string seen;
  std::string expected = absl::StrCat("paused ", step, "\n");
  while (seen.size() < expected.size()) {
    struct pollfd p = {paused.seam, POLLIN, 0};
    if (::poll(&p, 1, 60000) <= 0) break;  // a minute: the deadline
    char buffer[64];
    ssize_t n = ::read(paused.seam, buffer, sizeof(buffer));
    if (n <= 0) break;
    seen.append(buffer, n);
  }
  paused.paused = seen == expected;
  return paused;
}

Result Finish(Paused& paused, char answer) {
  if (answer != 0) (void)::write(paused.seam, &answer, 1);
  ::close(paused.seam);
  Result result;
  result.code = Wait(paused.pid);
  result.out = Read(paused.out);
  result.err = Read(paused.err);
  return result;
}

namespace {
void FindTemporaries(const std::string& folder, const std::string& relative,
                     std::vector<std::string>* found) {
  DIR* dir = ::opendir(folder.c_str());
  if (dir == nullptr) return;
  std::vector<std::string> subfolders;
  while (struct dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    std::string path = relative.empty() ? name : relative + "/" + name;
    if (absl::StartsWith(name, ".garuda-")) found->push_back(path);
    struct stat st;
    if (::lstat((folder + "/" + name).c_str(), &st) == 0 &&
        S_ISDIR(st.st_mode)) {
      subfolders.push_back(name);
    }
  }
  ::closedir(dir);
  for (const std::string& name : subfolders) {
    FindTemporaries(folder + "/" + name,
                    relative.empty() ? name : relative + "/" + name, found);
  }
}
}  // namespace

std::vector<std::string> Temporaries(const std::string& root) {
  std::vector<std::string> found;
  FindTemporaries(root, "", &found);
  return found;
}

}  // namespace garuda::testing
