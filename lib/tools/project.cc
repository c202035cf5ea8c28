#include "lib/tools/project.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/home.h"
#include "lib/base/status_macros.h"
#include "lib/permissions/rules.h"

namespace garuda {

absl::StatusOr<std::unique_ptr<Project>> Project::Open(
    const std::string& root) {
  ASSIGN_OR_RETURN(std::string resolved, RealProjectRoot(root));
  std::unique_ptr<Project> project(new Project());
  project->root_ = resolved;
  if (absl::StartsWith(root, "/")) {
    project->given_root_ = std::string(absl::StripSuffix(root, "/"));
  }
  ASSIGN_OR_RETURN(project->root_fd_,
                   OpenFile(project->root_, O_RDONLY | O_DIRECTORY));
  ASSIGN_OR_RETURN(project->ignore_, IgnoreRules::ForProject(project->root_));
  return project;
}

absl::StatusOr<std::string> Project::Relative(absl::string_view path) const {
  absl::string_view rest = path;
  if (absl::StartsWith(rest, "/")) {
    if (rest == root_ || (!given_root_.empty() && rest == given_root_)) {
      return std::string();
    }
    if (!absl::ConsumePrefix(&rest, absl::StrCat(root_, "/")) &&
        (given_root_.empty() ||
         !absl::ConsumePrefix(&rest, absl::StrCat(given_root_, "/")))) {
      return absl::PermissionDeniedError(
          absl::StrCat("\"", path, "\" is outside the project (", root_,
                       "); use a path relative to the project root"));
    }
  }
  absl::StatusOr<std::string> relative = NormalizeRelativePath(rest);
  if (!relative.ok()) {
    return absl::PermissionDeniedError(absl::StrCat(
        "\"", path,
        "\" is outside the project: ", relative.status().message()));
  }
  return relative;
}

absl::StatusOr<OpenedPath> Project::OpenForRead(absl::string_view path) const {
  ASSIGN_OR_RETURN(std::string relative, Relative(path));
  struct open_how how = {};
  how.flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
  // Links are followed, but the kernel refuses any step (a "..", an
  // absolute link, a link whose target climbs out) that leaves the root.
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  std::string target = relative.empty() ? "." : relative;
  long fd;
  do {
    fd = ::syscall(SYS_openat2, root_fd_.get(), target.c_str(), &how,
                   sizeof(how));
  } while (fd < 0 && (errno == EINTR || errno == EAGAIN));
  if (fd < 0) {
    int error = errno;
    if (error == EXDEV || error == ELOOP) {
      return absl::PermissionDeniedError(absl::StrCat(
          "\"", path,
          "\" leads out of the project through a symbolic link; only files "
          "inside the project can be read"));
    }
    if (error == ENOENT || error == ENOTDIR) {
      return absl::NotFoundError(
          absl::StrCat("\"", path, "\" does not exist in the project"));
    }
    return ErrnoStatus(error, absl::StrCat("open \"", path, "\""));
  }
  OpenedPath opened;
  opened.fd = UniqueFd(static_cast<int>(fd));
  struct stat st;
  if (::fstat(opened.fd.get(), &st) != 0) {
    return LastErrnoStatus(absl::StrCat("stat \"", path, "\""));
  }
  opened.is_folder = S_ISDIR(st.st_mode);
  // Where the kernel arrived, so a link inside the project is matched by the
  // rules of its target.
  opened.relative = relative;
  char real[PATH_MAX];
  std::string proc = absl::StrCat("/proc/self/fd/", opened.fd.get());
  ssize_t n = ::readlink(proc.c_str(), real, sizeof(real) - 1);
  if (n > 0) {
    absl::string_view arrived(real, static_cast<size_t>(n));
    if (arrived == root_) {
      opened.relative.clear();
    } else if (absl::ConsumePrefix(&arrived, absl::StrCat(root_, "/"))) {
      opened.relative = std::string(arrived);
    }
  }
  return opened;
}

namespace {

struct DirCloser {
  void operator()(DIR* dir) const { ::closedir(dir); }
};

}  // namespace

absl::StatusOr<bool> Project::Walk(
    const OpenedPath& start, size_t limit,
    const std::function<void(const std::string&, int, const std::string&,
                             bool)>& visit) {
  size_t seen = 0;
  std::function<absl::StatusOr<bool>(int, const std::string&)> walk =
      [&](int dir_fd, const std::string& prefix) -> absl::StatusOr<bool> {
    int copy = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (copy < 0) return LastErrnoStatus(absl::StrCat("open ", prefix));
    std::unique_ptr<DIR, DirCloser> dir(::fdopendir(copy));
    if (!dir) {
      ::close(copy);
      return LastErrnoStatus(absl::StrCat("opendir ", prefix));
    }
    std::vector<std::string> names;
    while (struct dirent* entry = ::readdir(dir.get())) {
      std::string name = entry->d_name;
      if (name == "." || name == ".." || name == ".git") continue;
      names.push_back(std::move(name));
    }
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) {
      std::string relative =
          prefix.empty() ? name : absl::StrCat(prefix, "/", name);
      struct stat st;
      if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        continue;  // gone since readdir
      }
      bool folder = S_ISDIR(st.st_mode);
      ASSIGN_OR_RETURN(bool ignored, ignore_->IsIgnored(relative, folder));
      if (ignored) continue;
      if (folder) {
        int child = ::openat(dir_fd, name.c_str(),
                             O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (child < 0) continue;
        UniqueFd child_fd(child);
        ASSIGN_OR_RETURN(bool whole, walk(child_fd.get(), relative));
        if (!whole) return false;
        continue;
      }
      if (++seen > limit) return false;
      visit(relative, dir_fd, name, S_ISREG(st.st_mode));
    }
    return true;
  };
  return walk(start.fd.get(), start.relative);
}

}  // namespace garuda
