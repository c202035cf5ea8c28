#include "sandbox/mount_plan.h"

#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"
#include "lib/changeset/beneath.h"
#include "lib/rules/sandbox_defaults.h"
#include "sandbox/private_walk.h"
#include "sandbox/stored_walk.h"

namespace garuda {
namespace {

constexpr char kNewRoot[] = "/newroot";
constexpr char kOldRoot[] = "/oldroot";
constexpr char kDeniedFile[] = "/denied-file";

bool IsAbsolute(const std::string& path) {
  return !path.empty() && path[0] == '/';
}

// --- Host side ---------------------------------------------------------

bool IsPattern(const std::string& path) {
  return path.find_first_of("*?[") != std::string::npos;
}

bool UnderRun(const std::string& path) {
  return path == "/run" || absl::StartsWith(path, "/run/") ||
         path == "/var/run" || absl::StartsWith(path, "/var/run/");
}

// Where a writable or project path is opened from: the project for a
// relative path or one inside the project, else / . The second part is
// relative to the first.
std::pair<std::string, std::string> BaseAndRelative(
    const std::string& given, const std::string& project) {
  std::string path = given;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  if (!IsAbsolute(path)) return {project, path};
  if (absl::StartsWith(path, project + "/")) {
    return {project, path.substr(project.size() + 1)};
  }
  return {"/", path.substr(1)};
}

// Opens `relative` beneath `base` the way the child will (sandbox root's
// kBindBeneath), so that a link on the way is refused here with the path
// named, before anything starts.
absl::StatusOr<struct stat> CheckBeneath(const std::string& base,
                                         const std::string& relative,
                                         absl::string_view what,
                                         const std::string& given) {
  ASSIGN_OR_RETURN(UniqueFd root, OpenRoot(base));
  absl::StatusOr<UniqueFd> opened = OpenBeneath(root.get(), relative, O_PATH);
  if (!opened.ok()) {
    if (absl::IsFailedPrecondition(opened.status())) {
      return absl::FailedPreconditionError(absl::StrCat(
          what, " \"", given, "\": ", opened.status().message(), " (beneath ",
          base, "); ", what,
          "s are opened without following links, so that a link planted in "
          "the project cannot make another folder writable: remove the link, "
          "or name the folder it points to"));
    }
    return absl::Status(
        opened.status().code(),
        absl::StrCat(what, " \"", given, "\": ", opened.status().message()));
  }
  struct stat st;
  if (::fstat(opened->get(), &st) != 0) {
    return LastErrnoStatus(absl::StrCat(what, " ", given));
  }
  return st;
}

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

// A job's write scope (T6): each entry that exists bound writable beneath
// the project, opened without following a link, as a writable path is.
absl::Status AddScopeBinds(const SandboxPolicy& policy,
                           const std::string& project, MountPlan* plan) {
  for (const std::string& entry : policy.scope_paths()) {
    if (entry.empty() || IsAbsolute(entry)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "scope path \"", entry, "\" must be relative to the project"));
    }
    absl::StatusOr<struct stat> st =
        CheckBeneath(project, entry, "scope path", entry);
    if (absl::IsNotFound(st.status())) continue;
    if (!st.ok()) return st.status();
    plan->steps.push_back({MountStep::Kind::kBindBeneath, project, entry, true});
    plan->writable.push_back(JoinPath(project, entry));
  }
  return absl::OkStatus();
}

// `path` is `folder` or lies beneath it.
bool AtOrUnder(absl::string_view path, const std::string& folder) {
  return path == folder || absl::StartsWith(path, folder + "/");
}

const StoredWalk& StoredOf(const PrivateWalkSource& walk) {
  return walk.stored != nullptr ? *walk.stored : StoredWalk::ForThisMachine();
}

