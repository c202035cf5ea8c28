// Small helpers on the '/'-separated relative paths of a change list, shared
// by the checks, the transaction and the recovery journal of lib/apply.
#ifndef GARUDA_LIB_APPLY_PATHS_H_
#define GARUDA_LIB_APPLY_PATHS_H_

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace garuda {
namespace apply_internal {

inline size_t Depth(absl::string_view path) {
  return std::count(path.begin(), path.end(), '/');
}

// "a/b/c" -> "a/b"; "c" -> "" (the root).
inline std::string Parent(absl::string_view path) {
  size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? std::string()
                                          : std::string(path.substr(0, slash));
}

inline std::string Child(absl::string_view folder, absl::string_view name) {
  return folder.empty() ? std::string(name)
                        : std::string(folder) + "/" + std::string(name);
}

// The names in the open folder `fd` (its offset untouched: read through a
// fresh descriptor); empty when it cannot be read.
inline std::vector<std::string> ListFolderNames(int fd) {
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

}  // namespace apply_internal
}  // namespace garuda

#endif  // GARUDA_LIB_APPLY_PATHS_H_
