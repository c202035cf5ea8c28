#include "lib/staging/mounts.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"
#include "lib/staging/folders.h"

namespace garuda {
namespace {

absl::Status WriteProcFile(const char* path, const std::string& text) {
  ASSIGN_OR_RETURN(UniqueFd fd, OpenFile(path, O_WRONLY));
  return WriteAll(fd.get(), text);
}

absl::StatusOr<UniqueFd> OpenPath(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!fd) return LastErrnoStatus(absl::StrCat("open(", path, ")"));
  return fd;
}

}  // namespace

absl::Status EnterStagingNamespaces() {
  uid_t uid = ::getuid();
  gid_t gid = ::getgid();
  // Safe: a new user namespace gives capabilities only over namespaces it
  // owns; the maps name our own ids, so files keep their owners.
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
    return LastErrnoStatus("unshare(CLONE_NEWUSER | CLONE_NEWNS)");
  }
  RETURN_IF_ERROR(WriteProcFile("/proc/self/setgroups", "deny"));
  RETURN_IF_ERROR(
      WriteProcFile("/proc/self/uid_map", absl::StrCat(uid, " ", uid, " 1")));
  RETURN_IF_ERROR(
      WriteProcFile("/proc/self/gid_map", absl::StrCat(gid, " ", gid, " 1")));
  // Safe: private propagation means nothing mounted from here on is seen
  // by the host's mount namespace.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return LastErrnoStatus("make / private");
  }
  return absl::OkStatus();
}

absl::Status MountOverlay(const std::string& lower, const std::string& upper,
                          const std::string& work, const std::string& target) {
  // The layers by descriptor: a project path holding ',' or ':' would
  // otherwise be read as several options.
  ASSIGN_OR_RETURN(UniqueFd lower_fd, OpenPath(lower));
  ASSIGN_OR_RETURN(UniqueFd upper_fd, OpenPath(upper));
  ASSIGN_OR_RETURN(UniqueFd work_fd, OpenPath(work));
  std::string options = absl::StrCat("lowerdir=/proc/self/fd/", lower_fd.get(),
                                     ",upperdir=/proc/self/fd/", upper_fd.get(),
                                     ",workdir=/proc/self/fd/", work_fd.get(),
                                     ",userxattr,index=off,volatile");
  // `volatile`: no sync of the upper file system at unmount (a sync of the
  // whole file system that holds ~/.garuda, seconds on a busy disk). The
  // view is disposable, and the stager reads the upper layer through the
  // same page cache. Overlay refuses to mount again over a volatile upper
  // layer until its marker folder is gone: we remove it, knowing that the
  // layer may have lost writes only if the machine crashed.
  RETURN_IF_ERROR(RemoveTree(JoinPath(work, "work/incompat")));
  RETURN_IF_ERROR(RemoveTree(JoinPath(work, "incompat")));
  // Safe: in our own mount namespace; the lower layer (the project) is
  // never written by overlayfs, every write goes to `upper`.
  if (::mount("overlay", target.c_str(), "overlay", MS_NOSUID | MS_NODEV,
              options.c_str()) != 0) {
    return LastErrnoStatus(
        absl::StrCat("mount overlay (lower ", lower, ", upper ", upper, ")"));
  }
  return absl::OkStatus();
}

absl::Status BindReadOnlyOverItself(const std::string& path) {
  UniqueFd tree(
      ::open_tree(AT_FDCWD, path.c_str(),
                  OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE));
  if (!tree) return LastErrnoStatus(absl::StrCat("open_tree(", path, ")"));
  struct mount_attr attr = {};
  attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
  // Safe: attributes only add restrictions, in our own mount namespace.
  if (::mount_setattr(tree.get(), "", AT_EMPTY_PATH | AT_RECURSIVE, &attr,
                      sizeof attr) != 0) {
    return LastErrnoStatus(absl::StrCat("mount_setattr(", path, ")"));
  }
  if (::move_mount(tree.get(), "", AT_FDCWD, path.c_str(),
                   MOVE_MOUNT_F_EMPTY_PATH) != 0) {
    return LastErrnoStatus(absl::StrCat("move_mount(", path, ")"));
  }
  return absl::OkStatus();
}

}  // namespace garuda
