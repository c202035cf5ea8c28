#include "lib/apply/apply.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <map>
#include <set>

#include "absl/random/random.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/home.h"
#include "lib/base/sha256.h"
#include "lib/base/status_macros.h"
#include "lib/base/visible.h"
#include "lib/changeset/beneath.h"

namespace garuda {
namespace {

size_t Depth(absl::string_view path) {
  return std::count(path.begin(), path.end(), '/');
}

std::string Parent(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

// True when a link at `path` with `target` stays inside the root, judged
// on the text of the target (an absolute target never does).
bool LinkStaysInside(const std::string& path, const std::string& target) {
  if (target.empty() || target.front() == '/') return false;
  std::vector<std::string> stack;
  for (absl::string_view part : absl::StrSplit(Parent(path), '/')) {
    if (!part.empty()) stack.emplace_back(part);
  }
  for (absl::string_view part : absl::StrSplit(target, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (stack.empty()) return false;
      stack.pop_back();
    } else {
      stack.emplace_back(part);
    }
  }
  return true;
}

// What the project holds at an entry's path once the entry is applied.
Fingerprint NewFingerprint(const ChangeEntry& entry) {
  Fingerprint fingerprint;
  fingerprint.set_type(entry.new_type());
  switch (entry.new_type()) {
    case FILE_TYPE_REGULAR:
      fingerprint.set_mode(entry.new_mode());
      fingerprint.set_sha256(entry.new_sha256());
      break;
    case FILE_TYPE_SYMLINK:
      fingerprint.set_sha256(Sha256Bytes(entry.link_target()));
      break;
    case FILE_TYPE_DIRECTORY:
      fingerprint.set_mode(entry.new_mode());
      break;
    default:
      break;
  }
  return fingerprint;
}

std::string NewId() {
  std::time_t now = std::time(nullptr);
  struct tm utc;
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &utc);
  absl::BitGen random;
  return absl::StrFormat("%s-%04x", stamp,
                         absl::Uniform<uint32_t>(random) & 0xffff);
}

// Refusals that need no look at the project.
void CheckEntries(const ChangeSet& change_set,
                  std::vector<std::string>* problems) {
  if (change_set.summary.incomplete()) {
    problems->push_back(
        absl::StrCat("the change list is incomplete (",
                     MakeVisible(change_set.summary.incomplete_reason()),
                     "); it can only be discarded"));
  }
  for (const RefusedPath& refused : change_set.summary.refused()) {
    problems->push_back(absl::StrCat(VisiblePath(refused.path()), ": ",
                                     MakeVisible(refused.reason())));
  }
  std::map<std::string, FileType> new_types;
  for (const Change& change : change_set.changes) {
    const ChangeEntry& entry = change.entry;
    const std::string& path = entry.path();
    absl::Status valid = CheckRelativePath(path);
    if (!valid.ok()) {
      problems->push_back(std::string(valid.message()));
      continue;
    }
    std::string shown = VisiblePath(path);
    if (path == ".git" || absl::StartsWith(path, ".git/")) {
      problems->push_back(
          absl::StrCat(shown, ": git's own files are never applied"));
    }
    if (!new_types.emplace(path, entry.new_type()).second) {
      problems->push_back(absl::StrCat(shown, ": listed twice"));
    }
    switch (entry.new_type()) {
      case FILE_TYPE_ABSENT:
        if (entry.base().type() == FILE_TYPE_ABSENT) {
          problems->push_back(absl::StrCat(shown, ": deletes nothing"));
        }
        break;
      case FILE_TYPE_REGULAR:
        if (entry.new_mode() & (S_ISUID | S_ISGID)) {
          problems->push_back(
              absl::StrCat(shown, ": the setuid or setgid bit"));
        }
        if (change.content.size() != entry.size() ||
            Sha256Bytes(change.content) != entry.new_sha256()) {
          problems->push_back(absl::StrCat(
              shown, ": the content does not match its size and SHA-256"));
        }
        break;
      case FILE_TYPE_DIRECTORY:
        if (entry.new_mode() & S_ISUID) {
          problems->push_back(absl::StrCat(shown, ": the setuid bit"));
        }
        break;
      case FILE_TYPE_SYMLINK:
        if (!LinkStaysInside(path, entry.link_target())) {
          problems->push_back(
              absl::StrCat(shown, ": a link pointing out of the project (",
                           VisiblePath(entry.link_target()), ")"));
        }
        break;
      default:
        problems->push_back(
            absl::StrCat(shown, ": a special file (device, fifo, socket)"));
        break;
    }
  }
  // A path beneath another entry needs that entry to leave a folder.
  for (const auto& [path, type] : new_types) {
    if (type == FILE_TYPE_ABSENT) continue;
    for (std::string parent = Parent(path); !parent.empty();
         parent = Parent(parent)) {
      auto it = new_types.find(parent);
      if (it != new_types.end() && it->second != FILE_TYPE_DIRECTORY) {
        problems->push_back(absl::StrCat(
            VisiblePath(path), ": its folder ", VisiblePath(parent),
            " is not a folder in the change list"));
        break;
      }
    }
  }
}

enum class StepKind {
  kMovedAside,
  kExchanged,
  kPlaced,
  kMadeFolder,
  kChangedMode
};

struct Step {
  StepKind kind;
  std::string path;  // in the project
  std::string temp;  // aside or temporary name
  bool temp_in_work = false;
  uint32_t old_mode = 0;
};

class Applier {
 public:
  Applier(const ChangeSet& change_set, const ApplyOptions& options)
      : change_set_(change_set), options_(options) {}

