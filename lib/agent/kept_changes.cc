#include "lib/agent/kept_changes.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"

namespace garuda {
namespace agent {
namespace {

// `word` as the shell reads it back.
std::string Quoted(const std::string& word) {
  if (!word.empty() &&
      word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV"
                             "WXYZ0123456789_./+-:@%=,") == std::string::npos) {
    return word;
  }
  return absl::StrCat("'", absl::StrReplaceAll(word, {{"'", "'\\''"}}), "'");
}

absl::Status CopyAll(int from, int to, const std::string& name) {
  std::vector<char> buffer(1 << 20);
  for (;;) {
    ssize_t n = ::read(from, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return LastErrnoStatus("read of the staged change list");
    if (n == 0) return absl::OkStatus();
    absl::Status written =
        WriteAll(to, absl::string_view(buffer.data(), static_cast<size_t>(n)));
    if (!written.ok()) {
      return absl::Status(written.code(), absl::StrCat("write ", name, ": ",
                                                       written.message()));
    }
  }
}

}  // namespace

std::string KeptChangesFolder(const std::string& session_dir) {
  return JoinPath(session_dir, "staged");
}

absl::StatusOr<std::string> KeepChangeSet(const std::string& session_dir,
                                          int sealed_fd) {
  const std::string folder = KeptChangesFolder(session_dir);
  RETURN_IF_ERROR(MakeDirectories(folder, 0700));
  const std::string temp =
      JoinPath(folder, absl::StrCat(".keeping.", ::getpid()));
  ::unlink(temp.c_str());  // a crashed earlier attempt of this process id
  ASSIGN_OR_RETURN(
      UniqueFd out,
      OpenFile(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
  absl::Status status;
  if (::lseek(sealed_fd, 0, SEEK_SET) != 0) {
    status = LastErrnoStatus("lseek of the staged change list");
  }
  if (status.ok()) status = CopyAll(sealed_fd, out.get(), temp);
  if (status.ok() && ::fsync(out.get()) != 0) {
    status = LastErrnoStatus(absl::StrCat("fsync(", temp, ")"));
  }
  out.Reset();
  std::string path;
  for (int n = 1; status.ok() && path.empty(); ++n) {
    std::string candidate = JoinPath(folder, absl::StrCat(n, ".changeset"));
    // A hard link never replaces a file: the first free number wins, and
    // a list kept before is never overwritten.
    if (::link(temp.c_str(), candidate.c_str()) == 0) {
      path = candidate;
    } else if (errno != EEXIST || n > 100000) {
      status =
          LastErrnoStatus(absl::StrCat("link(", temp, ", ", candidate, ")"));
    }
  }
  ::unlink(temp.c_str());
  if (!status.ok()) return status;
  RETURN_IF_ERROR(SyncParentDirectory(path));
  return path;
}

std::string KeptLine(const std::string& path, const std::string& project) {
  return absl::StrCat(
      "The changes were not applied: no person could answer the question in "
      "this session, so the project did not change. They are kept for "
      "review in ",
      path,
      "; a person can apply them with: garuda-applier apply --ask "
      "--project ",
      Quoted(project), " < ", Quoted(path));
}

}  // namespace agent
}  // namespace garuda
