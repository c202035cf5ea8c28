#include "lib/base/helper_paths.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/unique_fd.h"
#include "lib/base/version.h"

extern char** environ;

namespace garuda {
namespace {

// More than any version line.
constexpr size_t kMaxAnswerBytes = 4096;

struct VersionQuery {
  std::string path;
  pid_t pid = -1;
  UniqueFd out;
  std::string answer;
  int exit_code = -1;  // 128 + the signal when killed
  bool timed_out = false;
  absl::Status error;  // spawning it failed
};

bool InBuildTree(const std::string& dir) {
  return absl::StrContains(dir, "/bazel-out/") ||
         absl::StrContains(dir, "/bazel-bin/");
}

// What the person does about a missing or mismatched helper.
std::string Fix(const std::string& dir) {
  if (InBuildTree(dir)) {
    return "build every program of this checkout together: bazel build "
           "//cmd/...";
  }
  return absl::StrCat(
      "install the whole package of this version again: apt-get install "
      "--reinstall ./garuda_",
      kGarudaVersion, "_amd64.deb (bash tools/package.sh builds it)");
}

std::string Self() { return program_invocation_short_name; }

int64_t NowMs() {
  struct timespec now;
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return int64_t{now.tv_sec} * 1000 + now.tv_nsec / 1000000;
}

// Starts `query.path --version`, its standard output on a pipe, standard
// input and error /dev/null.
void Start(VersionQuery& query) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    query.error = LastErrnoStatus("pipe2");
    return;
  }
  query.out = UniqueFd(fds[0]);
  UniqueFd write_end(fds[1]);
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_adddup2(&actions, write_end.get(), 1);
  ::posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  std::string flag = "--version";
  char* argv[] = {query.path.data(), flag.data(), nullptr};
  int error = ::posix_spawn(&query.pid, query.path.c_str(), &actions, nullptr,
                            argv, environ);
  ::posix_spawn_file_actions_destroy(&actions);
  if (error != 0) {
    query.pid = -1;
    query.error = ErrnoStatus(error, absl::StrCat("run ", query.path));
  }
}

// Reads every started query's answer until each ends or the deadline; a
// program still silent or writing then is killed and marked timed out.
void Collect(std::vector<VersionQuery>& queries, int timeout_ms) {
  const int64_t deadline = NowMs() + timeout_ms;
  for (;;) {
    std::vector<pollfd> polled;
    std::vector<VersionQuery*> owners;
    for (VersionQuery& query : queries) {
      if (query.out.get() >= 0 && query.pid > 0) {
        polled.push_back({query.out.get(), POLLIN, 0});
        owners.push_back(&query);
      }
    }
    const int64_t left = deadline - NowMs();
    if (polled.empty() || left <= 0) break;
    int ready = ::poll(polled.data(), polled.size(), static_cast<int>(left));
    if (ready < 0 && errno != EINTR) break;
    for (size_t i = 0; i < polled.size(); ++i) {
      if (polled[i].revents == 0) continue;
      char buffer[512];
      ssize_t n = ::read(polled[i].fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      VersionQuery& query = *owners[i];
      if (n > 0) query.answer.append(buffer, static_cast<size_t>(n));
      // A program that writes more than a version line is not ours.
      if (query.answer.size() > kMaxAnswerBytes) ::kill(query.pid, SIGKILL);
      if (n <= 0 || query.answer.size() > kMaxAnswerBytes) query.out.Reset();
    }
  }
  for (VersionQuery& query : queries) {
    if (query.pid <= 0) continue;
    if (query.out.get() >= 0) {
      query.timed_out = true;
      ::kill(query.pid, SIGKILL);
    }
    int status = 0;
    while (::waitpid(query.pid, &status, 0) < 0 && errno == EINTR) {
    }
    query.exit_code = WIFEXITED(status)     ? WEXITSTATUS(status)
                      : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                            : -1;
  }
}

absl::Status Judge(const std::string& dir, const VersionQuery& query,
                   int timeout_ms) {
  const std::string name = Basename(query.path);
  const std::string want = absl::StrCat(name, " ", kGarudaVersion);
  if (!query.error.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat(query.path, " could not be run (", query.error.message(),
                     "); ", Fix(dir)));
  }
  if (query.timed_out) {
    return absl::FailedPreconditionError(absl::StrCat(
        query.path, " did not answer --version within ", timeout_ms / 1000,
        " s, so it is not the helper ", want, "; ", Fix(dir)));
  }
  absl::string_view answer = absl::StripTrailingAsciiWhitespace(query.answer);
  if (query.exit_code == 0 && answer == want) return absl::OkStatus();
  absl::string_view version = answer;
  if (query.exit_code == 0 && absl::ConsumePrefix(&version, name + " ") &&
      !version.empty() && version.find_first_of(" \n") == version.npos) {
    return absl::FailedPreconditionError(absl::StrCat(
        query.path, " is version ", version, " but ", Self(), " is ",
        kGarudaVersion,
        ": a session starts only helpers of its own version "
        "(their channels and lockdown rules change between versions); ",
        Fix(dir)));
  }
  return absl::FailedPreconditionError(
      absl::StrCat(query.path, " is not the helper ", want,
                   ": --version answered \"", answer.substr(0, 200),
                   "\" with exit status ", query.exit_code, "; ", Fix(dir)));
}

}  // namespace

absl::StatusOr<std::string> OwnProgramFolder() {
  char buffer[4096];
  ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  if (n < 0) return LastErrnoStatus("readlink(/proc/self/exe)");
  return Dirname(std::string(buffer, n));
}

std::string HelperPath(const std::string& dir, absl::string_view name) {
  std::string beside = JoinPath(dir, name);
  std::string built = JoinPath(JoinPath(Dirname(dir), name), name);
  if (::access(beside.c_str(), X_OK) != 0 &&
      ::access(built.c_str(), X_OK) == 0) {
    return built;
  }
  return beside;
}

absl::Status CheckHelpers(const std::string& dir,
                          const std::vector<std::string>& paths,
                          int timeout_ms) {
  for (const std::string& path : paths) {
    if (::access(path.c_str(), X_OK) == 0) continue;
    const int error = errno;
    const std::string name = Basename(path);
    if (error != ENOENT) {
      return absl::FailedPreconditionError(absl::StrCat(
          path, " cannot be run (", ::strerror(error), "); ", Fix(dir)));
    }
    const std::string built = JoinPath(JoinPath(Dirname(dir), name), name);
    return absl::FailedPreconditionError(absl::StrCat(
        name, " is not in ", dir, ": the helper programs are installed beside ",
        Self(), "; name their folder with --helpers-dir, or ",
        InBuildTree(dir) ? absl::StrCat("(it is not in the build tree at ",
                                        built, " either) ")
                         : "",
        Fix(dir)));
  }
  std::vector<VersionQuery> queries(paths.size());
  for (size_t i = 0; i < paths.size(); ++i) {
    queries[i].path = paths[i];
    Start(queries[i]);
  }
  Collect(queries, timeout_ms);
  for (const VersionQuery& query : queries) {
    if (absl::Status judged = Judge(dir, query, timeout_ms); !judged.ok()) {
      return judged;
    }
  }
  return absl::OkStatus();
}

}  // namespace garuda