  absl::StatusOr<ApplyResult> Run() {
    ApplyResult result;
    CheckEntries(change_set_, &result.problems);
    if (!result.problems.empty()) {
      result.outcome = ApplyOutcome::kRefused;
      return result;
    }
    ASSIGN_OR_RETURN(root_, OpenRoot(options_.project));
    RETURN_IF_ERROR(CheckProject(&result));
    if (!result.problems.empty() || options_.dry_run) return result;
    result.paths = change_set_.changes.size();
    if (change_set_.changes.empty()) return result;

    id_ = NewId();
    if (!options_.undo_root.empty()) {
      RETURN_IF_ERROR(WriteUndoRecord());
      result.undo_id = id_;
    }
    absl::Status status = Execute();
    if (!status.ok()) {
      absl::Status rollback = RollBack();
      if (!rollback.ok()) {
        return absl::DataLossError(absl::StrCat(
            "apply failed: ", status.message(),
            "; putting the project back failed too: ", rollback.message(),
            (undo_dir_.empty()
                 ? std::string()
                 : absl::StrCat("; the pre-images are in ", undo_dir_))));
      }
      if (!undo_dir_.empty()) RemoveUndoRecord();
      return absl::Status(
          status.code(),
          absl::StrCat("apply failed, the project is unchanged: ",
                       status.message()));
    }
    Commit();
    return result;
  }

