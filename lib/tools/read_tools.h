// The read-only tools: read_file, list_files, grep. They read beneath the
// project root only (lib/tools/project.h) and change nothing. Results are
// formatted text; the caller caps them (CapToolResult). An error's message
// is written for the model.
#ifndef GARUDA_LIB_TOOLS_READ_TOOLS_H_
#define GARUDA_LIB_TOOLS_READ_TOOLS_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "lib/tools/definitions.h"
#include "lib/tools/project.h"

namespace garuda {

inline constexpr size_t kListLimit = 50000;  // paths walked
inline constexpr size_t kGrepMatchLimit = 2000;
inline constexpr size_t kReadFileBytesLimit = 64 << 20;

// Numbered lines "     1\tfirst line", from `offset` for `limit` lines,
// and a last line saying how many lines follow when there are more.
absl::StatusOr<std::string> ReadFileTool(const Project& project,
                                         const ReadFileInput& input);

// Files for which `hidden(relative)` is true are left out of a listing or
// a search, as if absent (e.g. those a deny rule covers).
using HiddenPredicate = std::function<bool(const std::string& relative)>;

// One path per line, relative to the project root, sorted.
absl::StatusOr<std::string> ListFilesTool(Project& project,
                                          const ListFilesInput& input,
                                          const HiddenPredicate& hidden = {});

// "path:line: text" per matching line.
absl::StatusOr<std::string> GrepTool(Project& project, const GrepInput& input,
                                     const HiddenPredicate& hidden = {});

// list_files' and grep's glob: matched against the path relative to the
// searched folder; a glob without '/' against the file name alone.
bool MatchToolGlob(absl::string_view glob, absl::string_view relative);

}  // namespace garuda

#endif  // GARUDA_LIB_TOOLS_READ_TOOLS_H_
