#include "sandbox/mount_plan.h"

#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"
#include "sandbox/defaults.h"

namespace garuda {
namespace {

constexpr char kNewRoot[] = "/newroot";
constexpr char kOldRoot[] = "/oldroot";
constexpr char kDeniedFile[] = "/denied-file";

absl::StatusOr<std::string> RealPath(const std::string& path,
                                     absl::string_view what) {
  char buffer[PATH_MAX];
  if (::realpath(path.c_str(), buffer) == nullptr) {
    return ErrnoStatus(errno, absl::StrCat(what, " ", path));
  }
  return std::string(buffer);
}

bool IsAbsolute(const std::string& path) {
  return !path.empty() && path[0] == '/';
}

// --- Host side ---------------------------------------------------------

absl::Status AddDenied(std::string path, MountPlan* plan) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    // Nothing to hide: absent, or "below" a file (a worktree's .git).
    if (errno == ENOENT || errno == ENOTDIR) return absl::OkStatus();
    return ErrnoStatus(errno, absl::StrCat("denied path ", path));
  }
  // A link anywhere on the way would put the mount somewhere else than the
  // path a person named: refuse rather than guess.
  ASSIGN_OR_RETURN(std::string real, RealPath(path, "denied path"));
  if (real != path) {
    return absl::FailedPreconditionError(
        absl::StrCat("denied path ", path, " goes through a symbolic link (to ",
                     real, "); remove the link or deny ", real, " instead"));
  }
  plan->steps.push_back({S_ISDIR(st.st_mode) ? MountStep::Kind::kDenyDir
                                             : MountStep::Kind::kDenyFile,
                         "", path});
  return absl::OkStatus();
}

// --- Child side --------------------------------------------------------

absl::Status MakeMountPoint(const std::string& target, bool directory) {
  struct stat st;
  if (::lstat(target.c_str(), &st) == 0) return absl::OkStatus();
  RETURN_IF_ERROR(MakeDirectories(directory ? target : Dirname(target), 0755));
  if (!directory) {
    int fd = ::open(target.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0444);
    if (fd < 0) return LastErrnoStatus(absl::StrCat("create ", target));
    ::close(fd);
  }
  return absl::OkStatus();
}

// Binds `source` (a path of the host's tree under /oldroot) at `target`,
// with every mount below it, read-only unless `writable`. Safe: the clone
// lives in our own mount namespace, which propagates nothing to the host,
// and attributes only ever add restrictions (ro, nosuid, nodev).
absl::Status Bind(const std::string& source, const std::string& target,
                  bool writable, bool devices) {
  struct stat st;
  if (::stat(source.c_str(), &st) != 0) {
    return LastErrnoStatus(absl::StrCat("bind source ", source));
  }
  RETURN_IF_ERROR(MakeMountPoint(target, S_ISDIR(st.st_mode)));
  UniqueFd tree(
      ::open_tree(AT_FDCWD, source.c_str(),
                  OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE));
  if (!tree) return LastErrnoStatus(absl::StrCat("open_tree(", source, ")"));
  struct mount_attr attr = {};
  attr.attr_set = MOUNT_ATTR_NOSUID | (devices ? 0 : MOUNT_ATTR_NODEV) |
                  (writable ? 0 : MOUNT_ATTR_RDONLY);
  if (::mount_setattr(tree.get(), "", AT_EMPTY_PATH | AT_RECURSIVE, &attr,
                      sizeof attr) != 0) {
    return LastErrnoStatus(absl::StrCat("mount_setattr(", source, ")"));
  }
  if (::move_mount(tree.get(), "", AT_FDCWD, target.c_str(),
                   MOVE_MOUNT_F_EMPTY_PATH) != 0) {
    return LastErrnoStatus(absl::StrCat("move_mount(", target, ")"));
  }
  return absl::OkStatus();
}

absl::Status MountTmpfs(const std::string& target, unsigned long flags,
                        const char* options) {
  RETURN_IF_ERROR(MakeMountPoint(target, true));
  // Safe: a new tmpfs in our own mount namespace, invisible to the host.
  if (::mount("tmpfs", target.c_str(), "tmpfs", flags | MS_NOSUID | MS_NODEV,
              options) != 0) {
    return LastErrnoStatus(absl::StrCat("mount tmpfs on ", target));
  }
  return absl::OkStatus();
}