 private:
  // Refusals that need the project, and the conflict check.
  absl::Status CheckProject(ApplyResult* result) {
    std::set<std::string> removed;  // paths whose current content goes away
    for (const Change& change : change_set_.changes) {
      const ChangeEntry& entry = change.entry;
      if (entry.new_type() != FILE_TYPE_DIRECTORY ||
          entry.base().type() != FILE_TYPE_DIRECTORY) {
        if (entry.base().type() != FILE_TYPE_ABSENT)
          removed.insert(entry.path());
      }
      by_path_[entry.path()] = &entry;
    }
    for (const Change& change : change_set_.changes) {
      const ChangeEntry& entry = change.entry;
      std::string shown = VisiblePath(entry.path());
      // The pre-image of a file is read once, here, and kept for the undo
      // record.
      std::string* content = nullptr;
      if (!options_.undo_root.empty() && !options_.dry_run &&
          entry.base().type() == FILE_TYPE_REGULAR) {
        content = &base_contents_[entry.path()];
      }
      absl::StatusOr<Fingerprint> now =
          ProjectFingerprint(entry.path(), content);
      if (UnderReplacedPath(entry.path())) {
        // A link or file above it that this list turns into a folder: the
        // path is new, beneath a folder the apply makes.
        Fingerprint absent;
        absent.set_type(FILE_TYPE_ABSENT);
        now = absent;
      }
      if (absl::IsFailedPrecondition(now.status())) {
        result->outcome = ApplyOutcome::kRefused;
        result->problems.push_back(
            absl::StrCat(shown, ": a write through a symbolic link (",
                         now.status().message(), ")"));
        continue;
      }
      RETURN_IF_ERROR(now.status());
      if (!SameFingerprint(*now, entry.base())) {
        if (result->outcome != ApplyOutcome::kRefused) {
          result->outcome = ApplyOutcome::kConflict;
        }
        result->conflicts.push_back(shown);
        result->problems.push_back(absl::StrCat(
            shown, ": changed in the project since the list was made (now ",
            DescribeFingerprint(*now), ", the list expected ",
            DescribeFingerprint(entry.base()), ")"));
        continue;
      }
      // A folder that goes away must hold nothing the list does not remove.
      if (entry.base().type() == FILE_TYPE_DIRECTORY &&
          removed.count(entry.path())) {
        ASSIGN_OR_RETURN(UniqueFd folder, OpenBeneath(root_.get(), entry.path(),
                                                      O_RDONLY | O_DIRECTORY));
        for (const std::string& name : ListFolder(folder.get())) {
          std::string child = absl::StrCat(entry.path(), "/", name);
          if (!removed.count(child)) {
            if (result->outcome != ApplyOutcome::kRefused) {
              result->outcome = ApplyOutcome::kConflict;
            }
            result->conflicts.push_back(shown);
            result->problems.push_back(
                absl::StrCat(shown, ": the folder holds ", VisiblePath(child),
                             ", which the change list does not remove"));
          }
        }
      }
      // A new path needs folders above it: listed ones, existing ones that
      // stay, or missing ones (made by the apply).
      if (entry.new_type() == FILE_TYPE_ABSENT) continue;
      for (std::string parent = Parent(entry.path()); !parent.empty();
           parent = Parent(parent)) {
        if (by_path_.count(parent)) break;  // checked by CheckEntries
        absl::StatusOr<Fingerprint> above = ProjectFingerprint(parent);
        if (!above.ok() && !absl::IsFailedPrecondition(above.status())) {
          return above.status();
        }
        if (!above.ok() || above->type() == FILE_TYPE_SYMLINK) {
          result->outcome = ApplyOutcome::kRefused;
          result->problems.push_back(
              absl::StrCat(shown, ": a write through the symbolic link ",
                           VisiblePath(parent)));
          break;
        }
        if (above->type() == FILE_TYPE_DIRECTORY) break;
        if (above->type() != FILE_TYPE_ABSENT) {
          if (result->outcome != ApplyOutcome::kRefused) {
            result->outcome = ApplyOutcome::kConflict;
          }
          result->conflicts.push_back(shown);
          result->problems.push_back(
              absl::StrCat(shown, ": ", VisiblePath(parent),
                           " is not a folder in the project"));
          break;
        }
      }
    }
    return absl::OkStatus();
  }

  // True when a folder above `path` is, in the project, something the list
  // replaces (a symlink or a file that becomes a folder).
  bool UnderReplacedPath(const std::string& path) const {
    for (std::string parent = Parent(path); !parent.empty();
         parent = Parent(parent)) {
      auto it = by_path_.find(parent);
      if (it != by_path_.end() &&
          it->second->base().type() != FILE_TYPE_DIRECTORY &&
          it->second->base().type() != FILE_TYPE_ABSENT) {
        return true;
      }
    }
    return false;
  }