// True when a bind of `plan` (the system paths, the project, writable paths
// and binds) makes `path` visible in the sandbox.
bool ABindShows(const MountPlan& plan, const std::string& path) {
  for (const MountStep& step : plan.steps) {
    std::string target;
    if (step.kind == MountStep::Kind::kBind) {
      target = step.target;
    } else if (step.kind == MountStep::Kind::kBindBeneath) {
      target = JoinPath(step.source, step.target);
    } else {
      continue;
    }
    if (target == "/" || AtOrUnder(path, target)) return true;
  }
  return false;
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

// Binds `relative` beneath `base` (both as the host has them, under
// /oldroot) at the same place in the new root. Both ends are opened beneath
// their roots without following links (lib/changeset/beneath.h), and the
// clone is made from the descriptor opened, so that a link swapped in after
// the host's check (by a process an earlier command left running) can
// neither change what is bound nor where. Safe for the same reasons as
// Bind.
absl::Status BindBeneath(const std::string& base, const std::string& relative,
                         bool writable) {
  ASSIGN_OR_RETURN(UniqueFd old_root, OpenRoot(kOldRoot));
  std::string base_relative = base == "/" ? "" : base.substr(1);
  ASSIGN_OR_RETURN(UniqueFd base_fd, OpenBeneath(old_root.get(), base_relative,
                                                 O_PATH | O_DIRECTORY));
  ASSIGN_OR_RETURN(UniqueFd source,
                   OpenBeneath(base_fd.get(), relative, O_PATH));
  struct stat st;
  if (::fstat(source.get(), &st) != 0) return LastErrnoStatus("fstat");
  std::string full = base == "/" ? "/" + relative : JoinPath(base, relative);
  RETURN_IF_ERROR(
      MakeMountPoint(absl::StrCat(kNewRoot, full), S_ISDIR(st.st_mode)));
  ASSIGN_OR_RETURN(UniqueFd new_root, OpenRoot(kNewRoot));
  ASSIGN_OR_RETURN(UniqueFd target,
                   OpenBeneath(new_root.get(), full.substr(1), O_PATH));
  UniqueFd tree(::open_tree(
      source.get(), "",
      OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH));
  if (!tree) return LastErrnoStatus(absl::StrCat("open_tree(", full, ")"));
  struct mount_attr attr = {};
  attr.attr_set =
      MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (writable ? 0 : MOUNT_ATTR_RDONLY);
  if (::mount_setattr(tree.get(), "", AT_EMPTY_PATH | AT_RECURSIVE, &attr,
                      sizeof attr) != 0) {
    return LastErrnoStatus(absl::StrCat("mount_setattr(", full, ")"));
  }
  if (::move_mount(tree.get(), "", target.get(), "",
                   MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0) {
    return LastErrnoStatus(absl::StrCat("move_mount(", full, ")"));
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

// "mode=1777" and, when sized, ",size=<bytes>".
std::string TmpfsOptions(uint64_t size_bytes) {
  return size_bytes == 0 ? "mode=1777"
                         : absl::StrCat("mode=1777,size=", size_bytes);
}

absl::Status MountDev(const std::string& target, uint64_t shm_bytes) {
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
  RETURN_IF_ERROR(
      MountTmpfs(JoinPath(target, "shm"), 0, TmpfsOptions(shm_bytes).c_str()));
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
    case MountStep::Kind::kBindBeneath:
      return BindBeneath(step.source, step.target, step.writable);
    case MountStep::Kind::kSymlink:
      RETURN_IF_ERROR(MakeDirectories(Dirname(target), 0755));
      if (::symlink(step.source.c_str(), target.c_str()) != 0) {
        return LastErrnoStatus(absl::StrCat("symlink ", step.target));
      }
      return absl::OkStatus();
    case MountStep::Kind::kTmpfs:
      return MountTmpfs(target, 0, TmpfsOptions(step.size_bytes).c_str());
    case MountStep::Kind::kProc:
      return MountProc(target);
    case MountStep::Kind::kDev:
      return MountDev(target, step.size_bytes);
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

absl::StatusOr<std::vector<std::string>> ExpandDeniedPaths(
    const SandboxPolicy& policy, const std::string& project,
    PrivateWalkSource walk) {
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
  for (const std::string& folder : policy.deny_private_under()) {
    if (!IsAbsolute(folder)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "denyPrivateUnder \"", folder, "\" must be an absolute path"));
    }
    if (walk.kept != nullptr) {
      walk.kept->Find(folder, &denied);
    } else {
      StoredOf(walk).Find(folder, &denied);
    }
  }
  // A path inside one denied already adds nothing, and would need a mount
  // point inside a folder nobody may open.
  std::sort(denied.begin(), denied.end());
  denied.erase(std::unique(denied.begin(), denied.end()), denied.end());
  std::vector<std::string> kept;
  for (const std::string& path : denied) {
    if (!kept.empty() && absl::StartsWith(path, kept.back() + "/")) continue;
    kept.push_back(path);
  }
  return kept;
}

absl::StatusOr<MountPlan> BuildMountPlan(const SandboxPolicy& policy,
                                         PrivateWalkSource walk) {
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
    // Host sockets live under /run (the DNS resolver's, D-Bus, the
    // container runtime's): with the network off none is bound, whatever
    // the list says, so that none can carry data out.
    if (!policy.network() && UnderRun(path)) continue;
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
  MountStep dev{MountStep::Kind::kDev, "", "/dev"};
  dev.size_bytes = policy.limits().shm_bytes();
  plan.steps.push_back(dev);
  MountStep tmp{MountStep::Kind::kTmpfs, "", "/tmp"};
  tmp.size_bytes = policy.limits().tmp_bytes();
  plan.steps.push_back(tmp);
  plan.writable = {"/tmp", "/dev"};

  plan.steps.push_back(
      {MountStep::Kind::kBind, project, project, policy.project_writable()});
  if (policy.project_writable()) {
    plan.writable.push_back(project);
    // .git bound on itself (a mount point cannot be renamed, removed or
    // replaced, so what is mounted in it stays), then its config and the
    // like read-only in it. A .git that is a file (a worktree's pointer to
    // its repository) is kept read-only.
    for (const std::string& given : policy.pinned_paths()) {
      auto [base, relative] = BaseAndRelative(given, project);
      if (base != project) {
        return absl::InvalidArgumentError(absl::StrCat(
            "pinned path \"", given, "\" must be inside the project"));
      }
      absl::StatusOr<struct stat> st =
          CheckBeneath(base, relative, "pinned path", given);
      if (absl::IsNotFound(st.status())) continue;
      if (!st.ok()) return st.status();
      plan.steps.push_back({MountStep::Kind::kBindBeneath, base, relative,
                            S_ISDIR(st->st_mode)});
    }
    for (const std::string& given : policy.read_only_project_paths()) {
      auto [base, relative] = BaseAndRelative(given, project);
      if (base != project) {
        return absl::InvalidArgumentError(
            absl::StrCat("read-only project path \"", given,
                         "\" must be inside the project"));
      }
      absl::StatusOr<struct stat> st =
          CheckBeneath(base, relative, "read-only project path", given);
      if (absl::IsNotFound(st.status())) continue;
      if (!st.ok()) return st.status();
      plan.steps.push_back(
          {MountStep::Kind::kBindBeneath, base, relative, false});
    }
  }

  for (const std::string& given : policy.writable_paths()) {
    auto [base, relative] = BaseAndRelative(given, project);
    if (base == "/" && relative.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "writable path \"", given, "\" is the whole file system"));
    }
    RETURN_IF_ERROR(
        CheckBeneath(base, relative, "writable path", given).status());
    plan.steps.push_back({MountStep::Kind::kBindBeneath, base, relative, true});
    plan.writable.push_back(
        relative.empty()
            ? base
            : (base == "/" ? "/" + relative : JoinPath(base, relative)));
  }
  RETURN_IF_ERROR(AddScopeBinds(policy, project, &plan));
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
  ASSIGN_OR_RETURN(std::vector<std::string> denied,
                   ExpandDeniedPaths(policy, project, walk));
  for (const std::string& path : denied) {
    RETURN_IF_ERROR(AddDenied(path, &plan));
  }
  const std::string& place = StoredOf(walk).place();
  if (!place.empty() && ABindShows(plan, place) &&
      std::none_of(denied.begin(), denied.end(),
                   [&](const std::string& d) { return AtOrUnder(place, d); })) {
    // A place reached through a link is not where answers are kept (it is
    // opened without following links): nothing of ours to hide there.
    absl::Status hidden = AddDenied(place, &plan);
    if (!hidden.ok() && !absl::IsFailedPrecondition(hidden)) return hidden;
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