absl::Status MountProc(const std::string& target) {
  RETURN_IF_ERROR(MakeMountPoint(target, true));
  // Safe: a proc of our own PID namespace shows only the sandbox's
  // processes.
  if (::mount("proc", target.c_str(), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
              nullptr) != 0) {
    return LastErrnoStatus(absl::StrCat("mount proc on ", target));
  }
  // As bubblewrap does: the kernel knobs under /proc stay read-only.
  for (const char* sub : {"sys", "sysrq-trigger", "irq", "bus"}) {
    std::string path = JoinPath(target, sub);
    if (::access(path.c_str(), F_OK) != 0) continue;
    RETURN_IF_ERROR(Bind(path, path, false, false));
  }
  return absl::OkStatus();
}

absl::Status MountDev(const std::string& target) {
  RETURN_IF_ERROR(MountTmpfs(target, 0, "mode=0755"));
  for (const char* node :
       {"null", "zero", "full", "random", "urandom", "tty"}) {
    std::string host = JoinPath(JoinPath(kOldRoot, "dev"), node);
    if (::access(host.c_str(), F_OK) != 0) continue;
    // Safe: the same device nodes every process may open on the host.
    RETURN_IF_ERROR(Bind(host, JoinPath(target, node), true, true));
  }
  std::string pts = JoinPath(target, "pts");
  RETURN_IF_ERROR(MakeMountPoint(pts, true));
  // Safe: a new devpts instance holds only the sandbox's own terminals.
  if (::mount("devpts", pts.c_str(), "devpts", MS_NOSUID | MS_NOEXEC,
              "newinstance,ptmxmode=0666,mode=620") != 0) {
    return LastErrnoStatus(absl::StrCat("mount devpts on ", pts));
  }
  RETURN_IF_ERROR(MountTmpfs(JoinPath(target, "shm"), 0, "mode=1777"));
  const std::pair<const char*, const char*> links[] = {
      {"pts/ptmx", "ptmx"},
      {"/proc/self/fd", "fd"},
      {"/proc/self/fd/0", "stdin"},
      {"/proc/self/fd/1", "stdout"},
      {"/proc/self/fd/2", "stderr"}};
  for (const auto& [to, name] : links) {
    std::string at = JoinPath(target, name);
    if (::symlink(to, at.c_str()) != 0) {
      return LastErrnoStatus(absl::StrCat("symlink ", at));
    }
  }
  return absl::OkStatus();
}

absl::Status ApplyStep(const MountStep& step) {
  std::string target = absl::StrCat(kNewRoot, step.target);
  switch (step.kind) {
    case MountStep::Kind::kBind:
      return Bind(absl::StrCat(kOldRoot, step.source), target, step.writable,
                  false);
    case MountStep::Kind::kSymlink:
      RETURN_IF_ERROR(MakeDirectories(Dirname(target), 0755));
      if (::symlink(step.source.c_str(), target.c_str()) != 0) {
        return LastErrnoStatus(absl::StrCat("symlink ", step.target));
      }
      return absl::OkStatus();
    case MountStep::Kind::kTmpfs:
      return MountTmpfs(target, 0, "mode=1777");
    case MountStep::Kind::kProc:
      return MountProc(target);
    case MountStep::Kind::kDev:
      return MountDev(target);
    case MountStep::Kind::kDenyDir:
      // mode=000 and no capabilities later: the folder cannot even be
      // listed; read-only: nothing can be created in it.
      return MountTmpfs(target, MS_RDONLY | MS_NOEXEC, "mode=000,size=0");
    case MountStep::Kind::kDenyFile:
      return Bind(kDeniedFile, target, false, false);
  }
  return absl::InternalError("unknown mount step");
}

}  // namespace