  static std::vector<std::string> ListFolder(int fd) {
    std::vector<std::string> names;
    int copy = ::openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR* dir = copy >= 0 ? ::fdopendir(copy) : nullptr;
    if (dir == nullptr) {
      if (copy >= 0) ::close(copy);
      return names;
    }
    while (struct dirent* entry = ::readdir(dir)) {
      std::string name = entry->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    ::closedir(dir);
    return names;
  }

  // The undo record: the inverse change list, with the pre-image of every
  // path this apply replaces or deletes, written and synced before the
  // project is touched.
  absl::Status WriteUndoRecord() {
    ChangeSet inverse;
    inverse.header.set_project_root(options_.project);
    inverse.header.set_source("undo");
    inverse.header.set_command(change_set_.header.command());
    for (const Change& change : change_set_.changes) {
      const ChangeEntry& entry = change.entry;
      Change back;
      ChangeEntry& undo = back.entry;
      undo.set_path(entry.path());
      *undo.mutable_base() = NewFingerprint(entry);
      const Fingerprint& old = entry.base();
      undo.set_new_type(old.type());
      switch (entry.kind()) {
        case CHANGE_KIND_ADDED:
          undo.set_kind(CHANGE_KIND_DELETED);
          break;
        case CHANGE_KIND_DELETED:
          undo.set_kind(CHANGE_KIND_ADDED);
          break;
        default:
          undo.set_kind(entry.kind());
      }
      if (old.type() == FILE_TYPE_REGULAR) {
        undo.set_new_mode(old.mode());
        // Read by the conflict check, which found it matching the base.
        auto kept = base_contents_.find(entry.path());
        if (kept == base_contents_.end()) {
          return absl::InternalError(absl::StrCat(
              "no pre-image of ", VisiblePath(entry.path()), " was read"));
        }
        undo.set_size(kept->second.size());
        undo.set_new_sha256(old.sha256());
        back.content = std::move(kept->second);
      } else if (old.type() == FILE_TYPE_SYMLINK) {
        ASSIGN_OR_RETURN(UniqueFd parent,
                         OpenParentBeneath(root_.get(), entry.path()));
        std::string target(PATH_MAX, '\0');
        ssize_t n = ::readlinkat(parent.get(), Basename(entry.path()).c_str(),
                                 target.data(), target.size());
        if (n < 0) {
          return LastErrnoStatus(
              absl::StrCat("readlink(", VisiblePath(entry.path()), ")"));
        }
        target.resize(static_cast<size_t>(n));
        undo.set_link_target(target);
      } else if (old.type() == FILE_TYPE_DIRECTORY) {
        undo.set_new_mode(old.mode());
      }
      inverse.changes.push_back(std::move(back));
    }
    ASSIGN_OR_RETURN(std::string folder,
                     UndoFolder(options_.undo_root, options_.project));
    undo_dir_ = JoinPath(folder, id_);
    RETURN_IF_ERROR(MakeDirectories(folder, 0700));
    if (::mkdir(undo_dir_.c_str(), 0700) != 0) {
      return LastErrnoStatus(absl::StrCat("mkdir(", undo_dir_, ")"));
    }
    std::string list_path = JoinPath(undo_dir_, "changeset");
    std::string temp = list_path + ".tmp";
    {
      ASSIGN_OR_RETURN(UniqueFd fd,
                       OpenFile(temp, O_WRONLY | O_CREAT | O_EXCL, 0600));
      RETURN_IF_ERROR(WriteChangeSet(inverse, fd.get(), temp));
      if (::fsync(fd.get()) != 0)
        return LastErrnoStatus(absl::StrCat("fsync(", temp, ")"));
    }
    if (::rename(temp.c_str(), list_path.c_str()) != 0) {
      return LastErrnoStatus(absl::StrCat("rename(", temp, ")"));
    }
    std::vector<std::string> lines = {
        absl::StrCat("command ", MakeVisible(change_set_.header.command()))};
    if (!options_.session_id.empty()) {
      lines.push_back(
          absl::StrCat("session ", MakeVisible(options_.session_id)));
    }
    for (const Change& change : change_set_.changes) {
      lines.push_back(absl::StrCat("path ", VisiblePath(change.entry.path())));
    }
    RETURN_IF_ERROR(WriteFileAtomically(
        JoinPath(undo_dir_, "summary"),
        absl::StrCat(absl::StrJoin(lines, "\n"), "\n"), 0600));
    return SyncParentDirectory(undo_dir_);
  }

  void RemoveUndoRecord() {
    for (const char* name : {"changeset", "summary"}) {
      ::unlink(JoinPath(undo_dir_, name).c_str());
    }
    ::rmdir(undo_dir_.c_str());
  }

  absl::StatusOr<UniqueFd> Folder(const std::string& path) {
    return OpenBeneath(root_.get(), path, O_RDONLY | O_DIRECTORY);
  }

  // Folders opened once beneath the root (no link on the way) and kept
  // open: 10 000 files in 100 folders need 100 opens, not 70 000. An fd
  // follows its folder, so a folder moved aside is forgotten at once
  // (ForgetFolders), with everything beneath it.
  absl::StatusOr<int> CachedFolder(const std::string& path) {
    auto it = folders_.find(path);
    if (it != folders_.end()) return it->second.get();
    ASSIGN_OR_RETURN(UniqueFd fd, Folder(path));
    int raw = fd.get();
    folders_.emplace(path, std::move(fd));
    return raw;
  }

  void ForgetFolders(const std::string& path) {
    for (auto it = folders_.lower_bound(path); it != folders_.end();) {
      if (it->first != path && !absl::StartsWith(it->first, path + "/")) break;
      it = folders_.erase(it);
    }
  }

  // FingerprintBeneath through the folder cache: a missing parent, or one
  // that is not a folder, means absent; a symlinked one is
  // FAILED_PRECONDITION.
  absl::StatusOr<Fingerprint> ProjectFingerprint(
      const std::string& path, std::string* content = nullptr) {
    absl::StatusOr<int> parent = CachedFolder(Parent(path));
    if (absl::IsNotFound(parent.status())) {
      Fingerprint absent;
      absent.set_type(FILE_TYPE_ABSENT);
      return absent;
    }
    RETURN_IF_ERROR(parent.status());
    return FingerprintAt(*parent, Basename(path), path, content);
  }

  absl::Status Stepped(Step step) {
    steps_.push_back(std::move(step));
    if (options_.after_step)
      return options_.after_step(static_cast<int>(steps_.size()));
    return absl::OkStatus();
  }

  // Missing folders above `path` are made (0755), beneath the root.
  absl::Status MakeParents(const std::string& path) {
    std::vector<std::string> missing;
    for (std::string parent = Parent(path); !parent.empty();
         parent = Parent(parent)) {
      if (folders_.count(parent)) break;
      ASSIGN_OR_RETURN(Fingerprint above, ProjectFingerprint(parent));
      if (above.type() == FILE_TYPE_DIRECTORY) break;
      if (above.type() != FILE_TYPE_ABSENT) {
        return absl::FailedPreconditionError(
            absl::StrCat(VisiblePath(parent), " is not a folder"));
      }
      missing.push_back(parent);
    }
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
      ASSIGN_OR_RETURN(int parent, CachedFolder(Parent(*it)));
      if (::mkdirat(parent, Basename(*it).c_str(), 0755) != 0) {
        return LastErrnoStatus(absl::StrCat("mkdir(", VisiblePath(*it), ")"));
      }
      RETURN_IF_ERROR(Stepped({StepKind::kMadeFolder, *it}));
    }
    return absl::OkStatus();
  }

