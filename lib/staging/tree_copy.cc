#include "lib/staging/tree_copy.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"
#include "lib/staging/folders.h"

namespace garuda {
namespace {

UniqueFd OpenFolderAt(int parent, const char* name) {
  return UniqueFd(
      ::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

absl::Status Measure(int fd, const std::string& shown, uint64_t file_limit,
                     uint64_t byte_limit, TreeSize* size) {
  ASSIGN_OR_RETURN(std::vector<std::string> names, FolderNames(fd, shown));
  for (const std::string& name : names) {
    if (size->files > file_limit || size->bytes > byte_limit) break;
    struct stat st;
    std::string child = JoinPath(shown, name);
    if (::fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return LastErrnoStatus(absl::StrCat("stat(", child, ")"));
    }
    ++size->files;
    if (S_ISREG(st.st_mode)) {
      size->bytes += static_cast<uint64_t>(st.st_size);
      if (size->first_file.empty()) size->first_file = child;
    }
    if (S_ISDIR(st.st_mode)) {
      UniqueFd sub = OpenFolderAt(fd, name.c_str());
      if (!sub) return LastErrnoStatus(absl::StrCat("open(", child, ")"));
      RETURN_IF_ERROR(Measure(sub.get(), child, file_limit, byte_limit, size));
    }
  }
  return absl::OkStatus();
}

absl::Status CopyFile(int from_dir, int to_dir, const std::string& name,
                      const struct stat& st, const std::string& shown,
                      CopyStats* stats) {
  UniqueFd in(
      ::openat(from_dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!in) return LastErrnoStatus(absl::StrCat("open(", shown, ")"));
  UniqueFd out(::openat(to_dir, name.c_str(),
                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                        0600));
  if (!out) return LastErrnoStatus(absl::StrCat("create copy of ", shown));
  if (::ioctl(out.get(), FICLONE, in.get()) == 0) {
    ++stats->reflinked;
  } else {
    off_t left = st.st_size;
    while (left > 0) {
      ssize_t n = ::copy_file_range(in.get(), nullptr, out.get(), nullptr,
                                    static_cast<size_t>(left), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return LastErrnoStatus(absl::StrCat("copy ", shown));
      if (n == 0) break;  // the file shrank while being copied
      left -= n;
    }
    ++stats->copied;
  }
  if (::fchmod(out.get(), st.st_mode & 07777) != 0) {
    return LastErrnoStatus(absl::StrCat("chmod copy of ", shown));
  }
  struct timespec times[2] = {st.st_atim, st.st_mtim};
  ::futimens(out.get(), times);
  return absl::OkStatus();
}

absl::Status CopyInto(int from, int to, const std::string& shown,
                      CopyStats* stats) {
  ASSIGN_OR_RETURN(std::vector<std::string> names, FolderNames(from, shown));
  for (const std::string& name : names) {
    std::string child = JoinPath(shown, name);
    struct stat st;
    if (::fstatat(from, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      // Gone since the folder was listed (git gc packing objects, say):
      // the copy shows the tree without it, as a later listing would.
      if (errno == ENOENT) continue;
      return LastErrnoStatus(absl::StrCat("stat(", child, ")"));
    }
    if (S_ISDIR(st.st_mode)) {
      if (::mkdirat(to, name.c_str(), 0700) != 0) {
        return LastErrnoStatus(absl::StrCat("mkdir copy of ", child));
      }
      UniqueFd sub_from = OpenFolderAt(from, name.c_str());
      if (!sub_from && errno == ENOENT) continue;  // gone, as above
      UniqueFd sub_to = OpenFolderAt(to, name.c_str());
      if (!sub_from || !sub_to) {
        return LastErrnoStatus(absl::StrCat("open(", child, ")"));
      }
      RETURN_IF_ERROR(CopyInto(sub_from.get(), sub_to.get(), child, stats));
      ::fchmod(sub_to.get(), st.st_mode & 07777);
      struct timespec times[2] = {st.st_atim, st.st_mtim};
      ::futimens(sub_to.get(), times);
    } else if (S_ISREG(st.st_mode)) {
      absl::Status copied = CopyFile(from, to, name, st, child, stats);
      if (absl::IsNotFound(copied)) continue;  // gone, as above
      RETURN_IF_ERROR(copied);
    } else if (S_ISLNK(st.st_mode)) {
      std::string target(static_cast<size_t>(st.st_size) + 1, '\0');
      ssize_t n =
          ::readlinkat(from, name.c_str(), target.data(), target.size());
      if (n < 0) return LastErrnoStatus(absl::StrCat("readlink(", child, ")"));
      target.resize(static_cast<size_t>(n));
      if (::symlinkat(target.c_str(), to, name.c_str()) != 0) {
        return LastErrnoStatus(absl::StrCat("symlink copy of ", child));
      }
    } else {
      ++stats->skipped_special;
    }
  }
  return absl::OkStatus();
}

bool Later(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec > b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec > b.tv_nsec);
}

absl::Status Latest(int fd, const std::string& shown, struct timespec* latest) {
  ASSIGN_OR_RETURN(std::vector<std::string> names, FolderNames(fd, shown));
  for (const std::string& name : names) {
    struct stat st;
    if (::fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;
      return LastErrnoStatus(absl::StrCat("stat(", JoinPath(shown, name), ")"));
    }
    if (Later(st.st_ctim, *latest)) *latest = st.st_ctim;
    if (S_ISDIR(st.st_mode)) {
      UniqueFd sub = OpenFolderAt(fd, name.c_str());
      if (!sub) continue;
      RETURN_IF_ERROR(Latest(sub.get(), JoinPath(shown, name), latest));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<struct timespec> LatestChange(const std::string& root) {
  struct timespec latest = {0, 0};
  struct stat st;
  if (::lstat(root.c_str(), &st) != 0) {
    if (errno == ENOENT) return latest;
    return LastErrnoStatus(absl::StrCat("stat(", root, ")"));
  }
  latest = st.st_ctim;
  if (!S_ISDIR(st.st_mode)) return latest;
  UniqueFd fd(
      ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return LastErrnoStatus(absl::StrCat("open(", root, ")"));
  RETURN_IF_ERROR(Latest(fd.get(), root, &latest));
  return latest;
}

bool ReflinkWorks(const std::string& file, const std::string& into) {
  UniqueFd in(::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  std::string probe = JoinPath(into, "reflink-probe");
  UniqueFd out(::open(probe.c_str(),
                      O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
                      0600));
  bool works = in && out && ::ioctl(out.get(), FICLONE, in.get()) == 0;
  ::unlink(probe.c_str());
  return works;
}

absl::StatusOr<TreeSize> MeasureTree(const std::string& root,
                                     uint64_t file_limit, uint64_t byte_limit) {
  UniqueFd fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return LastErrnoStatus(absl::StrCat("open(", root, ")"));
  TreeSize size;
  RETURN_IF_ERROR(Measure(fd.get(), root, file_limit, byte_limit, &size));
  return size;
}

absl::Status CopyTree(const std::string& from, const std::string& to,
                      CopyStats* stats) {
  struct stat st;
  if (::lstat(from.c_str(), &st) != 0) {
    return LastErrnoStatus(absl::StrCat("stat(", from, ")"));
  }
  std::string parent = Dirname(to);
  UniqueFd to_parent(
      ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!to_parent) return LastErrnoStatus(absl::StrCat("open(", parent, ")"));
  std::string base = Basename(to);
  if (!S_ISDIR(st.st_mode)) {
    std::string from_parent_path = Dirname(from);
    UniqueFd from_parent(
        ::open(from_parent_path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!from_parent) {
      return LastErrnoStatus(absl::StrCat("open(", from_parent_path, ")"));
    }
    if (Basename(from) != base) {
      return absl::InvalidArgumentError("CopyTree: a file keeps its name");
    }
    if (S_ISREG(st.st_mode)) {
      return CopyFile(from_parent.get(), to_parent.get(), base, st, from,
                      stats);
    }
    if (S_ISLNK(st.st_mode)) {
      std::string target(static_cast<size_t>(st.st_size) + 1, '\0');
      ssize_t n = ::readlink(from.c_str(), target.data(), target.size());
      if (n < 0) return LastErrnoStatus(absl::StrCat("readlink(", from, ")"));
      target.resize(static_cast<size_t>(n));
      if (::symlink(target.c_str(), to.c_str()) != 0) {
        return LastErrnoStatus(absl::StrCat("symlink(", to, ")"));
      }
      return absl::OkStatus();
    }
    ++stats->skipped_special;
    return absl::OkStatus();
  }
  if (::mkdir(to.c_str(), 0700) != 0) {
    return LastErrnoStatus(absl::StrCat("mkdir(", to, ")"));
  }
  UniqueFd from_fd(::open(from.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  UniqueFd to_fd(::open(to.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!from_fd || !to_fd) {
    return LastErrnoStatus(absl::StrCat("open(", from, " or ", to, ")"));
  }
  RETURN_IF_ERROR(CopyInto(from_fd.get(), to_fd.get(), from, stats));
  ::fchmod(to_fd.get(), st.st_mode & 07777);
  return absl::OkStatus();
}

}  // namespace garuda
