#include "sandbox/cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"

namespace garuda {
namespace {

constexpr char kV2Fix[] =
    "start Garuda in a delegated cgroup v2 subtree with the controller "
    "enabled for its children (e.g. systemd-run --user --scope -p "
    "Delegate=yes -p DelegateSubgroup=garuda ..., systemd 254 or later), or "
    "run it as root on a host whose cgroup tree it may change";

struct MountEntry {
  std::string root;
  std::string mount_point;
  std::string fs_type;
  std::vector<std::string> mount_options;
  std::vector<std::string> super_options;
};

std::vector<MountEntry> CgroupMounts(const std::string& mountinfo) {
  std::vector<MountEntry> mounts;
  for (absl::string_view line : absl::StrSplit(mountinfo, '\n')) {
    // ID PARENT MAJ:MIN ROOT MOUNT-POINT OPTIONS [OPTIONAL...] - TYPE SOURCE
    // SUPER-OPTIONS
    std::vector<std::string> fields = absl::StrSplit(line, ' ');
    size_t dash = 0;
    while (dash < fields.size() && fields[dash] != "-") ++dash;
    if (dash < 6 || dash + 3 >= fields.size()) continue;
    const std::string& type = fields[dash + 1];
    if (type != "cgroup" && type != "cgroup2") continue;
    mounts.push_back({fields[3], fields[4], type,
                      absl::StrSplit(fields[5], ','),
                      absl::StrSplit(fields[dash + 3], ',')});
  }
  return mounts;
}

bool Contains(const std::vector<std::string>& items, absl::string_view item) {
  for (const std::string& each : items) {
    if (each == item) return true;
  }
  return false;
}

// Our cgroup's path in the cgroup v1 hierarchy of `controller`, or with
// `controller` empty, in cgroup v2 (the "0::" line of /proc/self/cgroup).
std::optional<std::string> OwnCgroupPath(const std::string& proc_cgroup,
                                         absl::string_view controller) {
  for (absl::string_view line : absl::StrSplit(proc_cgroup, '\n')) {
    std::vector<std::string> parts =
        absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (parts.size() != 3) continue;
    bool match = controller.empty()
                     ? parts[0] == "0" && parts[1].empty()
                     : Contains(absl::StrSplit(parts[1], ','), controller);
    if (match) return parts[2];
  }
  return std::nullopt;
}

// The folder of cgroup `path` under a mount whose root is `root`.
std::string FolderOf(const MountEntry& mount, const std::string& path) {
  absl::string_view relative = path;
  if (mount.root != "/" && absl::StartsWith(relative, mount.root)) {
    relative.remove_prefix(mount.root.size());
  }
  relative = absl::StripPrefix(relative, "/");
  return relative.empty() ? mount.mount_point
                          : JoinPath(mount.mount_point, relative);
}

absl::Status WriteCgroupFile(const std::string& folder, const char* name,
                             const std::string& text) {
  std::string path = JoinPath(folder, name);
  UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (!fd) return LastErrnoStatus(path);
  if (::write(fd.get(), text.data(), text.size()) !=
      static_cast<ssize_t>(text.size())) {
    return LastErrnoStatus(absl::StrCat("write \"", text, "\" to ", path));
  }
  return absl::OkStatus();
}

// Whether a cgroup v2 list file (cgroup.controllers, cgroup.subtree_control)
// names `controller`.
bool ListsController(const std::string& folder, const char* file,
                     const std::string& controller) {
  auto text = ReadFileToString(JoinPath(folder, file));
  return text.ok() &&
         Contains(absl::StrSplit(absl::StripAsciiWhitespace(*text), ' '),
                  controller);
}

bool FileExists(const std::string& path) {
  return ::access(path.c_str(), F_OK) == 0;
}

// The number after `key` in a "key value" per line file (memory.events,
// memory.oom_control, pids.events); 0 when absent.
uint64_t ReadCounter(const std::string& path, absl::string_view key) {
  auto text = ReadFileToString(path);
  if (!text.ok()) return 0;
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    std::pair<absl::string_view, absl::string_view> pair =
        absl::StrSplit(line, absl::MaxSplits(' ', 1));
    uint64_t value = 0;
    if (pair.first == key && absl::SimpleAtoi(pair.second, &value)) {
      return value;
    }
  }
  return 0;
}

void SleepMs(int ms) {
  struct timespec pause = {0, ms * 1000000L};
  ::nanosleep(&pause, nullptr);
}

std::atomic<uint64_t> next_cgroup{0};

// Once per process and controller: leftovers are rare.
std::atomic<bool> leftovers_removed[2];

}  // namespace