  // Writes the new content of `entry` to a synced temporary file (or makes
  // the temporary link) in `folder`, named `name`.
  absl::Status WriteTemporary(const Change& change, int folder,
                              const std::string& name) {
    const ChangeEntry& entry = change.entry;
    if (entry.new_type() == FILE_TYPE_SYMLINK) {
      if (::symlinkat(entry.link_target().c_str(), folder, name.c_str()) != 0) {
        return LastErrnoStatus(
            absl::StrCat("symlink(", VisiblePath(entry.path()), ")"));
      }
      return absl::OkStatus();
    }
    int fd =
        ::openat(folder, name.c_str(),
                 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
      return LastErrnoStatus(absl::StrCat("create a temporary file for ",
                                          VisiblePath(entry.path())));
    }
    UniqueFd file(fd);
    absl::Status status = WriteAll(file.get(), change.content);
    if (status.ok() && ::fchmod(file.get(), entry.new_mode()) != 0) {
      status = LastErrnoStatus("fchmod");
    }
    if (status.ok() && SyncEach() && ::fsync(file.get()) != 0) {
      status = LastErrnoStatus("fsync");
    }
    if (!status.ok()) {
      return absl::Status(status.code(), absl::StrCat(VisiblePath(entry.path()),
                                                      ": ", status.message()));
    }
    return absl::OkStatus();
  }

