#include "lib/staging/copy_observe.h"

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

// The walk of the copy after a command (see ObserveCopy).
class Observer {
 public:
  Observer(const std::string& copy, const CopySnapshot& before,
           std::unordered_set<std::string>* unchanged,
           const std::function<void(const std::string&, int)>& before_read,
           std::set<std::string>* links)
      : copy_(copy),
        before_(before),
        unchanged_(unchanged),
        before_read_(before_read),
        links_(links) {}

  absl::StatusOr<CopySnapshot> Run() {
    next_.Reserve(before_.size());
    UniqueFd root(
        ::open(copy_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!root) return LastErrnoStatus(absl::StrCat("open(", copy_, ")"));
    struct stat st;
    if (::fstat(root.get(), &st) != 0) {
      return LastErrnoStatus(absl::StrCat("stat(", copy_, ")"));
    }
    if (links_ != nullptr) links_->clear();
    ASSIGN_OR_RETURN(bool same, Walk("", root.get()));
    if (Keep("", st) && same) unchanged_->insert("");
    return std::move(next_);
  }

 private:
  // Records `relative` as the copy has it; true when it is as `before` had
  // it (its pair, if any, is kept).
  bool Keep(const std::string& relative, const struct stat& st) {
    const CopySnapshot::Entry* entry = before_.Find(relative);
    if (entry != nullptr && entry->copy == StatKey::Of(st)) {
      next_.RecordCopyKey(relative, *entry);
      return true;
    }
    next_.RecordCopy(relative, st);
    return false;
  }

  // Whether nothing beneath the folder `fd` changed. A name added, removed
  // or renamed in it changes the folder's own times, which its parent
  // compares.
  absl::StatusOr<bool> Walk(const std::string& relative, int fd) {
    if (before_read_) before_read_(relative, fd);
    ASSIGN_OR_RETURN(std::vector<std::string> names,
                     FolderNames(fd, JoinPath(copy_, relative)));
    bool same = true;
    for (const std::string& name : names) {
      std::string child = ChildPath(relative, name);
      struct stat st;
      if (::fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) {
          same = false;
          continue;
        }
        return LastErrnoStatus(
            absl::StrCat("stat(", VisiblePath(JoinPath(copy_, child)), ")"));
      }
      bool kept = Keep(child, st);
      if (links_ != nullptr && !S_ISDIR(st.st_mode) && st.st_nlink > 1) {
        links_->insert(child);
      }
      if (S_ISDIR(st.st_mode)) {
        UniqueFd sub = OpenSubfolder(fd, name);
        if (!sub) {
          return LastErrnoStatus(
              absl::StrCat("open(", VisiblePath(JoinPath(copy_, child)), ")"));
        }
        ASSIGN_OR_RETURN(bool sub_same, Walk(child, sub.get()));
        if (kept && sub_same) {
          unchanged_->insert(child);
        } else {
          kept = false;
        }
      }
      same = same && kept;
    }
    return same;
  }

  const std::string& copy_;
  const CopySnapshot& before_;
  std::unordered_set<std::string>* unchanged_;
  const std::function<void(const std::string&, int)>& before_read_;
  std::set<std::string>* links_;
  CopySnapshot next_;
};

// What ObserveCopyPaths found of one path.
struct Seen {
  std::string path;
  bool present = false;
  struct stat st = {};
  bool named = false;  // an event named it (or it is in a named subtree)
};

