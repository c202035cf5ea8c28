#include "sandbox/private_walk.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "lib/base/files.h"

namespace garuda {
namespace {

// A folder's own entries coming and going, and any change of the folder's
// or an entry's mode, owner or link count (IN_ATTRIB is reported for the
// folder and for its entries).
constexpr uint32_t kFolderEvents =
    IN_ATTRIB | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO |
    IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW;
// A file watched on its own: a chmod through another hard link of it
// reaches no folder watch of ours, only the file's.
constexpr uint32_t kEntryEvents =
    IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_DONT_FOLLOW;

// Places the watches of one walk; `ok` turns false at the first that
// cannot be placed, and the walk's answer is then used once only.
struct Watcher {
  int fd = -1;
  bool ok = false;
  void Add(const std::string& path, uint32_t mask) {
    if (ok && ::inotify_add_watch(fd, path.c_str(), mask) < 0) ok = false;
  }
};

// The entries of the folder `dir_fd` (without "." and ".."), with their
// types, read with getdents64 into `buffer`: no DIR, so none of the
// fstat, fcntl and allocation that fdopendir and closedir add per folder
// (the walk reads some 140 folders of /etc at each one-shot run).
std::vector<std::pair<std::string, unsigned char>> Entries(
    int dir_fd, std::vector<char>& buffer, WalkRecord* record) {
  std::vector<std::pair<std::string, unsigned char>> entries;
  for (;;) {
    long got = ::syscall(SYS_getdents64, dir_fd, buffer.data(), buffer.size());
    if (got < 0 && record != nullptr) record->complete = false;
    if (got <= 0) break;
    for (long at = 0; at < got;) {
      const auto* entry = reinterpret_cast<const struct dirent64*>(&buffer[at]);
      at += entry->d_reclen;
      const char* name = entry->d_name;
      if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) {
        continue;
      }
      entries.emplace_back(name, entry->d_type);
    }
  }
  return entries;
}

// `watcher` (may be null) watches each folder before it is read and each
// entry looked at, so that any change after the look raises an event.
// `record` (may be null) is told of each entry looked at.
void Walk(UniqueFd dir, const std::string& folder, Watcher* watcher,
          WalkRecord* record, std::vector<char>& buffer,
          std::vector<std::string>* found) {
  for (const auto& [name, type] : Entries(dir.get(), buffer, record)) {
    // A link is never followed, so it needs no stat: most of /etc's entries
    // are links (the certificate store). Replacing it by a file is an
    // event of the folder's watch.
    if (type == DT_LNK) continue;
    struct stat st;
    if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      // Removed since the folder was read: the folder changed too.
      if (errno != ENOENT && record != nullptr) record->complete = false;
      continue;
    }
    if (S_ISLNK(st.st_mode)) continue;
    std::string path = JoinPath(folder, name);
    if (record != nullptr) record->looked_at.emplace_back(path, st);
    bool directory = S_ISDIR(st.st_mode);
    bool readable =
        (st.st_mode & S_IROTH) && (!directory || (st.st_mode & S_IXOTH));
    // Only what is shown needs a watch of its own: a hidden entry that
    // becomes readable stays hidden until the next walk (its folder's
    // watch sees a chmod by this name), which hides too much, never too
    // little. (Nor could a stager in its own user namespace watch a file
    // it may not read.)
    if (watcher != nullptr && readable) {
      watcher->Add(path, directory ? kFolderEvents : kEntryEvents);
    }
    if (!readable) {
      found->push_back(path);
    } else if (directory) {
      UniqueFd sub(::openat(dir.get(), name.c_str(),
                            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (sub) {
        Walk(std::move(sub), path, watcher, record, buffer, found);
      } else if (record != nullptr) {
        record->complete = false;
      }
    }
  }
}

void WalkFolder(const std::string& folder, Watcher* watcher,
                WalkRecord* record, std::vector<std::string>* found) {
  if (watcher != nullptr) watcher->Add(folder, kFolderEvents);
  if (record != nullptr) {
    struct stat st;
    if (::lstat(folder.c_str(), &st) == 0) {
      record->looked_at.emplace_back(folder, st);
    } else {
      record->complete = false;
    }
  }
  UniqueFd fd(
      ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  std::vector<char> buffer(32 * 1024);
  if (fd) {
    Walk(std::move(fd), folder, watcher, record, buffer, found);
  } else if (record != nullptr) {
    record->complete = false;
  }
}

ino_t MountNamespace() {
  struct stat st;
  return ::stat("/proc/self/ns/mnt", &st) == 0 ? st.st_ino : 0;
}

// The lines of mountinfo (read from its start) whose mount point is
// `folder`, above it or below it: a mount there changes what a walk finds
// without any inotify event.
std::string MountsAt(int fd, const std::string& folder) {
  std::string text;
  if (::lseek(fd, 0, SEEK_SET) != 0) return "unreadable";
  char buffer[16384];
  for (;;) {
    ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got < 0) return "unreadable";
    if (got == 0) break;
    text.append(buffer, got);
  }
  std::string kept;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::MaxSplits(' ', 5));
    if (fields.size() < 5) continue;
    std::string point(fields[4]);
    if (point == "/" || point == folder ||
        absl::StartsWith(folder, point + "/") ||
        absl::StartsWith(point, folder + "/")) {
      absl::StrAppend(&kept, line, "\n");
    }
  }
  return kept;
}

}  // namespace