  absl::Status Execute() {
    std::string work_name = absl::StrCat(".garuda-apply-", id_);
    if (::mkdirat(root_.get(), work_name.c_str(), 0700) != 0) {
      return LastErrnoStatus(
          absl::StrCat("mkdir(", work_name, ") in the project"));
    }
    work_name_ = work_name;
    ASSIGN_OR_RETURN(work_, Folder(work_name_));

    std::vector<const Change*> order;
    for (const Change& change : change_set_.changes) order.push_back(&change);

    // New contents first, while nothing in the project has moved: beside
    // the target when its folder exists and stays, else in the work folder.
    int counter = 0;
    for (const Change* change : order) {
      const ChangeEntry& entry = change->entry;
      if (entry.new_type() != FILE_TYPE_REGULAR &&
          entry.new_type() != FILE_TYPE_SYMLINK) {
        continue;
      }
      std::string name = absl::StrCat(".garuda-new-", id_, "-", ++counter);
      std::string parent = Parent(entry.path());
      bool beside = true;
      for (std::string p = parent; !p.empty(); p = Parent(p)) {
        auto it = by_path_.find(p);
        if (it != by_path_.end() &&
            it->second->base().type() != FILE_TYPE_DIRECTORY) {
          beside = false;
        }
      }
      absl::StatusOr<int> folder =
          beside ? CachedFolder(parent)
                 : absl::StatusOr<int>(absl::NotFoundError(""));
      if (!folder.ok() && !absl::IsNotFound(folder.status()))
        return folder.status();
      bool in_work = !folder.ok();
      RETURN_IF_ERROR(
          WriteTemporary(*change, in_work ? work_.get() : *folder, name));
      temps_[&entry] = {name, in_work};
      temp_cleanup_.push_back({in_work ? work_name_ : parent, name});
    }
    // Every new content on disk before the first rename: for a large list
    // one syncfs of the project's file system instead of one fsync per file
    // (10 000 fsyncs cost a minute on ext4); a small one was synced file by
    // file above (a syncfs also waits for every other writer of that file
    // system: seconds on a busy disk, for one file).
    if (!SyncEach() && ::syncfs(root_.get()) != 0) {
      return LastErrnoStatus("syncfs(the project's file system)");
    }

    // Removals, deepest first: moved aside into the work folder, so that
    // putting them back is a rename.
    std::sort(order.begin(), order.end(), [](const Change* a, const Change* b) {
      size_t da = Depth(a->entry.path()), db = Depth(b->entry.path());
      return da != db ? da > db : a->entry.path() > b->entry.path();
    });
    for (const Change* change : order) {
      const ChangeEntry& entry = change->entry;
      FileType base = entry.base().type();
      FileType now = entry.new_type();
      if (base == FILE_TYPE_ABSENT) continue;
      if (base == now) continue;  // replaced in place, or a folder that stays
      ASSIGN_OR_RETURN(int parent, CachedFolder(Parent(entry.path())));
      std::string aside = absl::StrCat("old-", ++counter);
      if (::renameat2(parent, Basename(entry.path()).c_str(), work_.get(),
                      aside.c_str(), RENAME_NOREPLACE) != 0) {
        return LastErrnoStatus(
            absl::StrCat("move aside ", VisiblePath(entry.path())));
      }
      ForgetFolders(entry.path());
      RETURN_IF_ERROR(
          Stepped({StepKind::kMovedAside, entry.path(), aside, true}));
    }

    // Folders and new paths, shallowest first.
    std::reverse(order.begin(), order.end());
    for (const Change* change : order) {
      const ChangeEntry& entry = change->entry;
      FileType base = entry.base().type();
      switch (entry.new_type()) {
        case FILE_TYPE_DIRECTORY: {
          if (base == FILE_TYPE_DIRECTORY) {
            if (entry.base().mode() == entry.new_mode()) break;
            ASSIGN_OR_RETURN(UniqueFd folder, Folder(entry.path()));
            if (::fchmod(folder.get(), entry.new_mode()) != 0) {
              return LastErrnoStatus(
                  absl::StrCat("chmod(", VisiblePath(entry.path()), ")"));
            }
            Step step{StepKind::kChangedMode, entry.path()};
            step.old_mode = entry.base().mode();
            RETURN_IF_ERROR(Stepped(step));
            break;
          }
          RETURN_IF_ERROR(MakeParents(entry.path()));
          ASSIGN_OR_RETURN(int parent, CachedFolder(Parent(entry.path())));
          if (::mkdirat(parent, Basename(entry.path()).c_str(), 0700) != 0) {
            return LastErrnoStatus(
                absl::StrCat("mkdir(", VisiblePath(entry.path()), ")"));
          }
          RETURN_IF_ERROR(Stepped({StepKind::kMadeFolder, entry.path()}));
          ASSIGN_OR_RETURN(UniqueFd folder, Folder(entry.path()));
          if (::fchmod(folder.get(), entry.new_mode()) != 0) {
            return LastErrnoStatus(
                absl::StrCat("chmod(", VisiblePath(entry.path()), ")"));
          }
          break;
        }
        case FILE_TYPE_REGULAR:
        case FILE_TYPE_SYMLINK: {
          RETURN_IF_ERROR(MakeParents(entry.path()));
          const auto& [temp, in_work] = temps_.at(&entry);
          ASSIGN_OR_RETURN(int parent, CachedFolder(Parent(entry.path())));
          int temp_folder = in_work ? work_.get() : parent;
          bool replace = base == entry.new_type();
          std::string name = Basename(entry.path());
          if (::renameat2(temp_folder, temp.c_str(), parent, name.c_str(),
                          replace ? RENAME_EXCHANGE : RENAME_NOREPLACE) != 0) {
            return LastErrnoStatus(absl::StrCat(replace ? "replace " : "place ",
                                                VisiblePath(entry.path())));
          }
          RETURN_IF_ERROR(
              Stepped({replace ? StepKind::kExchanged : StepKind::kPlaced,
                       entry.path(), temp, in_work}));
          break;
        }
        default:
          break;
      }
    }

    // Make the renames durable before the apply counts as done: the
    // folders whose entries changed, or the whole file system.
    if (!SyncEach()) {
      if (::syncfs(root_.get()) != 0) {
        return LastErrnoStatus("syncfs(the project's file system)");
      }
      return absl::OkStatus();
    }
    std::set<std::string> folders = {""};
    for (const Change& change : change_set_.changes) {
      for (std::string p = Parent(change.entry.path()); !p.empty();
           p = Parent(p)) {
        folders.insert(p);
      }
    }
    for (const std::string& folder : folders) {
      absl::StatusOr<int> fd = CachedFolder(folder);
      if (absl::IsNotFound(fd.status())) continue;  // a folder removed
      RETURN_IF_ERROR(fd.status());
      if (::fsync(*fd) != 0) {
        return LastErrnoStatus(
            absl::StrCat("fsync(", VisiblePath(folder), ")"));
      }
    }
    if (::fsync(work_.get()) != 0) return LastErrnoStatus("fsync(work folder)");
    return absl::OkStatus();
  }

