#include "sandbox/probe.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/unique_fd.h"
#include "lib/rules/sandbox_defaults.h"
#include "sandbox/cgroup.h"
#include "sandbox/sandbox.h"

namespace garuda {
namespace {

constexpr char kOverlayFeature[] = "overlayfs in a user namespace";

std::string ReadSetting(const char* path) {
  auto text = ReadFileToString(path);
  return text.ok() ? std::string(absl::StripAsciiWhitespace(*text)) : "";
}

std::string KernelRelease() {
  struct utsname name;
  return ::uname(&name) == 0 ? name.release : "unknown";
}

bool InContainer() {
  return ::access("/.dockerenv", F_OK) == 0 ||
         ::access("/run/.containerenv", F_OK) == 0;
}

// The steps of the namespace child, as its exit code: the first that
// failed, or kAllPassed.
enum NamespaceStep {
  kAllPassed = 0,
  kMaps = 1,
  kMountTmpfs = 2,
  kMountOverlay = 3,
  kLoadSeccomp = 4,
};

// In a child with new user and mount namespaces: maps, a tmpfs, (when
// asked) an overlay on it, and last a seccomp filter of one instruction
// that allows everything (no_new_privs first, as a sandbox loads its own):
// the quick probe in one process rather than one per check. The message of
// the first failure comes back on the pipe.
struct NamespaceCheck {
  bool cloned = false;
  std::string clone_error;
  int failed_step = kAllPassed;
  std::string message;

  // Whether the child got as far as the seccomp step (else the caller
  // checks seccomp in a child of its own).
  bool seccomp_checked() const {
    return cloned && (failed_step == kAllPassed || failed_step == kLoadSeccomp);
  }
};

NamespaceCheck CheckNamespaces(bool overlay) {
  NamespaceCheck check;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    check.clone_error = "pipe2 failed";
    return check;
  }
  UniqueFd read_end(fds[0]), write_end(fds[1]);
  // Everything the child writes is made here: a child of a raw clone must
  // not allocate (another thread of this process may hold malloc's lock).
  const std::string uid_map = absl::StrCat(::getuid(), " ", ::getuid(), " 1");
  const std::string gid_map = absl::StrCat(::getgid(), " ", ::getgid(), " 1");
  struct sock_filter allow_all[] = {
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog allow_program = {1, allow_all};
  // Safe: as in sandbox.cc, the namespaces are new and owned by the new
  // user namespace; the child only mounts inside them and exits.
  long pid = ::syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWNS | SIGCHLD,
                       nullptr, nullptr, nullptr, nullptr);
  if (pid < 0) {
    check.clone_error = ErrnoStatus(errno, "clone(CLONE_NEWUSER)").ToString();
    return check;
  }
  if (pid == 0) {
    auto say = [&](const char* text) {
      (void)!::write(write_end.get(), text, std::strlen(text));
    };
    auto fail = [&](NamespaceStep step, const char* what,
                    const char* path = nullptr) {
      const char* error = std::strerror(errno);
      say(what);
      if (path != nullptr) {
        say(" ");
        say(path);
      }
      say(": ");
      say(error);
      ::_exit(step);
    };
    auto write_file = [&](const char* path, const std::string& text) {
      int fd = ::open(path, O_WRONLY | O_CLOEXEC);
      if (fd < 0 || ::write(fd, text.data(), text.size()) < 0) {
        fail(kMaps, "write", path);
      }
      ::close(fd);
    };
    write_file("/proc/self/setgroups", "deny");
    write_file("/proc/self/uid_map", uid_map);
    write_file("/proc/self/gid_map", gid_map);
    // Safe: private propagation in our own mount namespace; the tmpfs and
    // the overlay are never seen by the host.
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        ::mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, nullptr) != 0) {
      fail(kMountTmpfs, "mount tmpfs");
    }
    if (overlay) {
      for (const char* dir : {"/tmp/l", "/tmp/u", "/tmp/w", "/tmp/m"}) {
        ::mkdir(dir, 0755);
      }
      if (::mount("overlay", "/tmp/m", "overlay", 0,
                  "lowerdir=/tmp/l,upperdir=/tmp/u,workdir=/tmp/w,"
                  "userxattr") != 0) {
        fail(kMountOverlay, "mount overlay");
      }
    }
    // Safe: the filter allows everything and binds only this child, which
    // exits right after.
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
      fail(kLoadSeccomp, "prctl(PR_SET_NO_NEW_PRIVS)");
    }
    if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &allow_program) != 0) {
      fail(kLoadSeccomp, "prctl(PR_SET_SECCOMP)");
    }
    ::_exit(kAllPassed);
  }
  write_end.Reset();
  check.cloned = true;
  int status = 0;
  ::waitpid(pid, &status, 0);
  auto message = ReadAll(read_end.get());
  if (message.ok()) check.message = *message;
  check.failed_step = WIFEXITED(status) ? WEXITSTATUS(status) : kMountTmpfs;
  return check;
}

