#include "sandbox/denied_paths.h"

#include <glob.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "sandbox/private_walk.h"

namespace garuda {
namespace {

// Each step is its kind's letter, its path and a NUL; the list ends with
// kEnd. A path never holds a NUL.
constexpr char kDenyDirLetter = 'd';
constexpr char kDenyFileLetter = 'f';
constexpr char kEnd = 'E';
// Far above any /etc; a list this long is a fault, not a host.
constexpr size_t kMostBytes = 16 << 20;

bool IsAbsolute(const std::string& path) {
  return !path.empty() && path[0] == '/';
}

bool IsPattern(const std::string& path) {
  return path.find_first_of("*?[") != std::string::npos;
}

}  // namespace

std::vector<std::string> OutermostPaths(std::vector<std::string> paths) {
  std::sort(paths.begin(), paths.end());
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
  std::vector<std::string> kept;
  for (const std::string& path : paths) {
    if (!kept.empty() && absl::StartsWith(path, kept.back() + "/")) continue;
    kept.push_back(path);
  }
  return kept;
}

// The policy's denied paths, absolute, with its patterns expanded; not yet
// sorted or pruned.
absl::StatusOr<std::vector<std::string>> NamedDeniedPaths(
    const SandboxPolicy& policy, const std::string& project) {
  std::vector<std::string> denied;
  for (const std::string& given : policy.denied_paths()) {
    if (given.empty()) continue;
    std::string path = IsAbsolute(given) ? given : JoinPath(project, given);
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    if (!IsAbsolute(given) || !IsPattern(given)) {
      denied.push_back(path);
      continue;
    }
    glob_t matches = {};
    int result = ::glob(path.c_str(), GLOB_NOSORT, nullptr, &matches);
    if (result != 0 && result != GLOB_NOMATCH) {
      ::globfree(&matches);
      return absl::InternalError(
          absl::StrCat("denied path pattern ", given, ": glob failed"));
    }
    for (size_t i = 0; i < matches.gl_pathc; ++i) {
      struct stat st;
      if (::lstat(matches.gl_pathv[i], &st) != 0 || S_ISLNK(st.st_mode)) {
        continue;
      }
      denied.push_back(matches.gl_pathv[i]);
    }
    ::globfree(&matches);
  }
  return denied;
}

absl::Status CheckPrivateUnder(const SandboxPolicy& policy) {
  for (const std::string& folder : policy.deny_private_under()) {
    if (!IsAbsolute(folder)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "denyPrivateUnder \"", folder, "\" must be an absolute path"));
    }
  }
  return absl::OkStatus();
}

void FindPrivatePaths(const SandboxPolicy& policy, PrivateWalk* private_walk,
                      std::vector<std::string>* found) {
  for (const std::string& folder : policy.deny_private_under()) {
    if (private_walk != nullptr) {
      private_walk->Find(folder, found);
    } else {
      FindPrivateUnder(folder, found);
    }
  }
}

absl::StatusOr<std::vector<std::string>> ExpandDeniedPaths(
    const SandboxPolicy& policy, const std::string& project,
    PrivateWalk* private_walk) {
  RETURN_IF_ERROR(CheckPrivateUnder(policy));
  ASSIGN_OR_RETURN(std::vector<std::string> denied,
                   NamedDeniedPaths(policy, project));
  FindPrivatePaths(policy, private_walk, &denied);
  // A path inside one denied already adds nothing, and would need a mount
  // point inside a folder nobody may open.
  return OutermostPaths(std::move(denied));
}

absl::StatusOr<std::vector<MountStep>> DeniedSteps(const SandboxPolicy& policy,
                                                   const MountPlan& plan,
                                                   PrivateWalk* private_walk) {
  ASSIGN_OR_RETURN(std::vector<std::string> denied,
                   ExpandDeniedPaths(policy, plan.project, private_walk));
  std::vector<MountStep> steps;
  for (const std::string& path : denied) {
    RETURN_IF_ERROR(AddDeniedStep(path, &steps));
  }
  return steps;
}

absl::Status SendDenySteps(int fd, const std::vector<MountStep>& steps) {
  std::string bytes;
  for (const MountStep& step : steps) {
    bytes.push_back(step.kind == MountStep::Kind::kDenyDir ? kDenyDirLetter
                                                           : kDenyFileLetter);
    absl::StrAppend(&bytes, step.target);
    bytes.push_back('\0');
  }
  bytes.push_back(kEnd);
  size_t sent = 0;
  while (sent < bytes.size()) {
    // MSG_NOSIGNAL: PID 1 may have died of a failed setup already.
    ssize_t n =
        ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return LastErrnoStatus("send the denied paths' steps to PID 1");
    }
    sent += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<MountStep>> ReceiveDenySteps(int fd) {
  std::string bytes;
  char buffer[4096];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      return LastErrnoStatus("read the denied paths' steps");
    }
    if (n == 0) break;
    bytes.append(buffer, static_cast<size_t>(n));
    if (bytes.size() > kMostBytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "the denied paths' steps exceed ", kMostBytes, " bytes"));
    }
  }
  std::vector<MountStep> steps;
  size_t at = 0;
  while (at < bytes.size() && bytes[at] != kEnd) {
    const char letter = bytes[at];
    const size_t nul = bytes.find('\0', at + 1);
    if ((letter != kDenyDirLetter && letter != kDenyFileLetter) ||
        nul == std::string::npos || nul == at + 1) {
      return absl::DataLossError(
          absl::StrCat("the denied paths' steps are malformed at byte ", at));
    }
    steps.push_back({letter == kDenyDirLetter ? MountStep::Kind::kDenyDir
                                              : MountStep::Kind::kDenyFile,
                     "", bytes.substr(at + 1, nul - at - 1)});
    at = nul + 1;
  }
  if (at + 1 != bytes.size()) {
    // No end marker (the supervisor stopped before it), or bytes after it.
    return absl::DataLossError(
        "the supervisor did not send the whole list of paths to hide");
  }
  return steps;
}

}  // namespace garuda
