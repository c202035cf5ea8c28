#include "lib/staging/copy_sync.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"
#include "lib/question/visible.h"
#include "lib/staging/folders.h"
#include "lib/staging/tree_copy.h"

namespace garuda {
namespace {

constexpr char kMagic[] = "garuda-copy-snapshot-v1\n";

int64_t Nanoseconds(const struct timespec& t) {
  return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

void Put(std::string* out, const void* data, size_t size) {
  out->append(static_cast<const char*>(data), size);
}

void PutKey(std::string* out, const StatKey& key) {
  Put(out, &key.mode, sizeof(key.mode));
  Put(out, &key.inode, sizeof(key.inode));
  Put(out, &key.size, sizeof(key.size));
  Put(out, &key.mtime_ns, sizeof(key.mtime_ns));
  Put(out, &key.ctime_ns, sizeof(key.ctime_ns));
}

class Reader {
 public:
  explicit Reader(absl::string_view data) : data_(data) {}
  bool Get(void* out, size_t size) {
    if (data_.size() < size) return false;
    std::memcpy(out, data_.data(), size);
    data_.remove_prefix(size);
    return true;
  }
  bool GetKey(StatKey* key) {
    return Get(&key->mode, sizeof(key->mode)) &&
           Get(&key->inode, sizeof(key->inode)) &&
           Get(&key->size, sizeof(key->size)) &&
           Get(&key->mtime_ns, sizeof(key->mtime_ns)) &&
           Get(&key->ctime_ns, sizeof(key->ctime_ns));
  }
  bool GetString(std::string* out, size_t size) {
    if (data_.size() < size) return false;
    out->assign(data_.data(), size);
    data_.remove_prefix(size);
    return true;
  }
  bool done() const { return data_.empty(); }

 private:
  absl::string_view data_;
};

std::string Child(const std::string& parent, const std::string& name) {
  return parent.empty() ? name : absl::StrCat(parent, "/", name);
}

struct Side {
  bool present = false;
  struct stat st = {};
  bool folder() const { return present && S_ISDIR(st.st_mode); }
};

class Syncer {
 public:
  Syncer(const std::string& project, const std::string& copy,
         const CopySnapshot& previous, IgnoreRules* rules,
         const SyncOptions& options, SyncStats* stats)
      : project_(project),
        copy_(copy),
        previous_(previous),
        rules_(rules),
        options_(options),
        stats_(stats) {}

  absl::StatusOr<CopySnapshot> Run() {
    ::clock_gettime(CLOCK_REALTIME_COARSE, &started_);
    if (options_.fresh_copy) started_ = options_.copy_started;
    UniqueFd project(
        ::open(project_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!project) return LastErrnoStatus(absl::StrCat("open(", project_, ")"));
    UniqueFd copy(
        ::open(copy_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!copy) return LastErrnoStatus(absl::StrCat("open(", copy_, ")"));
    RETURN_IF_ERROR(Walk("", project.get(), copy.get(), /*ignored=*/false,
                         /*git=*/false, options_.fresh_copy));
    // Any later write to a recorded copy file must get a newer ctime than
    // the one recorded: wait for the clock to pass it (one tick at most).
    for (;;) {
      struct timespec now;
      ::clock_gettime(CLOCK_REALTIME_COARSE, &now);
      if (Nanoseconds(now) > newest_copy_ctime_) break;
      struct timespec pause = {0, 1000000};
      ::nanosleep(&pause, nullptr);
    }
    return std::move(next_);
  }

 private:
  Side Stat(int dir_fd, const std::string& name, const std::string& shown,
            absl::Status* error) {
    Side side;
    if (dir_fd < 0) return side;
    if (::fstatat(dir_fd, name.c_str(), &side.st, AT_SYMLINK_NOFOLLOW) == 0) {
      side.present = true;
    } else if (errno != ENOENT) {
      *error = LastErrnoStatus(absl::StrCat("stat(", VisiblePath(shown), ")"));
    }
    return side;
  }

  absl::StatusOr<bool> Ignored(const std::string& relative, bool folder,
                               bool parent_ignored, bool git) {
    if (git) return false;
    if (parent_ignored) return true;
    if (rules_ == nullptr) return false;
    return rules_->IsIgnored(relative, folder);
  }

  // Records a pair of files or links as equal, unless the project side is
  // racy (see copy_sync.h).
  void RecordEqual(const std::string& relative, const Side& project,
                   const Side& copy) {
    if (Nanoseconds(project.st.st_ctim) >= Nanoseconds(started_)) return;
    RecordCopy(relative, project, copy);
  }

  void RecordCopy(const std::string& relative, const Side& project,
                  const Side& copy) {
    struct stat absent = {};
    next_.Record(relative, project.present ? project.st : absent, copy.st);
    newest_copy_ctime_ =
        std::max(newest_copy_ctime_, Nanoseconds(copy.st.st_ctim));
  }

  UniqueFd OpenFolder(int parent, const std::string& name) {
    if (parent < 0) return UniqueFd();
    return UniqueFd(::openat(parent, name.c_str(),
                             O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  }

  // `fresh`: the copy of this subtree was just made from the project.
  absl::Status Walk(const std::string& relative, int project_fd, int copy_fd,
                    bool ignored, bool git, bool fresh) {
    std::vector<std::string> names;
    if (project_fd >= 0) {
      ASSIGN_OR_RETURN(names,
                       FolderNames(project_fd, JoinPath(project_, relative)));
    }
    {
      ASSIGN_OR_RETURN(std::vector<std::string> copy_names,
                       FolderNames(copy_fd, JoinPath(copy_, relative)));
      std::sort(names.begin(), names.end());
      std::sort(copy_names.begin(), copy_names.end());
      std::vector<std::string> all;
      std::set_union(names.begin(), names.end(), copy_names.begin(),
                     copy_names.end(), std::back_inserter(all));
      names = std::move(all);
    }
    for (const std::string& name : names) {
      std::string child = Child(relative, name);
      bool child_git = git || child == ".git";
      ++stats_->walked;
      absl::Status error;
      Side p = Stat(project_fd, name, JoinPath(project_, child), &error);
      Side c = Stat(copy_fd, name, JoinPath(copy_, child), &error);
      RETURN_IF_ERROR(error);
      if (!c.present && !p.present) continue;  // gone during the walk
      // A file only in the copy is taken as known only beneath an ignored
      // folder; elsewhere the rules are asked again (.gitignore may have
      // changed).
      if (c.present && !p.folder() && !c.folder() && (p.present || ignored) &&
          previous_.KnownSame(child, p.present ? &p.st : nullptr, c.st)) {
        RecordCopy(child, p, c);
        continue;
      }
      if (p.folder() && c.folder()) {
        ASSIGN_OR_RETURN(bool child_ignored,
                         Ignored(child, true, ignored, child_git));
        if (!child_ignored &&
            (p.st.st_mode & 07777) != (c.st.st_mode & 07777)) {
          if (::fchmodat(copy_fd, name.c_str(), p.st.st_mode & 07777, 0) != 0) {
            return LastErrnoStatus(absl::StrCat(
                "chmod(", VisiblePath(JoinPath(copy_, child)), ")"));
          }
        }
        UniqueFd sub_project = OpenFolder(project_fd, name);
        UniqueFd sub_copy = OpenFolder(copy_fd, name);
        if (!sub_project || !sub_copy) {
          return LastErrnoStatus(absl::StrCat("open(", VisiblePath(child),
                                              ") in the project "
                                              "or its copy"));
        }
        RETURN_IF_ERROR(Walk(child, sub_project.get(), sub_copy.get(),
                             child_ignored, child_git, fresh));
        continue;
      }
      bool as_folder = p.present ? p.folder() : c.folder();
      ASSIGN_OR_RETURN(bool child_ignored,
                       Ignored(child, as_folder, ignored, child_git));
      if (child_ignored) {
        // A build output stays as the command left it. Its state is
        // recorded so that the next list can tell what a command wrote.
        ++stats_->ignored;
        if (c.folder()) {
          UniqueFd sub_copy = OpenFolder(copy_fd, name);
          if (!sub_copy) {
            return LastErrnoStatus(absl::StrCat(
                "open(", VisiblePath(JoinPath(copy_, child)), ")"));
          }
          RETURN_IF_ERROR(Walk(child, -1, sub_copy.get(), true, false, false));
        } else if (c.present) {
          RecordCopy(child, p, c);
        }
        continue;
      }
      if (fresh && p.present && c.present &&
          (p.st.st_mode & S_IFMT) == (c.st.st_mode & S_IFMT)) {
        RecordEqual(child, p, c);  // copied from it just now
        continue;
      }
      // The copy takes the project's version.
      if (c.present) {
        RETURN_IF_ERROR(RemoveTree(JoinPath(copy_, child)));
        ++stats_->removed;
      }
      if (!p.present || !(S_ISREG(p.st.st_mode) || S_ISLNK(p.st.st_mode) ||
                          S_ISDIR(p.st.st_mode))) {
        continue;  // special files are never copied
      }
      struct timespec before;
      ::clock_gettime(CLOCK_REALTIME_COARSE, &before);
      CopyStats copied;
      RETURN_IF_ERROR(
          CopyTree(JoinPath(project_, child), JoinPath(copy_, child), &copied));
      ++stats_->copied;
      Side now = Stat(copy_fd, name, JoinPath(copy_, child), &error);
      RETURN_IF_ERROR(error);
      if (!now.present) continue;
      if (now.folder()) {
        UniqueFd sub_project = OpenFolder(project_fd, name);
        UniqueFd sub_copy = OpenFolder(copy_fd, name);
        if (!sub_project || !sub_copy) continue;  // compared next time
        RETURN_IF_ERROR(Walk(child, sub_project.get(), sub_copy.get(), false,
                             child_git, /*fresh=*/true));
      } else {
        RecordEqual(child, p, now);
      }
    }
    return absl::OkStatus();
  }

  const std::string& project_;
  const std::string& copy_;
  const CopySnapshot& previous_;
  IgnoreRules* rules_;
  const SyncOptions& options_;
  SyncStats* stats_;
  struct timespec started_ = {0, 0};
  int64_t newest_copy_ctime_ = 0;
  CopySnapshot next_;
};

}  // namespace

StatKey StatKey::Of(const struct stat& st) {
  StatKey key;
  key.mode = st.st_mode;
  key.inode = st.st_ino;
  key.size = static_cast<uint64_t>(st.st_size);
  key.mtime_ns = Nanoseconds(st.st_mtim);
  key.ctime_ns = Nanoseconds(st.st_ctim);
  return key;
}

absl::StatusOr<CopySnapshot> CopySnapshot::Load(const std::string& file) {
  CopySnapshot snapshot;
  absl::StatusOr<std::string> data = ReadFileToString(file);
  if (absl::IsNotFound(data.status())) return snapshot;
  RETURN_IF_ERROR(data.status());
  absl::string_view rest = *data;
  if (rest.substr(0, sizeof(kMagic) - 1) != kMagic) {
    return absl::DataLossError(
        absl::StrCat(file, " is not a copy snapshot (", kMagic, ")"));
  }
  rest.remove_prefix(sizeof(kMagic) - 1);
  Reader reader(rest);
  while (!reader.done()) {
    uint32_t length = 0;
    std::string path;
    Entry entry;
    if (!reader.Get(&length, sizeof(length)) ||
        !reader.GetString(&path, length) || !reader.GetKey(&entry.project) ||
        !reader.GetKey(&entry.copy)) {
      return absl::DataLossError(absl::StrCat(file, " is truncated"));
    }
    snapshot.entries_[std::move(path)] = entry;
  }
  return snapshot;
}

absl::Status CopySnapshot::Save(const std::string& file) const {
  std::string data = kMagic;
  data.reserve(entries_.size() * 120);
  for (const auto& [path, entry] : entries_) {
    uint32_t length = static_cast<uint32_t>(path.size());
    Put(&data, &length, sizeof(length));
    data += path;
    PutKey(&data, entry.project);
    PutKey(&data, entry.copy);
  }
  // No fsync: after a crash a lost or older snapshot only means that more
  // paths get compared; it never makes a changed path look unchanged,
  // because every path it names has changed ctimes since.
  std::string temporary = absl::StrCat(file, ".tmp");
  {
    ASSIGN_OR_RETURN(UniqueFd fd,
                     OpenFile(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0600));
    RETURN_IF_ERROR(WriteAll(fd.get(), data));
  }
  if (::rename(temporary.c_str(), file.c_str()) != 0) {
    return LastErrnoStatus(absl::StrCat("rename(", temporary, ")"));
  }
  return absl::OkStatus();
}

bool CopySnapshot::KnownSame(const std::string& relative,
                             const struct stat* project,
                             const struct stat& copy) const {
  auto it = entries_.find(relative);
  if (it == entries_.end() || !(it->second.copy == StatKey::Of(copy))) {
    return false;
  }
  return project == nullptr ? it->second.project.mode == 0
                            : it->second.project == StatKey::Of(*project);
}

bool CopySnapshot::CopyUnchanged(const std::string& relative,
                                 const struct stat& copy) const {
  auto it = entries_.find(relative);
  return it != entries_.end() && it->second.copy == StatKey::Of(copy);
}

void CopySnapshot::Record(const std::string& relative,
                          const struct stat& project, const struct stat& copy) {
  StatKey project_key;
  if (project.st_mode != 0) project_key = StatKey::Of(project);
  entries_[relative] = {project_key, StatKey::Of(copy)};
}

absl::StatusOr<CopySnapshot> SyncCopy(const std::string& project,
                                      const std::string& copy,
                                      const CopySnapshot& previous,
                                      IgnoreRules* rules,
                                      const SyncOptions& options,
                                      SyncStats* stats) {
  Syncer syncer(project, copy, previous, rules, options, stats);
  return syncer.Run();
}

}  // namespace garuda
