#include "lib/staging/copy_sync.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"
#include "lib/base/visible.h"
#include "lib/staging/folders.h"
#include "lib/staging/tree_copy.h"

namespace garuda {
namespace {

struct Side {
  bool present = false;
  struct stat st = {};
  bool folder() const { return present && S_ISDIR(st.st_mode); }
};

struct timespec Timespec(int64_t ns) {
  struct timespec t;
  t.tv_sec = static_cast<time_t>(ns / 1000000000);
  t.tv_nsec = static_cast<long>(ns % 1000000000);  // NOLINT(runtime/int)
  return t;
}

// The recorded lstat result as a Side (StatKey::Of gives the key back).
Side FromKey(const StatKey& key) {
  Side side;
  if (key.mode == 0) return side;
  side.present = true;
  side.st.st_mode = key.mode;
  side.st.st_ino = key.inode;
  side.st.st_size = static_cast<off_t>(key.size);
  side.st.st_mtim = Timespec(key.mtime_ns);
  side.st.st_ctim = Timespec(key.ctime_ns);
  return side;
}

// Whether a folder is ignored, asked only when a path beneath it needs it.
struct FolderIgnore {
  const FolderIgnore* parent = nullptr;
  std::string relative;
  bool git = false;
  mutable int state = -1;  // -1 not asked yet, 0 no, 1 yes
};

class Syncer {
 public:
  // `only` and `in_place` (SyncCopyPaths): look at those paths alone and
  // update `in_place` (which is also `previous`).
  Syncer(const std::string& project, const std::string& copy,
         const CopySnapshot& previous, IgnoreRules* rules,
         const SyncOptions& options, SyncStats* stats,
         const PathSet* only = nullptr, CopySnapshot* in_place = nullptr)
      : project_(project),
        copy_(copy),
        previous_(previous),
        rules_(rules),
        options_(options),
        stats_(stats),
        only_(only),
        in_place_(in_place != nullptr),
        next_(in_place != nullptr ? in_place : &own_next_) {}

  CopySnapshot Take() { return std::move(own_next_); }

