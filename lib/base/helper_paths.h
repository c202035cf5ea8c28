// Where a Garuda program finds the Garuda programs it starts (garuda-agent
// its helpers): in one folder, where the Debian package installs them side
// by side (/usr/bin), else where the build leaves each one
// (bazel-bin/cmd/<name>/<name>), so a developer runs from the build tree.
// Before a session relies on them, each must be there and of the caller's
// own version: a helper of another release may speak another protocol or
// lock itself down by other rules.
#ifndef GARUDA_LIB_BASE_HELPER_PATHS_H_
#define GARUDA_LIB_BASE_HELPER_PATHS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace garuda {

// The folder of the running program (/proc/self/exe, links resolved).
absl::StatusOr<std::string> OwnProgramFolder();

// `dir`/`name` when it is an executable there; else `dir`/../`name`/`name`
// when that one is (the build tree: `dir` is bazel-bin/cmd/garuda-agent);
// else `dir`/`name`, which CheckHelpers then reports as missing.
std::string HelperPath(const std::string& dir, absl::string_view name);

// OK when every program in `paths` (each from HelperPath(dir, ...)) is an
// executable that answers --version with "<its name> <kGarudaVersion>".
// Else FAILED_PRECONDITION naming the first that is missing, of another
// version or no Garuda program, with the fix: reinstall the package, or
// rebuild when `dir` is in a build tree. The programs are asked in parallel
// and each has `timeout_ms` to answer.
absl::Status CheckHelpers(const std::string& dir,
                          const std::vector<std::string>& paths,
                          int timeout_ms = 10000);

}  // namespace garuda

#endif  // GARUDA_LIB_BASE_HELPER_PATHS_H_