  // A list this small is synced file by file and folder by folder.
  bool SyncEach() const { return change_set_.changes.size() <= kSyncEachLimit; }
  static constexpr size_t kSyncEachLimit = 32;

  // Undoes the steps, newest first.
  absl::Status RollBack() {
    absl::Status first;
    auto note = [&](absl::Status status) {
      if (!status.ok() && first.ok()) first = status;
    };
    for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) {
      const Step& step = *it;
      absl::StatusOr<UniqueFd> parent = Folder(Parent(step.path));
      if (!parent.ok()) {
        note(parent.status());
        continue;
      }
      std::string name = Basename(step.path);
      int temp_folder = step.temp_in_work ? work_.get() : parent->get();
      int result = 0;
      switch (step.kind) {
        case StepKind::kMovedAside:
          result = ::renameat2(work_.get(), step.temp.c_str(), parent->get(),
                               name.c_str(), RENAME_NOREPLACE);
          break;
        case StepKind::kExchanged:
          result = ::renameat2(temp_folder, step.temp.c_str(), parent->get(),
                               name.c_str(), RENAME_EXCHANGE);
          break;
        case StepKind::kPlaced:
          result = ::renameat2(parent->get(), name.c_str(), temp_folder,
                               step.temp.c_str(), RENAME_NOREPLACE);
          break;
        case StepKind::kMadeFolder:
          result = ::unlinkat(parent->get(), name.c_str(), AT_REMOVEDIR);
          break;
        case StepKind::kChangedMode: {
          absl::StatusOr<UniqueFd> folder = Folder(step.path);
          result = folder.ok() ? ::fchmod(folder->get(), step.old_mode) : -1;
          break;
        }
      }
      if (result != 0) {
        note(
            LastErrnoStatus(absl::StrCat("put back ", VisiblePath(step.path))));
      }
    }
    RemoveTemporaries();
    return first;
  }

  void RemoveTemporaries() {
    for (const auto& [folder, name] : temp_cleanup_) {
      absl::StatusOr<UniqueFd> fd = Folder(folder);
      if (fd.ok()) ::unlinkat(fd->get(), name.c_str(), 0);
    }
    RemoveWorkFolder();
  }

  void RemoveWorkFolder() {
    if (work_) {
      for (const std::string& name : ListFolder(work_.get())) {
        if (::unlinkat(work_.get(), name.c_str(), 0) != 0) {
          ::unlinkat(work_.get(), name.c_str(), AT_REMOVEDIR);
        }
      }
      ::unlinkat(root_.get(), work_name_.c_str(), AT_REMOVEDIR);
    }
  }