void RemoveLeftoverCgroups(const std::string& parent) {
  DIR* dir = ::opendir(parent.c_str());
  if (dir == nullptr) return;
  while (struct dirent* entry = ::readdir(dir)) {
    absl::string_view name = entry->d_name;
    if (!absl::ConsumePrefix(&name, "garuda-")) continue;
    int pid = 0;
    if (!absl::SimpleAtoi(name.substr(0, name.find('-')), &pid) || pid <= 0 ||
        pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) {
      continue;
    }
    ::rmdir(JoinPath(parent, entry->d_name).c_str());
  }
  ::closedir(dir);
}

const char* CgroupControllerName(CgroupController controller) {
  return controller == CgroupController::kMemory ? "memory" : "pids";
}

CgroupPlace FindCgroupPlace(CgroupController controller) {
  auto mountinfo = ReadFileToString("/proc/self/mountinfo");
  auto proc_cgroup = ReadFileToString("/proc/self/cgroup");
  return FindCgroupPlaceIn(controller, mountinfo.value_or(""),
                           proc_cgroup.value_or(""));
}

CgroupPlace FindCgroupPlaceIn(CgroupController controller,
                              const std::string& mountinfo,
                              const std::string& proc_cgroup) {
  CgroupPlace place;
  const std::string name = CgroupControllerName(controller);
  std::vector<MountEntry> mounts = CgroupMounts(mountinfo);
  const MountEntry* mount = nullptr;
  for (const MountEntry& entry : mounts) {
    if (entry.fs_type == "cgroup" && Contains(entry.super_options, name)) {
      mount = &entry;
      place.version = 1;
      break;
    }
  }
  std::optional<std::string> own;
  if (mount != nullptr) {
    own = OwnCgroupPath(proc_cgroup, name);
  } else {
    for (const MountEntry& entry : mounts) {
      if (entry.fs_type == "cgroup2") {
        mount = &entry;
        place.version = 2;
        break;
      }
    }
    if (mount != nullptr) own = OwnCgroupPath(proc_cgroup, "");
  }
  if (mount == nullptr) {
    place.reason = absl::StrCat("no cgroup hierarchy with the ", name,
                                " controller is mounted");
    place.fix = absl::StrCat(
        "mount cgroup v2 at /sys/fs/cgroup (the default of systemd hosts) "
        "with the ",
        name, " controller; in a container, start it with a cgroup of its own");
    return place;
  }
  if (!own) {
    place.reason = absl::StrCat("/proc/self/cgroup names no ", name,
                                " cgroup for this process");
    place.fix = "run Garuda where /proc is the host's or the container's own";
    return place;
  }
  place.parent = FolderOf(*mount, *own);
  if (Contains(mount->mount_options, "ro")) {
    place.reason = absl::StrCat(mount->mount_point,
                                " is mounted read-only (a container's usual "
                                "cgroup mount)");
    place.fix =
        "give the container a writable cgroup of its own (cgroup v2 with "
        "--cgroupns=private and a delegated subtree), or run Garuda on the "
        "host";
    return place;
  }
  if (!FileExists(place.parent)) {
    place.reason = absl::StrCat("our cgroup ", *own, " is not visible under ",
                                mount->mount_point);
    place.fix = "mount the cgroup hierarchy of this process's own namespace";
    return place;
  }
  if (place.version == 2) {
    if (!ListsController(place.parent, "cgroup.controllers", name)) {
      place.reason = absl::StrCat("the ", name,
                                  " controller is not available in our cgroup "
                                  "v2 folder ",
                                  place.parent);
      place.fix = kV2Fix;
      return place;
    }
  }
  if (::access(place.parent.c_str(), W_OK) != 0) {
    place.reason = absl::StrCat("cannot create a cgroup in ", place.parent,
                                ": ", std::strerror(errno));
    place.fix = place.version == 2
                    ? kV2Fix
                    : absl::StrCat(
                          "run Garuda as root, or have the "
                          "administrator give this user a cgroup "
                          "of its own under ",
                          mount->mount_point);
    return place;
  }
  place.available = true;
  return place;
}

