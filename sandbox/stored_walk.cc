#include "sandbox/stored_walk.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/base/files.h"
#include "lib/base/sha256.h"
#include "proto/stored_walk.pb.h"
#include "sandbox/private_walk.h"

namespace garuda {
namespace {

constexpr char kSuffix[] = ".walk";
constexpr char kUnfinishedSuffix[] = ".new";
// A stored walk of a large tree: well past any /etc.
constexpr off_t kMaxStoredBytes = 16 << 20;

int64_t Ns(const struct timespec& time) {
  return static_cast<int64_t>(time.tv_sec) * 1'000'000'000 + time.tv_nsec;
}

int64_t ChangedNs(const struct stat& st) { return Ns(st.st_ctim); }

int64_t CoarseNowNs() {
  struct timespec now;
  ::clock_gettime(CLOCK_REALTIME_COARSE, &now);
  return Ns(now);
}

// A local file system whose change times the kernel keeps itself. On a
// network or FUSE file system another machine or a daemon may change an
// entry while the kernel shows a cached change time.
bool KeepsChangeTimes(const std::string& folder) {
  struct statfs fs;
  if (::statfs(folder.c_str(), &fs) != 0) return false;
  switch (static_cast<unsigned long>(fs.f_type)) {
    case EXT4_SUPER_MAGIC:  // ext2, ext3 and ext4 alike
    case XFS_SUPER_MAGIC:
    case BTRFS_SUPER_MAGIC:
    case TMPFS_MAGIC:
    case OVERLAYFS_SUPER_MAGIC:
    case 0x2fc12fc1:  // ZFS
      return true;
    default:
      return false;
  }
}

bool StillAsLookedAt(const LookedAt& looked_at) {
  struct stat st;
  return ::lstat(looked_at.path().c_str(), &st) == 0 &&
         st.st_dev == looked_at.device() && st.st_ino == looked_at.inode() &&
         st.st_mode == looked_at.mode() &&
         ChangedNs(st) == looked_at.changed_ns();
}

// The name of the file that keeps `folder`'s answer.
std::string NameFor(const std::string& folder) {
  return absl::StrCat(Sha256Hex(folder), kSuffix);
}

// Leaves at most kStoredWalksKept - 1 answers in `place`, the most recently
// written, before one more is stored; and removes what a writer killed
// before its rename left (a ".new" file over a minute old).
void MakeRoom(int place) {
  UniqueFd listing(::openat(place, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  DIR* dir = listing ? ::fdopendir(listing.Release()) : nullptr;
  if (dir == nullptr) return;
  std::vector<std::pair<int64_t, std::string>> kept;
  const int64_t minute_ago = CoarseNowNs() - 60'000'000'000;
  while (struct dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    bool answer = absl::EndsWith(name, kSuffix);
    bool unfinished =
        absl::StartsWith(name, ".") && absl::EndsWith(name, kUnfinishedSuffix);
    struct stat st;
    if ((!answer && !unfinished) ||
        ::fstatat(place, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      continue;
    }
    int64_t written = Ns(st.st_mtim);
    if (answer) {
      kept.emplace_back(written, name);
    } else if (written < minute_ago) {
      ::unlinkat(place, name.c_str(), 0);
    }
  }
  ::closedir(dir);
  if (static_cast<int>(kept.size()) < kStoredWalksKept) return;
  std::sort(kept.begin(), kept.end());
  for (size_t i = 0; i + kStoredWalksKept - 1 < kept.size(); ++i) {
    ::unlinkat(place, kept[i].second.c_str(), 0);
  }
}

// Writes `bytes` as `name` in `place` with its digest attribute, through a
// file of its own renamed over the old one. Quietly nothing when the
// attribute cannot be set (no CAP_SYS_ADMIN in the host's namespace) or the
// disk refuses: the next run walks.
void Store(int place, const std::string& name, const std::string& bytes) {
  static std::atomic<int> counter{0};
  std::string temporary =
      absl::StrCat(".", name, ".", ::getpid(), ".", ::syscall(SYS_gettid), ".",
                   counter.fetch_add(1), kUnfinishedSuffix);
  UniqueFd file(::openat(place, temporary.c_str(),
                         O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                         0600));
  if (!file) return;
  Sha256Digest digest = Sha256().Update(bytes).Finish();
  bool written =
      ::fsetxattr(file.get(), kStoredWalkDigestAttribute, digest.data(),
                  digest.size(), 0) == 0 &&
      WriteAll(file.get(), bytes).ok();
  file.Reset();
  if (written) MakeRoom(place);
  if (!written || ::renameat(place, temporary.c_str(), place, name.c_str()) != 0) {
    ::unlinkat(place, temporary.c_str(), 0);
  }
}

}  // namespace

StoredWalk::StoredWalk(std::string base, std::string relative)
    : base_(std::move(base)), relative_(std::move(relative)) {
  if (!base_.empty()) place_ = JoinPath(base_, relative_);
}

const StoredWalk& StoredWalk::ForThisMachine() {
  static const StoredWalk* machine = [] {
    // /run must be the folder itself: the place is hidden from commands by
    // its path (sandbox/mount_plan.cc), which may not go through a link.
    struct stat st;
    bool usable = ::geteuid() == 0 && ::lstat("/run", &st) == 0 &&
                  S_ISDIR(st.st_mode);
    return new StoredWalk(usable ? "/run" : "", "garuda/private-walk");
  }();
  return *machine;
}

std::string StoredWalk::FileFor(const std::string& folder) const {
  return JoinPath(place_, NameFor(folder));
}

UniqueFd StoredWalk::OpenPlace(bool create) const {
  UniqueFd at(
      ::open(base_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  for (absl::string_view part :
       absl::StrSplit(relative_, '/', absl::SkipEmpty())) {
    if (!at) return at;
    std::string name(part);
    if (create) ::mkdirat(at.get(), name.c_str(), 0700);
    at.Reset(::openat(at.get(), name.c_str(),
                      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  }
  return at;
}

std::optional<std::vector<std::string>> StoredWalk::Reuse(
    int place, const std::string& name, const std::string& folder) const {
  UniqueFd file(
      ::openat(place, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!file) return std::nullopt;
  Sha256Digest wanted;
  struct stat st;
  if (::fgetxattr(file.get(), kStoredWalkDigestAttribute, wanted.data(),
                  wanted.size()) != static_cast<ssize_t>(wanted.size()) ||
      ::fstat(file.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
      st.st_size > kMaxStoredBytes) {
    return std::nullopt;
  }
  std::string bytes(st.st_size, '\0');
  if (!ReadExact(file.get(), bytes.data(), bytes.size()).ok() ||
      Sha256().Update(bytes).Finish() != wanted) {
    return std::nullopt;
  }
  StoredPrivateWalk stored;
  if (!stored.ParseFromString(bytes) || stored.folder() != folder ||
      stored.looked_at().empty()) {
    return std::nullopt;
  }
  for (const LookedAt& looked_at : stored.looked_at()) {
    if (!StillAsLookedAt(looked_at)) return std::nullopt;
  }
  return std::vector<std::string>(stored.found().begin(),
                                  stored.found().end());
}

bool StoredWalk::Find(const std::string& folder,
                      std::vector<std::string>* found) const {
  if (place_.empty()) {
    FindPrivateUnder(folder, found);
    return false;
  }
  const std::string name = NameFor(folder);
  UniqueFd place = OpenPlace(/*create=*/false);
  if (place) {
    if (std::optional<std::vector<std::string>> kept =
            Reuse(place.get(), name, folder)) {
      found->insert(found->end(), kept->begin(), kept->end());
      return true;
    }
  }
  int64_t walked_at =
      walk_start_for_test_ != 0 ? walk_start_for_test_ : CoarseNowNs();
  WalkRecord record;
  std::vector<std::string> mine;
  FindPrivateUnder(folder, &mine, &record);
  found->insert(found->end(), mine.begin(), mine.end());

  if (!record.complete || record.looked_at.empty() ||
      !KeepsChangeTimes(folder)) {
    return false;
  }
  const dev_t device = record.looked_at.front().second.st_dev;
  StoredPrivateWalk stored;
  stored.set_folder(folder);
  stored.set_walked_at_ns(walked_at);
  for (const auto& [path, st] : record.looked_at) {
    if (ChangedNs(st) >= walked_at - kStoredWalkSettleNs ||
        st.st_dev != device) {
      return false;
    }
    LookedAt* looked_at = stored.add_looked_at();
    looked_at->set_path(path);
    looked_at->set_device(st.st_dev);
    looked_at->set_inode(st.st_ino);
    looked_at->set_changed_ns(ChangedNs(st));
    looked_at->set_mode(st.st_mode);
  }
  for (const std::string& path : mine) stored.add_found(path);
  std::string bytes;
  if (!place) place = OpenPlace(/*create=*/true);
  if (place && stored.SerializeToString(&bytes) &&
      static_cast<off_t>(bytes.size()) <= kMaxStoredBytes) {
    Store(place.get(), name, bytes);
  }
  return false;
}

}  // namespace garuda
