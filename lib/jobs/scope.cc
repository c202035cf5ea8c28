#include "lib/jobs/scope.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/changeset/beneath.h"

namespace garuda {
namespace jobs {

absl::Status CheckScopeEntry(absl::string_view entry) {
  auto refused = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat("\"", entry, "\" ", why));
  };
  if (entry.empty()) return refused("is empty");
  if (entry == ".") return refused("is the whole worktree");
  if (entry == "..") return refused("is outside the worktree");
  if (entry[0] == '/') {
    return refused("is an absolute path: entries are relative to the worktree");
  }
  if (absl::StrContains(entry, '\0')) return refused("holds a NUL byte");
  if (absl::EndsWith(entry, "/")) {
    return refused("ends with \"/\": write the folder's name alone");
  }
  for (absl::string_view part : absl::StrSplit(entry, '/')) {
    if (part.empty()) return refused("has an empty component (\"//\")");
    if (part == "." || part == "..") {
      return refused(absl::StrCat("has a \"", part,
                                  "\" component: name the folder itself"));
    }
    if (part == ".git") {
      return refused(
          "is git's own folder or inside it: a job never writes git's data "
          "directly");
    }
  }
  return absl::OkStatus();
}

absl::Status CheckScopeInWorktree(int worktree_fd,
                                  const std::vector<std::string>& scope) {
  for (size_t i = 0; i < scope.size(); ++i) {
    const std::string& entry = scope[i];
    const std::string field = absl::StrCat("writeScope[", i, "]: ");
    absl::Status syntax = CheckScopeEntry(entry);
    if (!syntax.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(field, syntax.message()));
    }
    // Each prefix in turn, so that a missing tail is told apart from a link
    // on the way: openat2 beneath the worktree with no links at all.
    std::string prefix;
    for (absl::string_view part : absl::StrSplit(entry, '/')) {
      prefix = prefix.empty() ? std::string(part) : absl::StrCat(prefix, "/", part);
      absl::StatusOr<UniqueFd> parent = OpenParentBeneath(worktree_fd, prefix);
      if (!parent.ok()) {
        if (absl::IsFailedPrecondition(parent.status())) {
          return absl::InvalidArgumentError(absl::StrCat(
              field, "\"", entry, "\" is reached through a symbolic link"));
        }
        return absl::InvalidArgumentError(
            absl::StrCat(field, "\"", entry, "\": ", parent.status().message()));
      }
      struct stat st;
      const std::string name(prefix.substr(prefix.rfind('/') + 1));
      if (::fstatat(parent->get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        break;  // absent from here on: nothing on the way is a link
      }
      if (S_ISLNK(st.st_mode)) {
        return absl::InvalidArgumentError(absl::StrCat(
            field, "\"", entry, "\" is reached through a symbolic link (\"",
            prefix, "\")"));
      }
      const bool last = prefix.size() == entry.size();
      if (!last && !S_ISDIR(st.st_mode)) {
        return absl::InvalidArgumentError(absl::StrCat(
            field, "\"", entry, "\": \"", prefix, "\" is not a folder"));
      }
      if (last && !S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
        return absl::InvalidArgumentError(absl::StrCat(
            field, "\"", entry, "\" is neither a folder nor a regular file"));
      }
    }
  }
  return absl::OkStatus();
}

bool InScope(const std::vector<std::string>& scope, absl::string_view relative) {
  for (const std::string& entry : scope) {
    if (relative == entry) return true;
    if (relative.size() > entry.size() && absl::StartsWith(relative, entry) &&
        relative[entry.size()] == '/') {
      return true;
    }
  }
  return false;
}

absl::Status CheckWriteInScope(int worktree_fd,
                               const std::vector<std::string>& scope,
                               absl::string_view relative) {
  if (!InScope(scope, relative)) {
    return absl::PermissionDeniedError(
        absl::StrCat("\"", relative,
                     "\" is outside the job's write scope (writeScope)"));
  }
  // Each prefix in turn: the first that does not exist ends the walk (what
  // would be made there is made where it is named).
  std::string prefix;
  for (absl::string_view part : absl::StrSplit(relative, '/')) {
    prefix =
        prefix.empty() ? std::string(part) : absl::StrCat(prefix, "/", part);
    absl::StatusOr<UniqueFd> parent = OpenParentBeneath(worktree_fd, prefix);
    if (!parent.ok()) {
      if (absl::IsNotFound(parent.status())) return absl::OkStatus();
      return absl::PermissionDeniedError(absl::StrCat(
          "\"", relative, "\" is reached through a symbolic link: a job "
          "writes only the place a path names"));
    }
    struct stat st;
    const std::string name(prefix.substr(prefix.rfind('/') + 1));
    if (::fstatat(parent->get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) !=
        0) {
      return absl::OkStatus();
    }
    if (S_ISLNK(st.st_mode)) {
      return absl::PermissionDeniedError(absl::StrCat(
          "\"", relative, "\" is reached through a symbolic link (\"", prefix,
          "\"): a job writes only the place a path names"));
    }
  }
  return absl::OkStatus();
}

}  // namespace jobs
}  // namespace garuda
