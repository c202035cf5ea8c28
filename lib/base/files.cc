#include "lib/base/files.h"

#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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

const char* FileTypeName(mode_t mode) {
  switch (mode & S_IFMT) {
    case S_IFREG:
      return "a regular file";
    case S_IFDIR:
      return "a folder";
    case S_IFLNK:
      return "a symbolic link";
    case S_IFIFO:
      return "a FIFO (named pipe)";
    case S_IFCHR:
      return "a character device";
    case S_IFBLK:
      return "a block device";
    case S_IFSOCK:
      return "a socket";
  }
  return "a file of unknown type";
}

namespace {

absl::Status NotRegular(const std::string& path, mode_t mode) {
  return absl::FailedPreconditionError(absl::StrCat(
      path, " is ", FileTypeName(mode), ", not a regular file",
      S_ISLNK(mode) ? " (links are not followed here; nothing of the target "
                      "was read)"
                    : ""));
}

}  // namespace

absl::Status CheckRegularFile(int fd, const std::string& path) {
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    return LastErrnoStatus(absl::StrCat("fstat(", path, ")"));
  }
  if (!S_ISREG(st.st_mode)) return NotRegular(path, st.st_mode);
  return absl::OkStatus();
}

absl::StatusOr<UniqueFd> OpenRegularFile(const std::string& path,
                                         const RegularFileOptions& options,
                                         int flags, mode_t mode) {
  // The type first, so that a device is never opened (opening one can have
  // effects of its own: a tape rewinds, a modem line hangs up). A missing
  // file falls through to the open, which may create it (O_CREAT).
  struct stat st;
  int looked = options.follow_links ? ::stat(path.c_str(), &st)
                                    : ::lstat(path.c_str(), &st);
  if (looked == 0 && !S_ISREG(st.st_mode)) return NotRegular(path, st.st_mode);
  int open_flags = flags | O_NONBLOCK | O_NOCTTY;
  if (!options.follow_links) open_flags |= O_NOFOLLOW;
  int raw;
  do {
    raw = ::open(path.c_str(), open_flags | O_CLOEXEC, mode);
  } while (raw < 0 && errno == EINTR);
  if (raw < 0) {
    // Replaced by a link between the lstat and the open.
    if (errno == ELOOP && !options.follow_links) {
      return NotRegular(path, S_IFLNK);
    }
    return LastErrnoStatus(absl::StrCat("open(", path, ")"));
  }
  UniqueFd fd(raw);
  // What was opened is what counts: the path may have changed since the
  // lstat.
  RETURN_IF_ERROR(CheckRegularFile(fd.get(), path));
  int status_flags = ::fcntl(fd.get(), F_GETFL);
  if (status_flags >= 0) ::fcntl(fd.get(), F_SETFL, status_flags & ~O_NONBLOCK);
  return fd;
}

absl::StatusOr<std::string> ReadUpTo(int fd, const std::string& path,
                                     size_t max_bytes) {
  std::string out;
  struct stat st;
  if (::fstat(fd, &st) == 0 && st.st_size > 0 &&
      static_cast<uint64_t>(st.st_size) <= max_bytes) {
    out.reserve(static_cast<size_t>(st.st_size));
  }
  char buffer[65536];
  for (;;) {
    // One byte more than the cap may take, to tell "exactly the cap" from
    // "more".
    size_t want = std::min(sizeof(buffer), max_bytes + 1 - out.size());
    ssize_t n = ::read(fd, buffer, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      return LastErrnoStatus(absl::StrCat("read(", path, ")"));
    }
    if (n == 0) return out;
    if (out.size() + static_cast<size_t>(n) > max_bytes) {
      return absl::ResourceExhaustedError(absl::StrCat(
          path, " is larger than the ", max_bytes,
          "-byte limit for this kind of file; nothing of it was used"));
    }
    out.append(buffer, static_cast<size_t>(n));
  }
}

absl::StatusOr<std::string> ReadRegularFile(const std::string& path,
                                            const RegularFileOptions& options) {
  ASSIGN_OR_RETURN(UniqueFd fd, OpenRegularFile(path, options));
  return ReadUpTo(fd.get(), path, options.max_bytes);
}

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  RegularFileOptions options;
  options.follow_links = true;
  return ReadRegularFile(path, options);
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

absl::StatusOr<std::string> RealPath(const std::string& path,
                                     absl::string_view what) {
  char resolved[PATH_MAX];
  if (::realpath(path.c_str(), resolved) == nullptr) {
    return ErrnoStatus(errno, absl::StrCat(what, " ", path));
  }
  return std::string(resolved);
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
