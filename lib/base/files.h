// Small file helpers that every program needs, each reporting the path it
// failed on.
#ifndef GARUDA_LIB_BASE_FILES_H_
#define GARUDA_LIB_BASE_FILES_H_

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

// The whole content of `path`.
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

// The user's home folder: $HOME, else the password database.
absl::StatusOr<std::string> HomeDirectory();

}  // namespace garuda

#endif  // GARUDA_LIB_BASE_FILES_H_