int LandlockAbi() {
  long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0,
                       LANDLOCK_CREATE_RULESET_VERSION);
  return abi < 0 ? 0 : static_cast<int>(abi);
}

std::string LandlockReason() {
  std::string lsm = ReadSetting("/sys/kernel/security/lsm");
  if (!lsm.empty() && lsm.find("landlock") == std::string::npos) {
    return absl::StrCat("Landlock is built but not enabled (active LSMs: ", lsm,
                        ")");
  }
  return absl::StrCat("the kernel (", KernelRelease(),
                      ") has no Landlock (5.13 or later with "
                      "CONFIG_SECURITY_LANDLOCK)");
}

constexpr char kSeccompMissing[] =
    "a seccomp filter cannot be loaded (CONFIG_SECCOMP_FILTER off?)";

// Loads a filter that allows everything, in a child, to see that seccomp
// filters can be loaded at all (when the namespace child could not).
bool SeccompLoads(std::string* reason) {
  pid_t pid = ::fork();
  if (pid < 0) {
    *reason = "fork failed";
    return false;
  }
  if (pid == 0) {
    ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    scmp_filter_ctx ctx = ::seccomp_init(SCMP_ACT_ALLOW);
    ::_exit(ctx != nullptr && ::seccomp_load(ctx) == 0 ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return true;
  *reason = kSeccompMissing;
  return false;
}

// The canaries: a real sandbox with a temporary project, a folder beside it
// that must stay unwritable, and a listener on the host's loopback that
// must stay unreachable.
void RunCanaries(ProbeReport* report) {
  ProbeFeature write{"canary: write outside the writable paths is refused"};
  ProbeFeature connect{"canary: connect to the host with network off fails"};
  std::string base = "/tmp/garuda-probe-XXXXXX";
  if (::mkdtemp(base.data()) == nullptr) {
    write.reason = connect.reason = "cannot make a folder in /tmp";
    report->features.push_back(write);
    report->features.push_back(connect);
    return;
  }
  std::string project = JoinPath(base, "project");
  std::string outside = JoinPath(base, "outside");
  ::mkdir(project.c_str(), 0755);
  ::mkdir(outside.c_str(), 0755);
  std::string target = JoinPath(outside, "canary");

  UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  struct sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  bool listening =
      listener &&
      ::bind(listener.get(), reinterpret_cast<sockaddr*>(&address),
             sizeof address) == 0 &&
      ::listen(listener.get(), 1) == 0 &&
      ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&address),
                    &length) == 0;

  SandboxPolicy policy;
  policy.set_project(project);
  policy.set_project_writable(true);
  for (const std::string& path : DefaultSandboxSettings().read_only_paths()) {
    policy.add_read_only_paths(path);
  }
  policy.add_read_only_paths(outside);
  RunOptions options;
  options.capture_output = true;
  // Exit code bits: 1 the write went through, 2 the connect went through.
  options.entry = [&target, address, listening] {
    int code = 0;
    int fd = ::open(target.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    if (fd >= 0) code |= 1;
    int sock = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listening && sock >= 0 &&
        ::connect(sock, reinterpret_cast<const sockaddr*>(&address),
                  sizeof address) == 0) {
      code |= 2;
    }
    return code;
  };
  auto result = RunInSandbox(policy, options);
  bool wrote = ::access(target.c_str(), F_OK) == 0;
  std::error_code ignored;
  std::filesystem::remove_all(base, ignored);

  if (!result.ok() || result->kind != RunResult::Kind::kExited) {
    std::string why = result.ok() ? result->Describe()
                                  : std::string(result.status().message());
    write.reason = connect.reason =
        absl::StrCat("the canary sandbox did not run: ", why);
  } else {
    write.available = !(result->exit_code & 1) && !wrote;
    if (!write.available) {
      write.reason = "a sandboxed process created a file outside the project";
    }
    connect.available = listening && !(result->exit_code & 2);
    if (!listening) {
      connect.reason = "no listener could be opened on 127.0.0.1";
    } else if (!connect.available) {
      connect.reason = "a sandboxed process reached the host's loopback";
    }
  }
  const char* fix =
      "do not use the sandbox on this machine until this is understood; "
      "report it with the output of `garuda-stager probe --json`";
  if (!write.available) write.fix = fix;
  if (!connect.available) connect.fix = fix;
  report->features.push_back(write);
  report->features.push_back(connect);
}

