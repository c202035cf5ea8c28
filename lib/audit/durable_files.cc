#include "lib/audit/durable_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <set>

#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"

namespace garuda {

DurableFiles::~DurableFiles() {
  for (const File& file : files_) ::unlink(file.temporary.c_str());
}

absl::Status DurableFiles::Add(const std::string& path,
                               absl::string_view content, mode_t mode) {
  File file;
  file.path = path;
  file.temporary = absl::StrCat(path, ".tmp");
  ASSIGN_OR_RETURN(
      file.fd,
      OpenFile(file.temporary,
               O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode));
  // Created by someone else with another mode: ours wins before the rename.
  if (::fchmod(file.fd.get(), mode) != 0) {
    return LastErrnoStatus(absl::StrCat("fchmod(", file.temporary, ")"));
  }
  RETURN_IF_ERROR(WriteAll(file.fd.get(), content));
  files_.push_back(std::move(file));
  return absl::OkStatus();
}

void DurableFiles::AddSync(int fd, const std::string& path) {
  syncs_.emplace_back(fd, path);
}

absl::Status DurableFiles::Commit() {
  // Without the fsync before the rename a power failure can leave the new
  // name on an empty or partial file; without the folder's after it, the
  // old file can come back.
  //
  // Writeback of every file starts first, so that their writes reach the
  // disk together instead of one fsync after another (and on a journaling
  // file system the first fsync's commit can carry them all). Only a hint:
  // the fsyncs below are what make them durable.
  for (File& file : files_) {
    (void)::sync_file_range(file.fd.get(), 0, 0, SYNC_FILE_RANGE_WRITE);
  }
  for (const auto& [fd, path] : syncs_) {
    (void)::sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
  }
  for (File& file : files_) {
    if (::fsync(file.fd.get()) != 0) {
      return LastErrnoStatus(absl::StrCat("fsync(", file.temporary, ")"));
    }
    file.fd.Reset();
  }
  for (const auto& [fd, path] : syncs_) {
    if (::fdatasync(fd) != 0) {
      return LastErrnoStatus(absl::StrCat("fdatasync(", path, ")"));
    }
  }
  syncs_.clear();
  std::set<std::string> folders;
  for (const File& file : files_) {
    if (::rename(file.temporary.c_str(), file.path.c_str()) != 0) {
      return LastErrnoStatus(
          absl::StrCat("rename(", file.temporary, ", ", file.path, ")"));
    }
    folders.insert(Dirname(file.path));
  }
  files_.clear();
  for (const std::string& folder : folders) {
    ASSIGN_OR_RETURN(UniqueFd fd,
                     OpenFile(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (::fsync(fd.get()) != 0) {
      return LastErrnoStatus(absl::StrCat("fsync(", folder, ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace garuda
