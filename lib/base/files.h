// Small file helpers that every program needs, each reporting the path it
// failed on.
#ifndef GARUDA_LIB_BASE_FILES_H_
#define GARUDA_LIB_BASE_FILES_H_

#include <fcntl.h>
#include <sys/types.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/base/unique_fd.h"

namespace garuda {

// open(2) with O_CLOEXEC added, retried on EINTR.
absl::StatusOr<UniqueFd> OpenFile(const std::string& path, int flags,
                                  mode_t mode = 0);

// What a file we read must be: a regular file of at most `max_bytes`.
struct RegularFileOptions {
  // Links are refused by default (O_NOFOLLOW on the last component), so a
  // checkpoint or a project's settings linked to /etc/passwd or /dev/zero is
  // never opened. The person's own dotfiles (~/.garuda/policy.json,
  // /etc/garuda/policy.json) may be links; the target must still be a
  // regular file.
  bool follow_links = false;
  // More than this is an error (RESOURCE_EXHAUSTED) naming the file and the
  // cap; nothing past the cap is read.
  size_t max_bytes = size_t{1} << 30;
};

// The caps of the files Garuda reads (docs/audit.md, docs/budget.md,
// docs/lockdown.md say them too).
inline constexpr size_t kMaxSettingsFileBytes = size_t{4} << 20;  // JSON
inline constexpr size_t kMaxJournalFileBytes = size_t{256} << 20;

// Opens `path` for reading without blocking and without side effects on a
// special file: the type is looked at before the open (a device is never
// opened), the open has O_NONBLOCK (a FIFO cannot hang it) and O_NOFOLLOW
// (unless options.follow_links), and fstat must then say "regular file".
// `flags` may add O_RDWR, O_APPEND, O_CREAT... (O_NONBLOCK is cleared again
// once the file is known to be regular). Anything else is
// FAILED_PRECONDITION: "<path> is a FIFO (named pipe), not a regular file".
absl::StatusOr<UniqueFd> OpenRegularFile(const std::string& path,
                                         const RegularFileOptions& options = {},
                                         int flags = O_RDONLY, mode_t mode = 0);

// FAILED_PRECONDITION unless `fd` is a regular file ("<path> is a ...").
absl::Status CheckRegularFile(int fd, const std::string& path);

// Reads what is left on `fd` (a regular file) up to `max_bytes`; more is
// RESOURCE_EXHAUSTED naming `path` and the cap.
absl::StatusOr<std::string> ReadUpTo(int fd, const std::string& path,
                                     size_t max_bytes);

// OpenRegularFile + ReadUpTo: the whole content of a regular file.
absl::StatusOr<std::string> ReadRegularFile(
    const std::string& path, const RegularFileOptions& options = {});

// "a FIFO (named pipe)", "a character device", "a symbolic link", "a
// folder"... for messages.
const char* FileTypeName(mode_t mode);

// The whole content of `path`, which must be a regular file (links are
// followed; at most 1 GiB). For files the person or the system owns; use
// ReadRegularFile for anything a project, a log or a journal could hold.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);

// Reads everything left on `fd` (a pipe or file) until end of file.
absl::StatusOr<std::string> ReadAll(int fd);

// Writes all of `data`, retrying short writes and EINTR.
absl::Status WriteAll(int fd, absl::string_view data);

// Reads exactly `size` bytes. End of file before that is OUT_OF_RANGE when
// nothing was read, DATA_LOSS ("truncated") when part was.
absl::Status ReadExact(int fd, void* buffer, size_t size);

// Writes `path` so that a reader sees the old content or the new, never a
// mix, even after a crash: a temporary file beside it, fsync, rename, fsync
// of the folder.
absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view content, mode_t mode);

// mkdir -p with `mode` for the folders it creates. An existing path that is
// not a folder is an error.
absl::Status MakeDirectories(const std::string& path, mode_t mode);

// fsync of the folder that holds `path`, so that a rename or a new file in
// it survives a crash.
absl::Status SyncParentDirectory(const std::string& path);

// The folder part of `path` ("a/b/c" -> "a/b", "c" -> ".").
std::string Dirname(absl::string_view path);
// The last component of `path`.
std::string Basename(absl::string_view path);
// a + "/" + b, without doubling the slash.
std::string JoinPath(absl::string_view a, absl::string_view b);

// `path` made absolute with every link resolved (realpath(3)); it must
// exist. The error has errno's code and says "<what> <path>: <reason>"
// ("project folder /src/x: No such file or directory").
absl::StatusOr<std::string> RealPath(const std::string& path,
                                     absl::string_view what);

// The user's home folder: $HOME, else the password database.
absl::StatusOr<std::string> HomeDirectory();

}  // namespace garuda

#endif  // GARUDA_LIB_BASE_FILES_H_