absl::StatusOr<MountPlan> BuildMountPlan(const SandboxPolicy& policy) {
  MountPlan plan;
  if (!IsAbsolute(policy.project())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "project \"", policy.project(), "\" must be an absolute path"));
  }
  ASSIGN_OR_RETURN(std::string project, RealPath(policy.project(), "project"));
  if (project == "/") {
    return absl::InvalidArgumentError(
        "project \"/\": the whole file system cannot be a project");
  }

  std::vector<std::string> system_paths(policy.read_only_paths().begin(),
                                        policy.read_only_paths().end());
  if (system_paths.empty()) {
    const SandboxDefaults& defaults = DefaultSandboxSettings();
    system_paths.assign(defaults.read_only_paths().begin(),
                        defaults.read_only_paths().end());
  }
  for (const std::string& path : system_paths) {
    if (!IsAbsolute(path)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "read-only path \"", path, "\" must be an absolute path"));
    }
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) continue;  // not on this host
    if (S_ISLNK(st.st_mode)) {
      char link[PATH_MAX];
      ssize_t n = ::readlink(path.c_str(), link, sizeof link - 1);
      if (n < 0) return LastErrnoStatus(absl::StrCat("readlink ", path));
      plan.steps.push_back(
          {MountStep::Kind::kSymlink, std::string(link, n), path});
    } else {
      plan.steps.push_back({MountStep::Kind::kBind, path, path});
    }
  }
  plan.steps.push_back({MountStep::Kind::kProc, "", "/proc"});
  plan.steps.push_back({MountStep::Kind::kDev, "", "/dev"});
  plan.steps.push_back({MountStep::Kind::kTmpfs, "", "/tmp"});
  plan.writable = {"/tmp", "/dev"};

  plan.steps.push_back(
      {MountStep::Kind::kBind, project, project, policy.project_writable()});
  if (policy.project_writable()) plan.writable.push_back(project);

  for (const std::string& given : policy.writable_paths()) {
    std::string path = IsAbsolute(given) ? given : JoinPath(project, given);
    ASSIGN_OR_RETURN(std::string real, RealPath(path, "writable path"));
    if (real == "/") {
      return absl::InvalidArgumentError(absl::StrCat(
          "writable path \"", given, "\" is the whole file system"));
    }
    plan.steps.push_back({MountStep::Kind::kBind, real, real, true});
    plan.writable.push_back(real);
  }
  for (const BindMount& bind : policy.binds()) {
    if (!IsAbsolute(bind.target()) || bind.target() == "/") {
      return absl::InvalidArgumentError(
          absl::StrCat("bind target \"", bind.target(),
                       "\" must be an absolute path other than /"));
    }
    ASSIGN_OR_RETURN(std::string source,
                     RealPath(bind.source(), "bind source"));
    plan.steps.push_back(
        {MountStep::Kind::kBind, source, bind.target(), bind.writable()});
    if (bind.writable()) plan.writable.push_back(bind.target());
  }
  for (const std::string& given : policy.denied_paths()) {
    std::string path = IsAbsolute(given) ? given : JoinPath(project, given);
    RETURN_IF_ERROR(AddDenied(path, &plan));
  }

  plan.working_directory =
      policy.working_directory().empty() ? project : policy.working_directory();
  return plan;
}

absl::Status ApplyMountPlan(const MountPlan& plan) {
  // Safe: we are in a new mount namespace; making every mount private means
  // nothing we mount or unmount from here on reaches the host's namespace.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return LastErrnoStatus("make / private");
  }
  // The base: a tmpfs holding the new root and, after the first pivot, the
  // host's tree at /oldroot (as bubblewrap does), so that sources anywhere,
  // /tmp included, stay reachable while the new root is built. Safe: the
  // tmpfs and both pivots happen in our private mount namespace; the host's
  // /tmp and root are untouched.
  if (::mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") !=
      0) {
    return LastErrnoStatus("mount the base tmpfs");
  }
  for (const char* dir : {"/tmp/newroot", "/tmp/oldroot"}) {
    if (::mkdir(dir, 0755) != 0) return LastErrnoStatus(dir);
  }
  if (::syscall(SYS_pivot_root, "/tmp", "/tmp/oldroot") != 0) {
    return LastErrnoStatus("pivot_root to the base tmpfs");
  }
  if (::chdir("/") != 0) return LastErrnoStatus("chdir /");
  {
    int fd = ::open(kDeniedFile, O_CREAT | O_WRONLY | O_CLOEXEC, 0);
    if (fd < 0) return LastErrnoStatus(kDeniedFile);
    ::close(fd);
  }
  // Safe: a fresh tmpfs in our namespace; it becomes the root and is
  // remounted read-only below.
  if (::mount("tmpfs", kNewRoot, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") !=
      0) {
    return LastErrnoStatus("mount the new root");
  }
  for (const MountStep& step : plan.steps) {
    absl::Status status = ApplyStep(step);
    if (!status.ok()) {
      return absl::Status(
          status.code(),
          absl::StrCat("sandbox root, ", step.target, ": ", status.message()));
    }
  }
  // Nothing may create files in the new root itself. Safe: it only adds
  // restrictions to our own tmpfs.
  if (::mount(nullptr, kNewRoot, nullptr,
              MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV,
              nullptr) != 0) {
    return LastErrnoStatus("remount the new root read-only");
  }
  // Enter the new root and drop the base with the host's tree: from here on
  // no path leads outside the binds of the plan.
  if (::chdir(kNewRoot) != 0) return LastErrnoStatus("chdir /newroot");
  if (::syscall(SYS_pivot_root, ".", ".") != 0) {
    return LastErrnoStatus("pivot_root to the new root");
  }
  if (::umount2(".", MNT_DETACH) != 0) {
    return LastErrnoStatus("detach the host's tree");
  }
  if (::chdir("/") != 0) return LastErrnoStatus("chdir /");
  return absl::OkStatus();
}

}  // namespace garuda