// Whether a command's memory and process limits get cgroups of their own:
// presence is not enough, so a cgroup is made, a waiting child is moved
// into it, and it is removed.
void ProbeCgroups(ProbeReport* report) {
  for (CgroupController controller :
       {CgroupController::kMemory, CgroupController::kPids}) {
    bool is_memory = controller == CgroupController::kMemory;
    ProbeFeature feature{is_memory
                             ? "memory limit in a cgroup (\"out of memory\" "
                               "is reported)"
                             : "process limit in a cgroup (binds root too)"};
    feature.required = false;
    CgroupPlace place = FindCgroupPlace(controller);
    CommandCgroups cgroups = CommandCgroups::Create(is_memory ? 64 << 20 : 0,
                                                    is_memory ? 0 : 8, true);
    int fds[2];
    if (!cgroups.empty() && ::pipe2(fds, O_CLOEXEC) == 0) {
      UniqueFd read_end(fds[0]), write_end(fds[1]);
      // The way a run takes: the child born inside where it can be
      // (CommandCgroups::EnterThread), else moved there.
      absl::StatusOr<bool> entered = cgroups.EnterThread();
      pid_t pid = entered.ok() ? ::fork() : -1;
      if (pid == 0) {
        char byte;
        write_end.Reset();
        (void)!::read(read_end.get(), &byte, 1);
        ::_exit(0);
      }
      bool inside = entered.ok() && *entered && cgroups.LeaveThread().ok();
      if (pid > 0) {
        if (!inside) cgroups.AddProcess(pid);
        write_end.Reset();
        ::waitpid(pid, nullptr, 0);
      } else {
        cgroups = CommandCgroups();
      }
    }
    feature.available = is_memory ? cgroups.memory() : cgroups.pids();
    if (feature.available) {
      feature.detail =
          absl::StrCat("cgroup v", place.version, " below ", place.parent);
    } else {
      feature.reason = cgroups.Note().empty() ? "fork failed" : cgroups.Note();
      feature.fix = place.fix.empty()
                        ? "run Garuda as root, or in a cgroup (v2: delegated "
                          "to it) where it may make cgroups"
                        : place.fix;
    }
    report->features.push_back(feature);
  }
}