CommandCgroups::CommandCgroups(CommandCgroups&& other) noexcept
    : memory_(std::move(other.memory_)),
      pids_(std::move(other.pids_)),
      notes_(std::move(other.notes_)) {
  other.memory_.reset();
  other.pids_.reset();
}

CommandCgroups& CommandCgroups::operator=(CommandCgroups&& other) noexcept {
  if (this != &other) {
    Remove(memory_);
    Remove(pids_);
    memory_ = std::move(other.memory_);
    pids_ = std::move(other.pids_);
    notes_ = std::move(other.notes_);
    other.memory_.reset();
    other.pids_.reset();
  }
  return *this;
}

CommandCgroups::~CommandCgroups() {
  Remove(memory_);
  Remove(pids_);
}

CommandCgroups CommandCgroups::Create(uint64_t memory_bytes, uint64_t processes,
                                      bool allowed) {
  CommandCgroups cgroups;
  const char* fallback[] = {
      "the memory limit is an address-space rlimit (allocations fail; "
      "\"out of memory\" is never reported)",
      "the process limit is RLIMIT_NPROC (which does not bind root)"};
  for (CgroupController controller :
       {CgroupController::kMemory, CgroupController::kPids}) {
    bool is_memory = controller == CgroupController::kMemory;
    uint64_t limit = is_memory ? memory_bytes : processes;
    if (limit == 0) continue;
    const char* instead = fallback[is_memory ? 0 : 1];
    if (!allowed) {
      cgroups.notes_.push_back(
          absl::StrCat(instead, ": cgroups are off for this run"));
      continue;
    }
    CgroupPlace place = FindCgroupPlace(controller);
    if (!place.available) {
      cgroups.notes_.push_back(absl::StrCat(instead, ": ", place.reason));
      continue;
    }
    std::string name = CgroupControllerName(controller);
    std::optional<Group>& group = is_memory ? cgroups.memory_ : cgroups.pids_;
    absl::Status status;
    if (place.version == 2) {
      // Our own (delegated) cgroup hands the controller to its children.
      // Safe: enabling a controller for children only lets limits be set
      // on them. Fails (EBUSY) when our cgroup has processes and is not the
      // root: the kernel's rule that processes live only in leaves.
      if (!ListsController(place.parent, "cgroup.subtree_control", name)) {
        status = WriteCgroupFile(place.parent, "cgroup.subtree_control",
                                 absl::StrCat("+", name));
      }
    }
    if (!leftovers_removed[is_memory ? 0 : 1].exchange(true)) {
      RemoveLeftoverCgroups(place.parent);
    }
    std::string path = JoinPath(
        place.parent,
        absl::StrCat("garuda-", ::getpid(), "-", next_cgroup.fetch_add(1)));
    // Safe: a new cgroup below our own only restricts what is moved into
    // it (the command's processes); nothing else changes.
    if (status.ok() && ::mkdir(path.c_str(), 0755) != 0) {
      status = LastErrnoStatus(absl::StrCat("mkdir ", path));
    }
    if (status.ok()) {
      group = Group{path, place.version, place.parent};
      std::string value = absl::StrCat(limit);
      if (!is_memory) {
        status = WriteCgroupFile(path, "pids.max", absl::StrCat(limit + 1));
      } else if (place.version == 1) {
        status = WriteCgroupFile(path, "memory.limit_in_bytes", value);
        // No swap either: the limit is on memory plus swap.
        if (status.ok() &&
            FileExists(JoinPath(path, "memory.memsw.limit_in_bytes"))) {
          status = WriteCgroupFile(path, "memory.memsw.limit_in_bytes", value);
        }
      } else {
        status = WriteCgroupFile(path, "memory.max", value);
        if (status.ok() && FileExists(JoinPath(path, "memory.swap.max"))) {
          status = WriteCgroupFile(path, "memory.swap.max", "0");
        }
      }
    }
    if (!status.ok()) {
      cgroups.Remove(group);
      cgroups.notes_.push_back(absl::StrCat(instead, ": cgroup v",
                                            place.version, " ", name, ": ",
                                            status.message()));
    }
  }
  return cgroups;
}