  // The apply is done: what was moved aside or swapped out goes away.
  void Commit() {
    for (const Step& step : steps_) {
      if (step.kind == StepKind::kExchanged && !step.temp_in_work) {
        absl::StatusOr<int> parent = CachedFolder(Parent(step.path));
        if (parent.ok()) ::unlinkat(*parent, step.temp.c_str(), 0);
      }
    }
    // Every temporary name was renamed into place (and what an exchange
    // swapped out is gone above), so only the work folder is left. Aside
    // folders were emptied before they moved (deepest first).
    folders_.clear();
    RemoveWorkFolder();
  }

  const ChangeSet& change_set_;
  const ApplyOptions& options_;
  UniqueFd root_;
  UniqueFd work_;
  std::string work_name_;
  std::string id_;
  std::string undo_dir_;
  std::map<std::string, const ChangeEntry*> by_path_;
  std::map<const ChangeEntry*, std::pair<std::string, bool>> temps_;
  std::vector<std::pair<std::string, std::string>> temp_cleanup_;
  std::vector<Step> steps_;
  std::map<std::string, UniqueFd> folders_;           // see CachedFolder
  std::map<std::string, std::string> base_contents_;  // pre-images for undo
};

}  // namespace

absl::StatusOr<ApplyResult> ApplyChangeSet(const ChangeSet& change_set,
                                           const ApplyOptions& options) {
  Applier applier(change_set, options);
  return applier.Run();
}

absl::StatusOr<std::string> UndoFolder(const std::string& undo_root,
                                       const std::string& project) {
  ASSIGN_OR_RETURN(std::string real, RealProjectRoot(project));
  return JoinPath(undo_root, ProjectKey(real));
}

absl::StatusOr<std::vector<UndoRecordInfo>> ListUndoRecords(
    const std::string& undo_root, const std::string& project) {
  ASSIGN_OR_RETURN(std::string folder, UndoFolder(undo_root, project));
  std::vector<UndoRecordInfo> records;
  DIR* dir = ::opendir(folder.c_str());
  if (dir == nullptr) {
    if (errno == ENOENT) return records;
    return LastErrnoStatus(absl::StrCat("opendir(", folder, ")"));
  }
  std::vector<std::string> ids;
  while (struct dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") ids.push_back(name);
  }
  ::closedir(dir);
  std::sort(ids.rbegin(), ids.rend());
  for (const std::string& id : ids) {
    absl::StatusOr<std::string> summary =
        ReadFileToString(JoinPath(JoinPath(folder, id), "summary"));
    if (!summary.ok()) continue;  // an unfinished record
    UndoRecordInfo info;
    info.id = id;
    for (absl::string_view line : absl::StrSplit(*summary, '\n')) {
      if (absl::ConsumePrefix(&line, "path ")) info.paths.emplace_back(line);
      if (absl::ConsumePrefix(&line, "command "))
        info.command = std::string(line);
      if (absl::ConsumePrefix(&line, "session "))
        info.session_id = std::string(line);
    }
    absl::StatusOr<std::string> undone =
        ReadFileToString(JoinPath(JoinPath(folder, id), "undone"));
    if (undone.ok())
      info.undone_by = std::string(absl::StripAsciiWhitespace(*undone));
    records.push_back(std::move(info));
  }
  return records;
}

absl::StatusOr<ApplyResult> UndoApply(const std::string& id,
                                      const ApplyOptions& options) {
  if (id.empty() || id.find('/') != std::string::npos || id[0] == '.') {
    return absl::InvalidArgumentError(absl::StrCat("not an undo id: ", id));
  }
  ASSIGN_OR_RETURN(std::string folder,
                   UndoFolder(options.undo_root, options.project));
  std::string record = JoinPath(folder, id);
  absl::StatusOr<UniqueFd> fd =
      OpenFile(JoinPath(record, "changeset"), O_RDONLY);
  if (absl::IsNotFound(fd.status())) {
    return absl::NotFoundError(absl::StrCat(
        "no undo record ", id, " for ", options.project, " (see undo --list)"));
  }
  RETURN_IF_ERROR(fd.status());
  ASSIGN_OR_RETURN(ChangeSet inverse,
                   ReadChangeSet(fd->get(), JoinPath(record, "changeset")));
  inverse.header.set_command(absl::StrCat("undo ", id));
  ASSIGN_OR_RETURN(ApplyResult result, ApplyChangeSet(inverse, options));
  if (result.outcome == ApplyOutcome::kApplied && !options.dry_run) {
    RETURN_IF_ERROR(WriteFileAtomically(
        JoinPath(record, "undone"), absl::StrCat(result.undo_id, "\n"), 0600));
  }
  return result;
}

}  // namespace garuda
