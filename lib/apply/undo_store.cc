#include "lib/apply/undo_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>

#include "absl/random/random.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "lib/apply/journal.h"
#include "lib/apply/paths.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/home.h"
#include "lib/base/sha256.h"
#include "lib/base/status_macros.h"
#include "lib/base/visible.h"
#include "lib/changeset/beneath.h"

namespace garuda {
namespace apply_internal {

std::string NewUndoId() {
  std::time_t now = std::time(nullptr);
  struct tm utc;
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &utc);
  absl::BitGen random;
  return absl::StrFormat("%s-%04x", stamp,
                         absl::Uniform<uint32_t>(random) & 0xffff);
}

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

absl::StatusOr<std::string> WriteUndoRecord(
    const ChangeSet& change_set,
    const std::map<std::string, std::string>& base_contents, int root_fd,
    const ApplyOptions& options, const std::string& id) {
  ChangeSet inverse;
  inverse.header.set_project_root(options.project);
  inverse.header.set_source("undo");
  inverse.header.set_command(change_set.header.command());
  for (const Change& change : change_set.changes) {
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
      // Read by the conflict check, which found it matching the base; the
      // apply confirms after each exchange that this is what it replaced.
      auto kept = base_contents.find(entry.path());
      if (kept == base_contents.end()) {
        return absl::InternalError(absl::StrCat(
            "no pre-image of ", VisiblePath(entry.path()), " was read"));
      }
      undo.set_size(kept->second.size());
      undo.set_new_sha256(old.sha256());
      back.content = kept->second;
    } else if (old.type() == FILE_TYPE_SYMLINK) {
      ASSIGN_OR_RETURN(UniqueFd parent,
                       OpenParentBeneath(root_fd, entry.path()));
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
                   UndoFolder(options.undo_root, options.project));
  std::string record = JoinPath(folder, id);
  RETURN_IF_ERROR(MakeDirectories(folder, 0700));
  if (::mkdir(record.c_str(), 0700) != 0) {
    return LastErrnoStatus(absl::StrCat("mkdir(", record, ")"));
  }
  absl::Status written = [&]() -> absl::Status {
    std::string list_path = JoinPath(record, "changeset");
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
        absl::StrCat("command ", MakeVisible(change_set.header.command()))};
    if (!options.session_id.empty()) {
      lines.push_back(
          absl::StrCat("session ", MakeVisible(options.session_id)));
    }
    for (const Change& change : change_set.changes) {
      lines.push_back(absl::StrCat("path ", VisiblePath(change.entry.path())));
    }
    RETURN_IF_ERROR(WriteFileAtomically(
        JoinPath(record, "summary"),
        absl::StrCat(absl::StrJoin(lines, "\n"), "\n"), 0600));
    return SyncParentDirectory(record);
  }();
  if (!written.ok()) {
    RemoveUndoRecord(record);
    return written;
  }
  return record;
}

void RemoveUndoRecord(const std::string& record) {
  // Its files (WriteFileAtomically's temporaries too, if a write was cut
  // short), then the folder.
  absl::StatusOr<UniqueFd> folder =
      OpenFile(record, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  if (folder.ok()) {
    for (const std::string& name : ListFolderNames(folder->get())) {
      ::unlinkat(folder->get(), name.c_str(), 0);
    }
  }
  ::rmdir(record.c_str());
}

absl::StatusOr<UniqueFd> LockUndoFolder(const std::string& folder) {
  RETURN_IF_ERROR(MakeDirectories(folder, 0700));
  std::string path = JoinPath(folder, "lock");
  ASSIGN_OR_RETURN(UniqueFd fd,
                   OpenFile(path, O_RDWR | O_CREAT | O_NOFOLLOW, 0600));
  while (::flock(fd.get(), LOCK_EX) != 0) {
    if (errno != EINTR) {
      return LastErrnoStatus(absl::StrCat("flock(", path, ")"));
    }
  }
  return fd;
}

}  // namespace apply_internal

