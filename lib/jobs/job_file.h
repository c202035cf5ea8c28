// Job files (T6): <checkout>/.garuda/jobs/<name>.json read strictly into
// garuda.jobs.JobFile, with the write scope checked entry by entry.
#ifndef GARUDA_LIB_JOBS_JOB_FILE_H_
#define GARUDA_LIB_JOBS_JOB_FILE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "proto/job.pb.h"

namespace garuda {
namespace jobs {

// Job files are small; a larger one is refused rather than read.
inline constexpr size_t kMaxJobFileBytes = 1 << 20;

struct Job {
  std::string name;  // the file's name without .json
  std::string path;  // the file read
  JobFile file;
  // No "writeScope" key in the file (a job from before scopes): commands may
  // write anywhere in the worktree, and the run's first line says so.
  bool whole_worktree = false;
};

// The line a run of a job without a scope starts with.
inline constexpr char kWholeWorktreeLine[] =
    "Commands may write anywhere in the worktree.";

// `job` is a name of .garuda/jobs/ in `checkout` ("nightly" for
// .garuda/jobs/nightly.json) or a path to a job file (it has a '/' or ends
// in .json). Returns the path; NOT_FOUND names both places looked at for a
// name.
absl::StatusOr<std::string> JobFilePath(const std::string& checkout,
                                        const std::string& job);

// A job's name goes into its branch (garuda/<name>/<time>), its worktree's
// folder and its timer's unit: one or more of [A-Za-z0-9._-], not starting
// with '.' or '-'. INVALID_ARGUMENT names it.
absl::Status CheckJobName(absl::string_view name);

// Reads and checks a job file. INVALID_ARGUMENT, starting with the path,
// for JSON or schema mistakes (the field as the file spells it), a missing
// or empty "prompt", and every refused scope entry
// ("writeScope[0]: \".\" is the whole worktree"). A scope entry is checked
// as written here; against a worktree with CheckScopeInWorktree.
absl::StatusOr<Job> ReadJobFile(const std::string& path);

// The same checks on text, `source` naming it in messages.
absl::StatusOr<Job> ParseJobFile(const std::string& text,
                                 const std::string& source);

}  // namespace jobs
}  // namespace garuda

#endif  // GARUDA_LIB_JOBS_JOB_FILE_H_
