// The project folder as the read-only tools see it: every path resolved by
// the kernel beneath the root (openat2 RESOLVE_BENEATH), so neither "..",
// an absolute path elsewhere, nor a symbolic link pointing out reaches a
// file outside it.
#ifndef GARUDA_LIB_TOOLS_PROJECT_H_
#define GARUDA_LIB_TOOLS_PROJECT_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "lib/base/unique_fd.h"
#include "lib/changeset/rules.h"

namespace garuda {

struct OpenedPath {
  UniqueFd fd;
  // Where the kernel arrived, relative to the root ("" for the root), after
  // links inside the project: what permission rules are matched against.
  std::string relative;
  bool is_folder = false;
};

class Project {
 public:
  // `root` must be a folder; it is resolved once (realpath).
  static absl::StatusOr<std::unique_ptr<Project>> Open(const std::string& root);

  const std::string& root() const { return root_; }
  int fd() const { return root_fd_.get(); }
  IgnoreRules& ignore_rules() { return *ignore_; }

  // A path the model wrote (relative to the root, or absolute beneath it:
  // beneath the real root or the root as it was given to Open),
  // normalized without touching the disk. Errors name the path and say it
  // is outside the project.
  absl::StatusOr<std::string> Relative(absl::string_view path) const;

  // Opens a file or folder for reading. Links are followed only while they
  // stay beneath the root; a FIFO or device is not opened for reading
  // (O_NONBLOCK; the caller checks the type).
  absl::StatusOr<OpenedPath> OpenForRead(absl::string_view path) const;

  // Calls `visit` for each path beneath the folder `start` (relative, from
  // OpenForRead), depth first in name order, without .git, files git
  // ignores, or anything reached through a link (a link is listed, never
  // followed). Stops after `limit` paths and returns false then.
  // `visit(relative, dir_fd, name, is_regular)`.
  absl::StatusOr<bool> Walk(
      const OpenedPath& start, size_t limit,
      const std::function<void(const std::string& relative, int dir_fd,
                               const std::string& name, bool is_regular)>&
          visit);

 private:
  Project() = default;
  std::string root_;
  std::string given_root_;  // as the caller named it, when absolute
  UniqueFd root_fd_;
  std::unique_ptr<IgnoreRules> ignore_;
};

}  // namespace garuda

#endif  // GARUDA_LIB_TOOLS_PROJECT_H_
