#include "lib/staging/tree_copy.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"
#include "lib/changeset/beneath.h"
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
  // Once a clone fails for a reason of the file system, plain copies
  // follow without asking again.
  static bool no_reflink = false;
  if (!no_reflink && ::ioctl(out.get(), FICLONE, in.get()) == 0) {
    ++stats->reflinked;
  } else {
    if (!no_reflink && (errno == EOPNOTSUPP || errno == ENOTTY)) {
      no_reflink = true;
    }
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

// A regular file to copy, found by the folder pass.
struct FileJob {
  std::string relative;  // beneath both roots
  struct stat st;
};

// A folder made by the folder pass; its mode and times are set after its
// files are in it (a new file changes a folder's mtime).
struct FolderJob {
  std::string relative;  // "" is the root
  struct stat st;
};

// The folder pass: makes every folder and link of `from` in `to`, and lists
// the regular files.
absl::Status MakeFolders(int from, int to, const std::string& relative,
                         const std::string& shown, std::vector<FileJob>* files,
                         std::vector<FolderJob>* folders, CopyStats* stats) {
  ASSIGN_OR_RETURN(std::vector<std::string> names, FolderNames(from, shown));
  for (const std::string& name : names) {
    std::string child_relative =
        relative.empty() ? name : absl::StrCat(relative, "/", name);
    std::string child = JoinPath(shown, name);
    struct stat st;
    if (::fstatat(from, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      // Gone since the folder was listed (git gc packing objects, say):
      // the copy shows the tree without it, as a later listing would.
      if (errno == ENOENT) continue;
      return LastErrnoStatus(absl::StrCat("stat(", child, ")"));
    }
    if (S_ISDIR(st.st_mode)) {
      UniqueFd sub_from = OpenFolderAt(from, name.c_str());
      if (!sub_from && errno == ENOENT) continue;  // gone, as above
      if (::mkdirat(to, name.c_str(), 0700) != 0) {
        return LastErrnoStatus(absl::StrCat("mkdir copy of ", child));
      }
      UniqueFd sub_to = OpenFolderAt(to, name.c_str());
      if (!sub_from || !sub_to) {
        return LastErrnoStatus(absl::StrCat("open(", child, ")"));
      }
      RETURN_IF_ERROR(MakeFolders(sub_from.get(), sub_to.get(), child_relative,
                                  child, files, folders, stats));
      folders->push_back({child_relative, st});
    } else if (S_ISREG(st.st_mode)) {
      files->push_back({std::move(child_relative), st});
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

// Copies files[first], files[first + stride], ... beneath the two roots,
// never through a link (the folders were made by the folder pass).
absl::Status CopyFiles(int from_root, int to_root, const std::string& shown,
                       const std::vector<FileJob>& files, size_t first,
                       size_t stride, CopyStats* stats) {
  for (size_t i = first; i < files.size(); i += stride) {
    const FileJob& job = files[i];
    absl::StatusOr<UniqueFd> from = OpenParentBeneath(from_root, job.relative);
    if (absl::IsNotFound(from.status())) continue;  // gone, as above
    RETURN_IF_ERROR(from.status());
    ASSIGN_OR_RETURN(UniqueFd to, OpenParentBeneath(to_root, job.relative));
    absl::Status copied =
        CopyFile(from->get(), to.get(), Basename(job.relative), job.st,
                 JoinPath(shown, job.relative), stats);
    if (absl::IsNotFound(copied)) continue;  // gone, as above
    RETURN_IF_ERROR(copied);
  }
  return absl::OkStatus();
}

// Below this many files one process copies them all.
constexpr size_t kParallelFiles = 1000;
constexpr size_t kWorkers = 4;

// The file pass in kWorkers processes (not threads: the stager unshares its
// user namespace later, which a process that ever had threads may race
// with). Each worker reports "<reflinked> <copied> <special>" or an error
// on its pipe.
absl::Status CopyFilesInWorkers(int from_root, int to_root,
                                const std::string& shown,
                                const std::vector<FileJob>& files,
                                CopyStats* stats) {
  if (files.size() < kParallelFiles) {
    return CopyFiles(from_root, to_root, shown, files, 0, 1, stats);
  }
  struct Worker {
    pid_t pid = -1;
    UniqueFd report;
  };
  std::vector<Worker> workers;
  absl::Status status;
  for (size_t k = 0; k < kWorkers; ++k) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      status = LastErrnoStatus("pipe2 for a copy worker");
      break;
    }
    UniqueFd read_end(fds[0]), write_end(fds[1]);
    pid_t pid = ::fork();
    if (pid < 0) {
      status = LastErrnoStatus("fork a copy worker");
      break;
    }
    if (pid == 0) {
      CopyStats mine;
      absl::Status done =
          CopyFiles(from_root, to_root, shown, files, k, kWorkers, &mine);
      std::string line =
          done.ok() ? absl::StrCat("ok ", mine.reflinked, " ", mine.copied)
                    : absl::StrCat("error ", done.message());
      (void)WriteAll(write_end.get(), line);
      ::_exit(done.ok() ? 0 : 1);
    }
    workers.push_back({pid, std::move(read_end)});
  }
  for (Worker& worker : workers) {
    absl::StatusOr<std::string> report = ReadAll(worker.report.get());
    int wait_status = 0;
    while (::waitpid(worker.pid, &wait_status, 0) < 0 && errno == EINTR) {
    }
    if (!status.ok()) continue;
    uint64_t reflinked = 0, copied = 0;
    if (report.ok() &&
        std::sscanf(report->c_str(), "ok %" SCNu64 " %" SCNu64, &reflinked,
                    &copied) == 2 &&
        WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0) {
      stats->reflinked += reflinked;
      stats->copied += copied;
      continue;
    }
    if (report.ok() && absl::StartsWith(*report, "error ")) {
      status = absl::InternalError(report->substr(6));
    } else {
      status = absl::InternalError(
          absl::StrCat("a copy worker of ", shown, " ended without a report"));
    }
  }
  return status;
}

absl::Status CopyInto(int from, int to, const std::string& shown,
                      CopyStats* stats) {
  std::vector<FileJob> files;
  std::vector<FolderJob> folders;
  RETURN_IF_ERROR(MakeFolders(from, to, "", shown, &files, &folders, stats));
  RETURN_IF_ERROR(CopyFilesInWorkers(from, to, shown, files, stats));
  // Deepest first (the folder pass added children before their parent).
  for (const FolderJob& folder : folders) {
    ASSIGN_OR_RETURN(UniqueFd fd,
                     OpenBeneath(to, folder.relative, O_RDONLY | O_DIRECTORY));
    ::fchmod(fd.get(), folder.st.st_mode & 07777);
    struct timespec times[2] = {folder.st.st_atim, folder.st.st_mtim};
    ::futimens(fd.get(), times);
  }
  return absl::OkStatus();
}

}  // namespace

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
