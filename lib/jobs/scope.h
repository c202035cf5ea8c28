// A job's write scope (T6): the folders and files of its worktree that its
// commands and edits may write. Folders, not globs, because a folder is what
// the OS sandbox can bind writable and what a person can read.
#ifndef GARUDA_LIB_JOBS_SCOPE_H_
#define GARUDA_LIB_JOBS_SCOPE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace garuda {
namespace jobs {

// One entry as written: one or more folder names or a file, relative to the
// worktree. INVALID_ARGUMENT, naming the entry and why, for an empty entry,
// ".", "..", a ".." or "." component, an absolute path, a NUL byte, ".git"
// or anything under it (at any depth: "vendor/x/.git" too), a trailing or
// doubled "/". The message has no field name: the caller adds
// "writeScope[N]: ".
absl::Status CheckScopeEntry(absl::string_view entry);

// Every entry against the worktree as it is: no symbolic link on the way to
// it, itself included (a link would make a place outside the scope
// writable); an entry that exists must be a folder or a regular file. An
// entry that does not exist yet passes when no link is on the way to where
// it would be (an edit may create it; a command cannot, the sandbox binds
// only what exists). Errors are "writeScope[N]: \"src/gen\" is reached
// through a symbolic link" and the like.
absl::Status CheckScopeInWorktree(int worktree_fd,
                                  const std::vector<std::string>& scope);

// Whether `relative` (a path in the worktree, '/'-separated) is inside the
// scope: equal to an entry, or below an entry. Nothing is inside an empty
// scope.
bool InScope(const std::vector<std::string>& scope, absl::string_view relative);

// A write of `relative` (an edit tool's path, a change list's entry) by a
// job: OK when the path is in the scope and it reaches, in the worktree as
// it is now, the place it names: no symbolic link on the way, the last
// component included (a link inside a scope folder may point anywhere).
// PERMISSION_DENIED names the path and why. Called when the call is
// decided and again just before the write.
absl::Status CheckWriteInScope(int worktree_fd,
                               const std::vector<std::string>& scope,
                               absl::string_view relative);

}  // namespace jobs
}  // namespace garuda

#endif  // GARUDA_LIB_JOBS_SCOPE_H_
