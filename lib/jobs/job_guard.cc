#include "lib/jobs/job_guard.h"

#include <sys/stat.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"
#include "lib/changeset/beneath.h"
#include "lib/jobs/job_file.h"
#include "lib/jobs/scope.h"

namespace garuda {
namespace jobs {

std::string ScopeLine(bool whole_worktree,
                      const std::vector<std::string>& scope) {
  if (whole_worktree) return kWholeWorktreeLine;
  if (scope.empty()) return "Commands may write nothing in the worktree.";
  return absl::StrCat("Commands may write only: ", absl::StrJoin(scope, ", "),
                      ".");
}

namespace {

// The one line of a small git pointer file, without its line end; not
// through a link.
absl::StatusOr<std::string> ReadPointerFile(const std::string& path) {
  RegularFileOptions options;
  options.max_bytes = 4096;
  ASSIGN_OR_RETURN(std::string text, ReadRegularFile(path, options));
  return std::string(absl::StripTrailingAsciiWhitespace(text));
}

}  // namespace

absl::StatusOr<std::string> RepositoryGitDir(const std::string& worktree) {
  const std::string pointer = JoinPath(worktree, ".git");
  struct stat st;
  if (::lstat(pointer.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return absl::NotFoundError(absl::StrCat(pointer, " is not a worktree's .git file"));
  }
  ASSIGN_OR_RETURN(const std::string text, ReadPointerFile(pointer));
  absl::string_view line = text;
  if (!absl::ConsumePrefix(&line, "gitdir: ") || line.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(pointer, ": does not start with \"gitdir: \""));
  }
  auto beneath = [](absl::string_view folder, absl::string_view path) {
    return absl::StartsWith(path, "/") ? std::string(path) : JoinPath(folder, path);
  };
  const std::string own = beneath(worktree, line);
  std::string common = own;
  absl::StatusOr<std::string> commondir = ReadPointerFile(JoinPath(own, "commondir"));
  if (commondir.ok()) {
    common = beneath(own, *commondir);
  } else if (!absl::IsNotFound(commondir.status())) {
    return commondir.status();
  }
  ASSIGN_OR_RETURN(std::string real, RealPath(common, "the repository's git folder"));
  if (::stat(real.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(pointer, ": the repository's git folder ", real, " is not a folder"));
  }
  return real;
}

absl::StatusOr<JobGuard> LoadJobGuard(const std::string& job_file,
                                      const std::string& worktree) {
  ASSIGN_OR_RETURN(Job job, ReadJobFile(job_file));
  JobGuard guard;
  guard.file = job_file;
  guard.scope.assign(job.file.write_scope().begin(),
                     job.file.write_scope().end());
  guard.whole_worktree = job.whole_worktree;
  guard.permissions = job.file.permissions();
  guard.token_budget = job.file.token_budget();
  ASSIGN_OR_RETURN(UniqueFd root, OpenRoot(worktree));
  absl::Status in_worktree = CheckScopeInWorktree(root.get(), guard.scope);
  if (!in_worktree.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(job_file, ": ", in_worktree.message()));
  }
  return guard;
}

absl::Status CheckJobWrite(const JobGuard& guard, int worktree_fd,
                           absl::string_view relative) {
  if (guard.whole_worktree) {
    // The whole worktree is the scope: only the links are checked.
    return CheckWriteInScope(worktree_fd, {std::string(relative)}, relative);
  }
  return CheckWriteInScope(worktree_fd, guard.scope, relative);
}

absl::Status AddJobRules(const JobGuard& guard, Permissions* permissions) {
  return permissions->AddRules(guard.permissions, guard.file);
}

}  // namespace jobs
}  // namespace garuda