namespace {

// Until 2026-12-01 the undo folder was "<folder name>-<ProjectHash>",
// the name as it is; it is ProjectKey now, the audit's, whose name part
// replaces what is not [A-Za-z0-9._-] (and a leading '.') and stops at 64
// characters. A project whose name differs under that rule still finds the
// records it made before: they move into the new folder, the whole folder
// at once when the new one is not there yet, else record by record (ids are
// unique: times and a random part; one already there is left where it is).
// Each move is a rename within the undo store: a crash leaves every record
// in one folder or the other, whole.
void MoveRecordsOfTheOldKey(const std::string& undo_root,
                            const std::string& real,
                            const std::string& folder) {
  const std::string old_folder =
      JoinPath(undo_root, absl::StrCat(Basename(real), "-", ProjectHash(real)));
  if (old_folder == folder) return;
  struct stat old_info;
  if (::lstat(old_folder.c_str(), &old_info) != 0 ||
      !S_ISDIR(old_info.st_mode)) {
    return;
  }
  if (::rename(old_folder.c_str(), folder.c_str()) == 0) return;
  if (errno != EEXIST && errno != ENOTEMPTY) return;
  absl::StatusOr<UniqueFd> old_fd =
      OpenFile(old_folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  if (!old_fd.ok()) return;
  for (const std::string& name :
       apply_internal::ListFolderNames(old_fd->get())) {
    if (name == "lock") continue;
    const std::string target = JoinPath(folder, name);
    struct stat there;
    if (::lstat(target.c_str(), &there) == 0) continue;
    ::rename(JoinPath(old_folder, name).c_str(), target.c_str());
  }
}

}  // namespace

absl::StatusOr<std::string> UndoFolder(const std::string& undo_root,
                                       const std::string& project) {
  ASSIGN_OR_RETURN(std::string real, RealProjectRoot(project));
  std::string folder = JoinPath(undo_root, ProjectKey(real));
  MoveRecordsOfTheOldKey(undo_root, real, folder);
  return folder;
}

absl::StatusOr<std::vector<UndoRecordInfo>> ListUndoRecords(
    const std::string& undo_root, const std::string& project) {
  ASSIGN_OR_RETURN(std::string folder, UndoFolder(undo_root, project));
  std::vector<UndoRecordInfo> records;
  absl::StatusOr<UniqueFd> fd = OpenFile(folder, O_RDONLY | O_DIRECTORY);
  if (absl::IsNotFound(fd.status())) return records;
  RETURN_IF_ERROR(fd.status());
  std::vector<std::string> ids;
  for (std::string& name : apply_internal::ListFolderNames(fd->get())) {
    if (name != "lock") ids.push_back(std::move(name));
  }
  std::sort(ids.rbegin(), ids.rend());
  for (const std::string& id : ids) {
    std::string record = JoinPath(folder, id);
    // An apply still running, or interrupted and not yet recovered.
    if (::access(JoinPath(record, apply_internal::kJournalName).c_str(),
                 F_OK) == 0) {
      continue;
    }
    absl::StatusOr<std::string> summary =
        ReadFileToString(JoinPath(record, "summary"));
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
        ReadFileToString(JoinPath(record, "undone"));
    if (undone.ok())
      info.undone_by = std::string(absl::StripAsciiWhitespace(*undone));
    records.push_back(std::move(info));
  }
  return records;
}

absl::StatusOr<ApplyResult> UndoApply(const std::string& id,
                                      const ApplyOptions& options) {
  if (id.empty() || id.find('/') != std::string::npos || id[0] == '.' ||
      id == "lock") {
    return absl::InvalidArgumentError(absl::StrCat("not an undo id: ", id));
  }
  ASSIGN_OR_RETURN(std::string folder,
                   UndoFolder(options.undo_root, options.project));
  std::string record = JoinPath(folder, id);
  if (::access(JoinPath(record, apply_internal::kJournalName).c_str(), F_OK) ==
      0) {
    return absl::FailedPreconditionError(
        absl::StrCat("apply ", id,
                     " was interrupted and not recovered yet; run "
                     "garuda-applier recover"));
  }
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