void CommandCgroups::AddProcess(pid_t pid) {
  for (std::optional<Group>* group : {&memory_, &pids_}) {
    if (!*group) continue;
    // Safe: `pid` is our own child, not yet running the command; the
    // cgroup only limits it.
    absl::Status status =
        WriteCgroupFile((*group)->path, "cgroup.procs", absl::StrCat(pid));
    if (!status.ok()) {
      bool is_memory = group == &memory_;
      notes_.push_back(
          absl::StrCat(is_memory ? "the memory limit is an address-space rlimit"
                                 : "the process limit is RLIMIT_NPROC",
                       ": ", status.message()));
      Remove(*group);
    }
  }
}

absl::StatusOr<bool> CommandCgroups::EnterThread() {
  std::vector<Group*> groups;
  for (std::optional<Group>* group : {&memory_, &pids_}) {
    if (!*group) continue;
    if ((*group)->version != 1) return false;
    // The way back must be open before the way in is taken.
    if (!(*group)->way_back) {
      (*group)->way_back = UniqueFd(::open(
          JoinPath((*group)->parent, "tasks").c_str(), O_WRONLY | O_CLOEXEC));
      if (!(*group)->way_back) return false;
    }
    groups.push_back(&**group);
  }
  for (Group* group : groups) {
    // Safe: only this thread moves, into a cgroup that only limits it; it
    // leaves again (LeaveThread) before the command may start.
    if (!WriteCgroupFile(group->path, "tasks", "0").ok()) {
      RETURN_IF_ERROR(LeaveThread());
      return false;
    }
    group->entered = true;
  }
  return !groups.empty();
}

absl::Status CommandCgroups::LeaveThread() {
  absl::Status result;
  for (std::optional<Group>* group : {&memory_, &pids_}) {
    if (!*group || !(*group)->entered) continue;
    if (::write((*group)->way_back.get(), "0", 1) == 1) {
      (*group)->entered = false;
    } else if (result.ok()) {
      result = absl::FailedPreconditionError(absl::StrCat(
          "cannot move the supervisor back out of the command's cgroup ",
          (*group)->path, ": write \"0\" to ", (*group)->parent,
          "/tasks: ", std::strerror(errno)));
    }
  }
  return result;
}

std::vector<int> CommandCgroups::WaysBack() const {
  std::vector<int> ways;
  for (const std::optional<Group>* group : {&memory_, &pids_}) {
    if (*group && (*group)->way_back) ways.push_back((*group)->way_back.get());
  }
  return ways;
}

uint64_t CommandCgroups::OomKills() const {
  if (!memory_) return 0;
  return memory_->version == 1
             ? ReadCounter(JoinPath(memory_->path, "memory.oom_control"),
                           "oom_kill")
             : ReadCounter(JoinPath(memory_->path, "memory.events"),
                           "oom_kill");
}

uint64_t CommandCgroups::ForkRefusals() const {
  if (!pids_) return 0;
  return ReadCounter(JoinPath(pids_->path, "pids.events"), "max");
}

std::string CommandCgroups::Note() const { return absl::StrJoin(notes_, "; "); }

std::vector<std::string> CommandCgroups::Paths() const {
  std::vector<std::string> paths;
  if (memory_) paths.push_back(memory_->path);
  if (pids_) paths.push_back(pids_->path);
  return paths;
}

void CommandCgroups::Remove(std::optional<Group>& group) {
  if (!group) return;
  // An error path that did not bring the calling thread back: it leaves
  // before the cgroup can go.
  if (group->entered) {
    (void)!::write(group->way_back.get(), "0", 1);
  }
  std::string path = std::move(group->path);
  group.reset();
  // The sandbox's processes have ended with its PID namespace before this
  // runs; a process still listed is ours and is ended. The kernel may take
  // a moment to release the last exited ones: rmdir is tried again for up
  // to a second.
  for (int attempt = 0; attempt < 1000; ++attempt) {
    if (::rmdir(path.c_str()) == 0 || errno == ENOENT) return;
    if (errno != EBUSY) break;
    auto procs = ReadFileToString(JoinPath(path, "cgroup.procs"));
    if (procs.ok()) {
      for (absl::string_view line : absl::StrSplit(*procs, '\n')) {
        int pid = 0;
        // Never ourselves: a supervisor thread that could not leave
        // (LeaveThread) is listed too.
        if (absl::SimpleAtoi(line, &pid) && pid > 0 && pid != ::getpid()) {
          ::kill(pid, SIGKILL);
        }
      }
    }
    SleepMs(1);
  }
}

}  // namespace garuda
