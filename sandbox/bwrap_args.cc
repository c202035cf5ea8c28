#include "sandbox/bwrap_args.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "lib/base/files.h"
#include "lib/rules/sandbox_defaults.h"
#include "sandbox/mount_plan.h"
#include "sandbox/stored_walk.h"

namespace garuda {

std::string FindBwrap() {
  for (const char* path : {"/usr/bin/bwrap", "/usr/local/bin/bwrap"}) {
    if (::access(path, X_OK) == 0) return path;
  }
  return "";
}

std::vector<std::string> BwrapArgsFor(const std::string& bwrap,
                                      const SandboxPolicy& policy,
                                      int seccomp_fd,
                                      const StoredWalk* stored) {
  std::vector<std::string> args = {
      bwrap,        "--unshare-all", "--die-with-parent", "--new-session",
      "--cap-drop", "ALL",           "--clearenv"};
  if (policy.network()) args.push_back("--share-net");
  for (const auto& [name, value] : policy.environment()) {
    args.insert(args.end(), {"--setenv", name, value});
  }
  std::vector<std::string> system(policy.read_only_paths().begin(),
                                  policy.read_only_paths().end());
  if (system.empty()) {
    system.assign(DefaultSandboxSettings().read_only_paths().begin(),
                  DefaultSandboxSettings().read_only_paths().end());
  }
  for (const std::string& path : system) {
    if (!policy.network() && (path == "/run" || path.rfind("/run/", 0) == 0)) {
      continue;  // as BuildMountPlan: no host socket with the network off
    }
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      char link[PATH_MAX];
      ssize_t n = ::readlink(path.c_str(), link, sizeof link - 1);
      if (n > 0)
        args.insert(args.end(), {"--symlink", std::string(link, n), path});
    } else {
      args.insert(args.end(), {"--ro-bind", path, path});
    }
  }
  args.insert(args.end(), {"--proc", "/proc", "--dev", "/dev"});
  if (policy.limits().tmp_bytes() != 0) {
    args.insert(args.end(),
                {"--size", absl::StrCat(policy.limits().tmp_bytes())});
  }
  args.insert(args.end(), {"--tmpfs", "/tmp"});
  if (policy.limits().shm_bytes() != 0) {
    args.insert(args.end(),
                {"--size", absl::StrCat(policy.limits().shm_bytes()), "--tmpfs",
                 "/dev/shm"});
  }
  args.insert(args.end(), {policy.project_writable() ? "--bind" : "--ro-bind",
                           policy.project(), policy.project()});
  auto in_project = [&](const std::string& given) {
    return given[0] == '/' ? given : JoinPath(policy.project(), given);
  };
  if (policy.project_writable()) {
    for (const std::string& given : policy.pinned_paths()) {
      std::string path = in_project(given);
      struct stat st;
      if (::lstat(path.c_str(), &st) != 0) continue;
      args.insert(args.end(),
                  {S_ISDIR(st.st_mode) ? "--bind" : "--ro-bind", path, path});
    }
    for (const std::string& given : policy.read_only_project_paths()) {
      std::string path = in_project(given);
      while (path.size() > 1 && path.back() == '/') path.pop_back();
      if (::access(path.c_str(), F_OK) != 0) continue;
      args.insert(args.end(), {"--ro-bind", path, path});
    }
  }
  // bwrap follows links here, which is the weakness BuildMountPlan closes:
  // callers give it link-free paths.
  for (const std::string& given : policy.writable_paths()) {
    std::string path = in_project(given);
    args.insert(args.end(), {"--bind", path, path});
  }
  // A job's scope, after the writable paths, as BuildMountPlan binds it.
  for (const std::string& given : policy.scope_paths()) {
    std::string path = in_project(given);
    if (::access(path.c_str(), F_OK) != 0) continue;
    args.insert(args.end(), {"--bind", path, path});
  }
  for (const BindMount& bind : policy.binds()) {
    args.insert(args.end(), {bind.writable() ? "--bind" : "--ro-bind",
                             bind.source(), bind.target()});
  }
  static const StoredWalk* const walk_each_call = new StoredWalk("", "");
  absl::StatusOr<std::vector<std::string>> denied = ExpandDeniedPaths(
      policy, policy.project(),
      {nullptr, stored != nullptr ? stored : walk_each_call});
  for (const std::string& path :
       denied.ok() ? *denied : std::vector<std::string>()) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      args.insert(args.end(),
                  {"--perms", "0000", "--tmpfs", path, "--remount-ro", path});
    } else {
      args.insert(args.end(), {"--ro-bind", "/dev/null", path});
    }
  }
  args.insert(args.end(), {"--chdir", policy.working_directory().empty()
                                          ? policy.project()
                                          : policy.working_directory()});
  if (seccomp_fd >= 0) {
    args.insert(args.end(), {"--seccomp", absl::StrCat(seccomp_fd)});
  }
  args.push_back("--");
  return args;
}

}  // namespace garuda