std::string JsonString(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += absl::StrCat("\\u00", absl::Hex(c, absl::kZeroPad2));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace

NamespaceSettings ReadNamespaceSettings() {
  NamespaceSettings settings;
  settings.max_user_namespaces =
      ReadSetting("/proc/sys/user/max_user_namespaces");
  settings.apparmor_restrict_userns =
      ReadSetting("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
  settings.unprivileged_userns_clone =
      ReadSetting("/proc/sys/kernel/unprivileged_userns_clone");
  settings.root = ::getuid() == 0;
  settings.in_container = InContainer();
  settings.kernel_release = KernelRelease();
  return settings;
}

void ExplainUserNamespaces(const NamespaceSettings& settings,
                           ProbeFeature* feature) {
  auto add_reason = [feature](const std::string& reason) {
    feature->reason = feature->reason.empty()
                          ? reason
                          : absl::StrCat(feature->reason, "; ", reason);
  };
  if (settings.max_user_namespaces == "0") {
    add_reason("user.max_user_namespaces is 0");
    feature->fix =
        "sysctl -w user.max_user_namespaces=10000 (and set it in "
        "/etc/sysctl.d/ to keep it)";
  } else if (settings.apparmor_restrict_userns == "1") {
    add_reason(
        "AppArmor restricts unprivileged user namespaces (Ubuntu 23.10 and "
        "later, 24.04)");
    feature->fix =
        "add an AppArmor profile that allows userns for garuda-stager, or "
        "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0";
  } else if (!settings.root && settings.unprivileged_userns_clone == "0") {
    add_reason("kernel.unprivileged_userns_clone is 0");
    feature->fix = "sysctl -w kernel.unprivileged_userns_clone=1";
  } else if (settings.in_container) {
    add_reason(
        "this is a container whose seccomp profile (Docker's default) "
        "forbids new namespaces");
    feature->fix =
        "start the container with --security-opt seccomp=unconfined (or a "
        "profile that allows clone/unshare with namespace flags), or run "
        "Garuda outside the container";
  } else {
    feature->fix = absl::StrCat(
        "use a kernel with user namespaces (CONFIG_USER_NS; 5.11 or later "
        "recommended, this is ",
        settings.kernel_release, ")");
  }
}

bool PretendingNoSandbox() {
  const char* pretend = std::getenv(kPretendNoSandboxVariable);
  return pretend != nullptr && std::string(pretend) == "1";
}

bool ProbeReport::SandboxWorks() const { return FirstMissing() == nullptr; }

bool ProbeReport::OverlayWorks() const {
  for (const ProbeFeature& feature : features) {
    if (feature.name == kOverlayFeature) return feature.available;
  }
  return false;
}

const ProbeFeature* ProbeReport::FirstMissing() const {
  for (const ProbeFeature& feature : features) {
    if (feature.required && !feature.available) return &feature;
  }
  return nullptr;
}

std::string ProbeReport::ToText() const {
  std::string text;
  for (const ProbeFeature& feature : features) {
    absl::StrAppend(&text, feature.available ? "ok       " : "MISSING  ",
                    feature.name);
    if (!feature.detail.empty())
      absl::StrAppend(&text, " (", feature.detail, ")");
    if (!feature.required) absl::StrAppend(&text, " [optional]");
    absl::StrAppend(&text, "\n");
    if (!feature.available) {
      absl::StrAppend(&text, "         reason: ", feature.reason, "\n",
                      "         fix: ", feature.fix, "\n");
    }
  }
  absl::StrAppend(&text, SandboxWorks()
                             ? "sandbox: works\n"
                             : "sandbox: does NOT work on this machine\n");
  return text;
}

std::string ProbeReport::ToJson() const {
  std::vector<std::string> items;
  for (const ProbeFeature& f : features) {
    items.push_back(absl::StrCat(
        "{\"name\":", JsonString(f.name),
        ",\"available\":", f.available ? "true" : "false", ",\"required\":",
        f.required ? "true" : "false", ",\"detail\":", JsonString(f.detail),
        ",\"reason\":", JsonString(f.reason), ",\"fix\":", JsonString(f.fix),
        "}"));
  }
  return absl::StrCat("{\"sandbox\":", SandboxWorks() ? "true" : "false",
                      ",\"landlockAbi\":", landlock_abi, ",\"features\":[",
                      absl::StrJoin(items, ","), "]}");
}

ProbeReport ProbeSandbox(const ProbeOptions& options) {
  ProbeReport report;
  ProbeFeature userns{"user namespaces"};
  ProbeFeature mounts{"mounts in a user namespace"};
  ProbeFeature overlay{kOverlayFeature};
  overlay.required = false;

  if (PretendingNoSandbox()) {
    userns.reason = absl::StrCat("pretended by ", kPretendNoSandboxVariable,
                                 "=1 (a test seam)");
    userns.fix = absl::StrCat("unset ", kPretendNoSandboxVariable);
    mounts.reason = overlay.reason = "needs user namespaces";
    mounts.fix = overlay.fix = userns.fix;
    report.features = {userns, mounts, overlay};
    return report;
  }

  NamespaceCheck check = CheckNamespaces(options.overlay);
  userns.available = check.cloned;
  if (!check.cloned) {
    userns.reason = check.clone_error;
    ExplainUserNamespaces(ReadNamespaceSettings(), &userns);
    mounts.reason = overlay.reason = "needs user namespaces";
    mounts.fix = overlay.fix = userns.fix;
  } else if (check.failed_step == kMaps || check.failed_step == kMountTmpfs) {
    mounts.reason = check.message;
    ExplainUserNamespaces(ReadNamespaceSettings(), &mounts);
    overlay.reason = "needs mounts in a user namespace";
    overlay.fix = mounts.fix;
  } else {
    mounts.available = true;
    if (options.overlay) {
      overlay.available = check.failed_step != kMountOverlay;
      if (!overlay.available) {
        overlay.reason =
            absl::StrCat(check.message, " (kernel ", KernelRelease(), ")");
        overlay.fix =
            "use Linux 5.11 or later for overlayfs in a user namespace; "
            "staged commands use the copy backend meanwhile";
      }
    }
  }
  report.features.push_back(userns);
  report.features.push_back(mounts);
  if (options.overlay) report.features.push_back(overlay);

  ProbeFeature landlock{"landlock"};
  report.landlock_abi = LandlockAbi();
  landlock.available = report.landlock_abi >= 1;
  if (landlock.available) {
    landlock.detail = absl::StrCat("ABI ", report.landlock_abi);
  } else {
    landlock.reason = LandlockReason();
    landlock.fix =
        "use Linux 5.13 or later with Landlock enabled (add \"landlock\" to "
        "the lsm= kernel parameter)";
  }
  report.features.push_back(landlock);

  ProbeFeature seccomp{"seccomp"};
  if (check.seccomp_checked()) {
    seccomp.available = check.failed_step == kAllPassed;
    if (!seccomp.available) {
      seccomp.reason = absl::StrCat(kSeccompMissing, ": ", check.message);
    }
  } else {
    seccomp.available = SeccompLoads(&seccomp.reason);
  }
  if (!seccomp.available) {
    seccomp.fix = "use a kernel with CONFIG_SECCOMP_FILTER";
  }
  report.features.push_back(seccomp);

  if (options.canaries && report.SandboxWorks()) RunCanaries(&report);
  if (options.cgroups) ProbeCgroups(&report);
  return report;
}

}  // namespace garuda