void FindPrivateUnder(const std::string& folder,
                      std::vector<std::string>* found, WalkRecord* record) {
  WalkFolder(folder, nullptr, record, found);
}

void PrivateWalk::Find(const std::string& folder,
                       std::vector<std::string>* found) {
  std::lock_guard<std::mutex> lock(mutex_);
  Stored& stored = stored_[folder];
  if (!StillTrue(folder, stored)) Walk(folder, stored);
  found->insert(found->end(), stored.found.begin(), stored.found.end());
}

int PrivateWalk::walks() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return walks_;
}

std::vector<std::string> PrivateWalk::StoredForTest(
    const std::string& folder) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = stored_.find(folder);
  return it == stored_.end() ? std::vector<std::string>() : it->second.found;
}

bool PrivateWalk::StillTrue(const std::string& folder, Stored& stored) {
  if (!stored.usable) return false;
  // Any event at all, an overflow included, ends the answer's life.
  char events[4096];
  ssize_t got = ::read(stored.events.get(), events, sizeof events);
  if (got != -1 || errno != EAGAIN) return false;
  if (MountNamespace() != stored.mount_namespace) return false;
  // mountinfo is pollable: POLLPRI once per change of the namespace's
  // mounts (any mount: the staging view's too), then the lines that matter
  // are compared.
  struct pollfd changed = {stored.mountinfo.get(), POLLPRI, 0};
  if (::poll(&changed, 1, 0) != 0 &&
      (changed.revents & (POLLPRI | POLLERR)) != 0 &&
      MountsAt(stored.mountinfo.get(), folder) != stored.mounts) {
    return false;
  }
  return true;
}

void PrivateWalk::Walk(const std::string& folder, Stored& stored) {
  stored = Stored();
  ++walks_;
  stored.events.Reset(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  stored.mountinfo.Reset(::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC));
  Watcher watcher;
  watcher.fd = stored.events.get();
  watcher.ok = stored.events.valid() && stored.mountinfo.valid();
  if (watcher.ok) {
    // Before the walk, so that a mount made during it shows next time;
    // the poll first, so that a change after it is the next poll's.
    struct pollfd drain = {stored.mountinfo.get(), POLLPRI, 0};
    ::poll(&drain, 1, 0);
    stored.mount_namespace = MountNamespace();
    stored.mounts = MountsAt(stored.mountinfo.get(), folder);
  }
  WalkFolder(folder, &watcher, nullptr, &stored.found);
  stored.usable = watcher.ok;
  if (!stored.usable) {
    stored.events.Reset();
    stored.mountinfo.Reset();
  }
}

}  // namespace garuda