  absl::Status Run() {
    ::clock_gettime(CLOCK_REALTIME_COARSE, &started_);
    if (options_.fresh_copy) started_ = options_.copy_started;
    newest_copy_ctime_ = options_.newest_copy_ctime_ns;
    if (!in_place_) next_->Reserve(previous_.size());
    bool full = only_ == nullptr || only_->subtrees.count("") != 0;
    bool known = options_.copy_known && (only_ == nullptr || !full);
    if (only_ != nullptr) {
      // The names to look at per folder: the paths and every folder above.
      for (const auto* set : {&only_->paths, &only_->subtrees}) {
        for (const std::string& path : *set) {
          std::string rest = path;
          while (!rest.empty()) {
            std::string name;
            std::string parent = ParentPath(rest, &name);
            if (!children_[parent].insert(name).second) break;
            rest = parent;
          }
        }
      }
    } else if (options_.links != nullptr) {
      options_.links->clear();  // a whole walk finds them all again
    }
    if (known && only_ == nullptr) {
      // The copy's names per folder, from the snapshot of its full state.
      for (const auto& [path, entry] : previous_.entries()) {
        if (path.empty()) continue;
        std::string name;
        std::string parent = ParentPath(path, &name);
        copy_names_[parent].push_back(std::move(name));
      }
    }
    UniqueFd project(
        ::open(project_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!project) return LastErrnoStatus(absl::StrCat("open(", project_, ")"));
    UniqueFd copy(
        ::open(copy_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!copy) return LastErrnoStatus(absl::StrCat("open(", copy_, ")"));
    uint64_t before = Changes();
    FolderIgnore root;
    root.state = 0;
    RETURN_IF_ERROR(Walk("", project.get(), copy.get(), root,
                         /*git=*/false, options_.fresh_copy, known, full));
    RETURN_IF_ERROR(RecordFolder("", copy.get(), "", Side(), before,
                                 /*known=*/false));
    // Any later write to a recorded copy path must get a newer ctime than
    // the one recorded.
    WaitForClockPast(newest_copy_ctime_);
    return absl::OkStatus();
  }

 private:
  uint64_t Changes() const {
    return stats_->copied + stats_->removed + chmods_;
  }

  // `root` and `relative` name the path in an error (joined only then).
  Side Stat(int dir_fd, const std::string& name, const std::string& root,
            const std::string& relative, absl::Status* error) {
    Side side;
    if (dir_fd < 0 && dir_fd != AT_FDCWD) return side;
    if (::fstatat(dir_fd, name.c_str(), &side.st, AT_SYMLINK_NOFOLLOW) == 0) {
      side.present = true;
    } else if (errno != ENOENT) {
      *error = LastErrnoStatus(
          absl::StrCat("stat(", VisiblePath(JoinPath(root, relative)), ")"));
    }
    return side;
  }

  // The copy's side of `child`: from the snapshot when the copy is known
  // (nothing wrote it since it was recorded), else an lstat.
  Side CopySide(int copy_fd, const std::string& name, const std::string& child,
                bool known, absl::Status* error) {
    if (!known) return Stat(copy_fd, name, copy_, child, error);
    const CopySnapshot::Entry* entry = previous_.Find(child);
    return entry == nullptr ? Side() : FromKey(entry->copy);
  }

  // The copy's side again after this walk changed it: always an lstat.
  Side CopySideNow(int copy_fd, const std::string& name,
                   const std::string& child, absl::Status* error) {
    if (copy_fd >= 0) return Stat(copy_fd, name, copy_, child, error);
    return Stat(AT_FDCWD, JoinPath(copy_, child), copy_, child, error);
  }

  absl::StatusOr<std::vector<std::string>> CopyNames(
      const std::string& relative, int copy_fd, bool known) {
    if (!known) return FolderNames(copy_fd, JoinPath(copy_, relative));
    auto it = copy_names_.find(relative);
    if (it == copy_names_.end()) return std::vector<std::string>();
    return it->second;
  }

  absl::StatusOr<IgnoreRules*> Rules() {
    if (rules_ == nullptr && !options_.rules_project.empty()) {
      ASSIGN_OR_RETURN(own_rules_,
                       IgnoreRules::ForProject(options_.rules_project));
      rules_ = own_rules_.get();
    }
    return rules_;
  }

  absl::StatusOr<bool> FolderIgnored(const FolderIgnore& folder) {
    if (folder.state < 0) {
      ASSIGN_OR_RETURN(bool ignored, Ignored(folder.relative, true,
                                             *folder.parent, folder.git));
      folder.state = ignored ? 1 : 0;
    }
    return folder.state == 1;
  }

  absl::StatusOr<bool> Ignored(const std::string& relative, bool folder,
                               const FolderIgnore& parent, bool git) {
    if (git) return false;
    ASSIGN_OR_RETURN(bool parent_ignored, FolderIgnored(parent));
    if (parent_ignored) return true;
    ASSIGN_OR_RETURN(IgnoreRules * rules, Rules());
    if (rules == nullptr) return false;
    return rules->IsIgnored(relative, folder);
  }

  // Records a pair of files or links as equal, unless the project side is
  // racy (see copy_sync.h): then only the copy's state.
  void RecordEqual(const std::string& relative, const Side& project,
                   const Side& copy) {
    if (TimespecNanoseconds(project.st.st_ctim) >=
        TimespecNanoseconds(started_)) {
      RecordCopyOnly(relative, copy);
      return;
    }
    RecordCopy(relative, project, copy);
  }

  void RecordCopy(const std::string& relative, const Side& project,
                  const Side& copy) {
    struct stat absent = {};
    next_->Record(relative, project.present ? project.st : absent, copy.st);
    NoteCtime(copy);
  }

  void RecordCopyOnly(const std::string& relative, const Side& copy) {
    next_->RecordCopy(relative, copy.st);
    NoteCtime(copy);
  }

  // The project's files with more than one link, for the watch (see
  // SyncOptions::links).
  void NoteLinks(const std::string& relative, const Side& project) {
    if (options_.links == nullptr) return;
    if (project.present && !S_ISDIR(project.st.st_mode) &&
        project.st.st_nlink > 1) {
      if (options_.links->insert(relative).second && only_ != nullptr) {
        stats_->new_link = true;
      }
    } else if (only_ != nullptr) {
      options_.links->erase(relative);
    }
  }

  void NoteCtime(const Side& copy) {
    newest_copy_ctime_ =
        std::max(newest_copy_ctime_, TimespecNanoseconds(copy.st.st_ctim));
  }

  // A copy folder's state once its subtree is done: as found when nothing
  // in it changed since `before`, else an lstat now (its times changed).
  absl::Status RecordFolder(const std::string& relative, int parent_fd,
                            const std::string& name, const Side& found,
                            uint64_t before, bool known) {
    Side now = found;
    if (relative.empty() || Changes() != before || !found.present) {
      absl::Status error;
      now = relative.empty()
                ? Stat(AT_FDCWD, copy_, copy_, "", &error)
                : CopySideNow(known ? -1 : parent_fd, name, relative, &error);
      RETURN_IF_ERROR(error);
    }
    if (now.present) RecordCopyOnly(relative, now);
    return absl::OkStatus();
  }

  UniqueFd OpenFolder(int parent, const std::string& name) {
    if (parent < 0) return UniqueFd();
    return OpenSubfolder(parent, name);
  }

  UniqueFd OpenCopyFolder(int copy_fd, const std::string& name,
                          const std::string& child) {
    if (copy_fd >= 0) return OpenFolder(copy_fd, name);
    return UniqueFd(::open(JoinPath(copy_, child).c_str(),
                           O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  }

  // `fresh`: the copy of this subtree was just made from the project.
  // `known`: the copy's side comes from the snapshot (copy_fd is -1).
  // `full`: every name of the folder; else only those of `only_`.
  absl::Status Walk(const std::string& relative, int project_fd, int copy_fd,
                    const FolderIgnore& ignored, bool git, bool fresh,
                    bool known, bool full) {
    std::vector<std::string> names;
    if (!full) {
      auto it = children_.find(relative);
      if (it != children_.end()) {
        names.assign(it->second.begin(), it->second.end());
      }
    }
    if (full && project_fd >= 0) {
      if (options_.before_read) options_.before_read(relative, project_fd);
      ASSIGN_OR_RETURN(names,
                       FolderNames(project_fd, JoinPath(project_, relative)));
    }
    if (full) {
      ASSIGN_OR_RETURN(std::vector<std::string> copy_names,
                       CopyNames(relative, copy_fd, known));
      std::sort(names.begin(), names.end());
      std::sort(copy_names.begin(), copy_names.end());
      std::vector<std::string> all;
      std::set_union(names.begin(), names.end(), copy_names.begin(),
                     copy_names.end(), std::back_inserter(all));
      names = std::move(all);
    }
    // A known copy's folder is opened only when a path in it is copied.
    UniqueFd opened;
    auto copy_dir = [&]() -> int {
      if (!known) return copy_fd;
      if (!opened) {
        opened = UniqueFd(
            ::open(relative.empty() ? copy_.c_str()
                                    : JoinPath(copy_, relative).c_str(),
                   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      }
      return opened ? opened.get() : -1;
    };
    for (const std::string& name : names) {
      std::string child = ChildPath(relative, name);
      bool child_git = git || child == ".git";
      ++stats_->walked;
      absl::Status error;
      Side p = Stat(project_fd, name, project_, child, &error);
      Side c = CopySide(copy_fd, name, child, known, &error);
      RETURN_IF_ERROR(error);
      NoteLinks(child, p);
      if (!c.present && !p.present) {  // gone (during the walk)
        if (in_place_) next_->Erase(child);
        continue;
      }
      // Not `full` (SyncCopyPaths): a folder created or moved in is walked
      // whole, its copy side read from the copy itself.
      bool child_full = full || only_->subtrees.count(child) != 0;
      bool sub_known = known && (full || !child_full);
      // A file only in the copy is taken as known only beneath an ignored
      // folder; elsewhere the rules are asked again (.gitignore may have
      // changed).
      if (c.present && !p.folder() && !c.folder() &&
          previous_.KnownSame(child, p.present ? &p.st : nullptr, c.st)) {
        bool known_same = p.present;
        if (!known_same) {
          ASSIGN_OR_RETURN(known_same, FolderIgnored(ignored));
        }
        if (known_same) {
          RecordCopy(child, p, c);
          continue;
        }
      }
      if (p.folder() && c.folder()) {
        uint64_t before = Changes();
        FolderIgnore sub_ignored;
        sub_ignored.parent = &ignored;
        sub_ignored.relative = child;
        sub_ignored.git = child_git;
        UniqueFd sub_project = OpenFolder(project_fd, name);
        UniqueFd sub_copy = sub_known ? UniqueFd()
                                      : (known ? OpenCopyFolder(-1, name, child)
                                               : OpenFolder(copy_fd, name));
        if (!sub_project || (!sub_known && !sub_copy)) {
          return LastErrnoStatus(absl::StrCat("open(", VisiblePath(child),
                                              ") in the project "
                                              "or its copy"));
        }
        if ((p.st.st_mode & 07777) != (c.st.st_mode & 07777)) {
          ASSIGN_OR_RETURN(bool folder_ignored, FolderIgnored(sub_ignored));
          if (!folder_ignored) {
            UniqueFd target = known ? OpenCopyFolder(-1, name, child)
                                    : OpenFolder(copy_fd, name);
            if (!target || ::fchmod(target.get(), p.st.st_mode & 07777) != 0) {
              return LastErrnoStatus(absl::StrCat(
                  "chmod(", VisiblePath(JoinPath(copy_, child)), ")"));
            }
            ++chmods_;
          }
        }
        RETURN_IF_ERROR(Walk(child, sub_project.get(), sub_copy.get(),
                             sub_ignored, child_git, fresh, sub_known,
                             child_full));
        RETURN_IF_ERROR(RecordFolder(child, copy_fd, name, c, before, known));
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
          uint64_t before = Changes();
          UniqueFd sub_copy =
              sub_known ? UniqueFd()
                        : OpenCopyFolder(known ? -1 : copy_fd, name, child);
          if (!sub_known && !sub_copy) {
            return LastErrnoStatus(absl::StrCat(
                "open(", VisiblePath(JoinPath(copy_, child)), ")"));
          }
          FolderIgnore yes;
          yes.state = 1;
          RETURN_IF_ERROR(Walk(child, -1, sub_copy.get(), yes, false, false,
                               sub_known, child_full));
          RETURN_IF_ERROR(RecordFolder(child, copy_fd, name, c, before, known));
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
        if (in_place_) next_->Erase(child);
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
      Side now = CopySideNow(copy_dir(), name, child, &error);
      RETURN_IF_ERROR(error);
      if (!now.present) continue;
      if (now.folder()) {
        UniqueFd sub_project = OpenFolder(project_fd, name);
        UniqueFd sub_copy = OpenCopyFolder(copy_dir(), name, child);
        if (!sub_project || !sub_copy) continue;  // compared next time
        FolderIgnore no;
        no.state = 0;
        RETURN_IF_ERROR(Walk(child, sub_project.get(), sub_copy.get(), no,
                             child_git, /*fresh=*/true, /*known=*/false,
                             /*full=*/true));
        RecordCopyOnly(child, now);
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
  std::unique_ptr<IgnoreRules> own_rules_;
  const SyncOptions& options_;
  SyncStats* stats_;
  const PathSet* only_;
  bool in_place_;
  CopySnapshot own_next_;
  CopySnapshot* next_;
  struct timespec started_ = {0, 0};
  int64_t newest_copy_ctime_ = 0;
  uint64_t chmods_ = 0;
  std::unordered_map<std::string, std::vector<std::string>> copy_names_;
  // SyncCopyPaths: per folder, the names to look at.
  std::unordered_map<std::string, std::set<std::string>> children_;
};

}  // namespace

absl::StatusOr<CopySnapshot> SyncCopy(const std::string& project,
                                      const std::string& copy,
                                      const CopySnapshot& previous,
                                      IgnoreRules* rules,
                                      const SyncOptions& options,
                                      SyncStats* stats) {
  Syncer syncer(project, copy, previous, rules, options, stats);
  RETURN_IF_ERROR(syncer.Run());
  return syncer.Take();
}

absl::Status SyncCopyPaths(const std::string& project, const std::string& copy,
                           const PathSet& only, CopySnapshot* snapshot,
                           const SyncOptions& options, SyncStats* stats) {
  Syncer syncer(project, copy, *snapshot, nullptr, options, stats, &only,
                snapshot);
  return syncer.Run();
}
}  // namespace garuda
