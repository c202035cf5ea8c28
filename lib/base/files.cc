#include "lib/base/files.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/status_macros.h"

namespace garuda {

absl::StatusOr<UniqueFd> OpenFile(const std::string& path, int flags,
                                  mode_t mode) {
  int fd;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return LastErrnoStatus(absl::StrCat("open(", path, ")"));
  return UniqueFd(fd);
}

absl::StatusOr<std::string> ReadAll(int fd) {
  std::string out;
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      return LastErrnoStatus("read");
    }
    if (n == 0) return out;
    out.append(buffer, static_cast<size_t>(n));
  }
}

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  ASSIGN_OR_RETURN(UniqueFd fd, OpenFile(path, O_RDONLY));
  absl::StatusOr<std::string> content = ReadAll(fd.get());
  if (!content.ok()) {
    return absl::Status(content.status().code(),
                        absl::StrCat(path, ": ", content.status().message()));
  }
  return content;
}

absl::Status WriteAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return LastErrnoStatus("write");
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

absl::Status ReadExact(int fd, void* buffer, size_t size) {
  char* out = static_cast<char*>(buffer);
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::read(fd, out + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return LastErrnoStatus("read");
    }
    if (n == 0) {
      if (done == 0) return absl::OutOfRangeError("end of file");
      return absl::DataLossError(
          absl::StrCat("truncated: got ", done, " of ", size, " bytes"));
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

std::string Dirname(absl::string_view path) {
  size_t slash = path.rfind('/');
  if (slash == absl::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

std::string Basename(absl::string_view path) {
  size_t slash = path.rfind('/');
  if (slash == absl::string_view::npos) return std::string(path);
  return std::string(path.substr(slash + 1));
}

std::string JoinPath(absl::string_view a, absl::string_view b) {
  if (a.empty()) return std::string(b);
  if (b.empty()) return std::string(a);
  if (a.back() == '/') a.remove_suffix(1);
  if (b.front() == '/') b.remove_prefix(1);
  return absl::StrCat(a, "/", b);
}

absl::Status SyncParentDirectory(const std::string& path) {
  std::string dir = Dirname(path);
  ASSIGN_OR_RETURN(UniqueFd fd, OpenFile(dir, O_RDONLY | O_DIRECTORY));
  if (::fsync(fd.get()) != 0) {
    return LastErrnoStatus(absl::StrCat("fsync(", dir, ")"));
  }
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view content, mode_t mode) {
  absl::BitGen random;
  std::string temp = absl::StrCat(path, ".tmp.", ::getpid(), ".",
                                  absl::Uniform<uint32_t>(random));
  ASSIGN_OR_RETURN(UniqueFd fd,
                   OpenFile(temp, O_WRONLY | O_CREAT | O_EXCL, mode));
  absl::Status status = WriteAll(fd.get(), content);
  if (status.ok() && ::fchmod(fd.get(), mode) != 0) {
    status = LastErrnoStatus(absl::StrCat("fchmod(", temp, ")"));
  }
  if (status.ok() && ::fsync(fd.get()) != 0) {
    status = LastErrnoStatus(absl::StrCat("fsync(", temp, ")"));
  }
  fd.Reset();
  if (status.ok() && ::rename(temp.c_str(), path.c_str()) != 0) {
    status = LastErrnoStatus(absl::StrCat("rename(", temp, ", ", path, ")"));
  }
  if (!status.ok()) {
    ::unlink(temp.c_str());
    return status;
  }
  return SyncParentDirectory(path);
}

absl::Status MakeDirectories(const std::string& path, mode_t mode) {
  if (path.empty()) return absl::InvalidArgumentError("empty folder path");
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat(path, " exists and is not a folder"));
    }
    return absl::OkStatus();
  }
  std::string parent = Dirname(path);
  if (parent != path && parent != "." && parent != "/") {
    RETURN_IF_ERROR(MakeDirectories(parent, mode));
  }
  if (::mkdir(path.c_str(), mode) != 0 && errno != EEXIST) {
    return LastErrnoStatus(absl::StrCat("mkdir(", path, ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> HomeDirectory() {
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] == '/') return std::string(home);
  struct passwd pw;
  struct passwd* result = nullptr;
  std::vector<char> buffer(16384);
  if (::getpwuid_r(::getuid(), &pw, buffer.data(), buffer.size(), &result) !=
          0 ||
      result == nullptr) {
    return absl::NotFoundError(
        "cannot find the home folder: HOME is unset and the user has no "
        "password entry");
  }
  return std::string(pw.pw_dir);
}

}  // namespace garuda
