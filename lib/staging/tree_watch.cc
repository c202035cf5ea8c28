#include "lib/staging/tree_watch.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/visible.h"
#include "lib/staging/folders.h"

namespace garuda {
namespace {

std::atomic<bool> drop_events{false};
std::atomic<int> overflows{0};

// Every change to a name in a folder, and to the folder itself. Not
// IN_ACCESS, IN_OPEN, IN_CLOSE_NOWRITE: reads change nothing. IN_MODIFY and
// IN_CLOSE_WRITE both: a write through mmap raises no IN_MODIFY, but its
// file's IN_CLOSE_WRITE comes when the last reference goes (at the latest
// when the command's processes are gone).
constexpr uint32_t kMask = IN_CREATE | IN_DELETE | IN_MODIFY | IN_ATTRIB |
                           IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO |
                           IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR;

// File systems on which every write to a file raises its inotify events
// here: local ones, written only through this kernel. Network and FUSE file
// systems (NFS, CIFS/SMB, 9p, ceph, FUSE...) can change without an event,
// and so can others not named here: for them the caller walks.
const char* LocalFileSystem(long type) {       // NOLINT(runtime/int)
  switch (static_cast<unsigned long>(type)) {  // NOLINT(runtime/int)
    case 0xEF53:
      return "ext4";
    case 0x58465342:
      return "xfs";
    case 0x9123683E:
      return "btrfs";
    case 0x01021994:
      return "tmpfs";
    case 0xF2F52010:
      return "f2fs";
    case 0x2FC12FC1:
      return "zfs";
    case 0xCA451A4E:
      return "bcachefs";
    default:
      return nullptr;
  }
}

std::string Child(const std::string& parent, const std::string& name) {
  return parent.empty() ? name : absl::StrCat(parent, "/", name);
}

}  // namespace

namespace tree_watch_testing {
void DropEvents(bool drop) { drop_events = drop; }
void InjectOverflow() { overflows = 1; }
}  // namespace tree_watch_testing

absl::StatusOr<std::unique_ptr<TreeWatch>> TreeWatch::Create(
    const std::string& root, const std::string& label) {
  UniqueFd fd(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!fd) return LastErrnoStatus("inotify_init1");
  return std::unique_ptr<TreeWatch>(new TreeWatch(root, label, std::move(fd)));
}

void TreeWatch::Broken(const std::string& reason) {
  if (broken_.empty()) broken_ = reason;
}

void TreeWatch::BeginWalk() {
  Drain();  // new folders get their watches; the walk sees the rest
  lost_ = false;
  walked_ = true;
}

void TreeWatch::Watch(const std::string& relative, int fd) {
  if (!broken_.empty()) return;
  struct statfs fs;
  if (::fstatfs(fd, &fs) != 0) {
    Broken(
        absl::StrCat("statfs of ", label_, " failed: ", std::strerror(errno)));
    return;
  }
  if (LocalFileSystem(fs.f_type) == nullptr) {
    Broken(absl::StrCat(label_, " (",
                        VisiblePath(relative.empty() ? "." : relative),
                        ") is on a file system (type 0x", absl::Hex(fs.f_type),
                        ") where inotify may not see every write"));
    return;
  }
  // The folder that is open (opened without following links), not
  // whatever its name leads to now; the magic link must be followed.
  std::string path = absl::StrCat("/proc/self/fd/", fd);
  int wd = ::inotify_add_watch(fd_.get(), path.c_str(), kMask);
  if (wd < 0 && errno == ENOENT) {  // no /proc: by its name
    wd = ::inotify_add_watch(fd_.get(), JoinPathForMessage(relative).c_str(),
                             kMask | IN_DONT_FOLLOW);
  }
  if (wd < 0) {
    Broken(errno == ENOSPC
               ? absl::StrCat("no more inotify watches for ", label_,
                              " (fs.inotify.max_user_watches)")
               : absl::StrCat("cannot watch ", label_, " (",
                              VisiblePath(relative),
                              "): ", std::strerror(errno)));
    return;
  }
  paths_[wd] = relative;
}

void TreeWatch::WatchSubtree(const std::string& relative, int fd) {
  Watch(relative, fd);
  absl::StatusOr<std::vector<std::string>> names =
      FolderNames(fd, JoinPathForMessage(relative));
  if (!names.ok()) {
    lost_ = true;  // the caller walks the whole tree, and reports the error
    return;
  }
  for (const std::string& name : *names) {
    UniqueFd sub = OpenSubfolder(fd, name);
    if (sub) {
      WatchSubtree(Child(relative, name), sub.get());
    } else if (errno != ENOTDIR && errno != ELOOP && errno != ENOENT) {
      lost_ = true;
    }
  }
}

std::string TreeWatch::JoinPathForMessage(const std::string& relative) const {
  return relative.empty() ? root_ : absl::StrCat(root_, "/", relative);
}

TreeWatch::Changes TreeWatch::Drain() {
  Changes changes;
  alignas(struct inotify_event) char buffer[64 * 1024];
  for (;;) {
    ssize_t got = ::read(fd_.get(), buffer, sizeof(buffer));
    if (got < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN) lost_ = true;
      break;
    }
    if (got == 0) break;
    if (drop_events) continue;  // the test seam
    for (char* at = buffer; at < buffer + got;) {
      const struct inotify_event* event =
          reinterpret_cast<const struct inotify_event*>(at);
      at += sizeof(struct inotify_event) + event->len;
      if (event->mask & (IN_Q_OVERFLOW | IN_UNMOUNT)) {
        lost_ = true;
        continue;
      }
      auto folder = paths_.find(event->wd);
      if (folder == paths_.end()) continue;  // a watch already removed
      if (event->mask & IN_IGNORED) {
        paths_.erase(folder);
        continue;
      }
      std::string path =
          event->len > 0 ? Child(folder->second, event->name) : folder->second;
      if (event->mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
        // Its parent's watch names it (IN_DELETE, IN_MOVED_FROM); the root
        // itself going is a loss.
        if (folder->second.empty()) lost_ = true;
        continue;
      }
      changes.paths.insert(path);
      if ((event->mask & IN_ISDIR) &&
          (event->mask & (IN_CREATE | IN_MOVED_TO))) {
        // Watched before the caller walks it: a write in it after the walk
        // read a name raises an event. (A folder moved within the tree
        // keeps its watches, which now name it by its new path.)
        UniqueFd sub(::open(JoinPathForMessage(path).c_str(),
                            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (sub) {
          WatchSubtree(path, sub.get());
          changes.folders.insert(path);
        } else if (errno != ENOENT && errno != ENOTDIR) {
          lost_ = true;
        }
      }
    }
  }
  if (overflows.exchange(0) > 0) lost_ = true;  // the test seam
  changes.lost = !trusted();
  return changes;
}

}  // namespace garuda