// Every path beneath the open folder `fd` (`relative`), lstat'ed.
absl::Status SeeSubtree(const std::string& copy, const std::string& relative,
                        int fd, std::vector<Seen>* seen) {
  ASSIGN_OR_RETURN(std::vector<std::string> names,
                   FolderNames(fd, JoinPath(copy, relative)));
  for (const std::string& name : names) {
    Seen one;
    one.path = ChildPath(relative, name);
    one.named = true;
    if (::fstatat(fd, name.c_str(), &one.st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;
      return LastErrnoStatus(
          absl::StrCat("stat(", VisiblePath(JoinPath(copy, one.path)), ")"));
    }
    one.present = true;
    bool folder = S_ISDIR(one.st.st_mode);
    std::string path = one.path;
    seen->push_back(std::move(one));
    if (folder) {
      UniqueFd sub = OpenSubfolder(fd, name);
      if (!sub) {
        return LastErrnoStatus(
            absl::StrCat("open(", VisiblePath(JoinPath(copy, path)), ")"));
      }
      RETURN_IF_ERROR(SeeSubtree(copy, path, sub.get(), seen));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CopySnapshot> ObserveCopy(
    const std::string& copy, const CopySnapshot& before,
    std::unordered_set<std::string>* unchanged_folders,
    const std::function<void(const std::string&, int)>& before_read,
    std::set<std::string>* links) {
  Observer observer(copy, before, unchanged_folders, before_read, links);
  return observer.Run();
}

absl::Status ObserveCopyPaths(const std::string& copy, const PathSet& named,
                              std::set<std::string>* links,
                              CopySnapshot* snapshot, ObservedPaths* observed) {
  UniqueFd root(
      ::open(copy.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!root) return LastErrnoStatus(absl::StrCat("open(", copy, ")"));
  // The paths to look at: those named, the files with several links, and
  // the folder of each (its own times change with a name added or gone).
  std::set<std::string> look;
  for (const auto* set : {&named.paths, &named.subtrees}) {
    for (const std::string& path : *set) {
      look.insert(path);
      std::string name;
      look.insert(ParentPath(path, &name));
    }
  }
  for (const std::string& path : *links) look.insert(path);
  // First everything is seen, then the snapshot changes: a new link leaves
  // it as the command found it, for the walk.
  std::vector<Seen> seen;
  for (const std::string& path : look) {
    Seen one;
    one.path = path;
    one.named = named.paths.count(path) != 0 || named.subtrees.count(path) != 0;
    int at = ::fstatat(root.get(), path.empty() ? "." : path.c_str(), &one.st,
                       AT_SYMLINK_NOFOLLOW);
    if (at != 0 && errno != ENOENT && errno != ENOTDIR) {
      return LastErrnoStatus(
          absl::StrCat("stat(", VisiblePath(JoinPath(copy, path)), ")"));
    }
    one.present = at == 0;
    bool walk = one.present && S_ISDIR(one.st.st_mode) &&
                named.subtrees.count(path) != 0;
    seen.push_back(std::move(one));
    if (walk) {
      UniqueFd sub = OpenSubfolder(root.get(), path);
      if (!sub) {
        return LastErrnoStatus(
            absl::StrCat("open(", VisiblePath(JoinPath(copy, path)), ")"));
      }
      RETURN_IF_ERROR(SeeSubtree(copy, path, sub.get(), &seen));
    }
  }
  for (const Seen& one : seen) {
    if (one.present && !S_ISDIR(one.st.st_mode) && one.st.st_nlink > 1 &&
        links->count(one.path) == 0) {
      observed->new_link = true;
      return absl::OkStatus();
    }
  }
  // A folder created or moved in holds only what the walk saw.
  for (const std::string& path : named.subtrees) snapshot->Erase(path);
  for (const Seen& one : seen) {
    const CopySnapshot::Entry* entry = snapshot->Find(one.path);
    bool changed = false;
    if (!one.present) {
      if (entry != nullptr) {
        snapshot->Erase(one.path);
        changed = true;
      }
      changed = changed || one.named;
      links->erase(one.path);
    } else {
      // An event names what the command wrote, even when a write within
      // the clock tick of the last record left the lstat result as it was.
      if (one.named || entry == nullptr ||
          !(entry->copy == StatKey::Of(one.st))) {
        snapshot->RecordCopy(one.path, one.st);
        observed->newest_ctime_ns = std::max(
            observed->newest_ctime_ns, TimespecNanoseconds(one.st.st_ctim));
        changed = true;
      }
      if (!S_ISDIR(one.st.st_mode) && one.st.st_nlink > 1) {
        links->insert(one.path);
      } else {
        links->erase(one.path);
      }
    }
    if (!changed) continue;
    observed->changed.insert(one.path);
    if (one.present && S_ISDIR(one.st.st_mode)) {
      observed->touched.insert(one.path);
    }
    std::string rest = one.path;
    while (!rest.empty()) {
      std::string name;
      rest = ParentPath(rest, &name);
      if (!observed->touched.insert(rest).second) break;
    }
  }
  return absl::OkStatus();
}

}  // namespace garuda
