// What a change list shows: git's ignore rules (libgit2) decide which paths
// count, and a list of secret-looking names is shown even when ignored.
#ifndef GARUDA_LIB_CHANGESET_RULES_H_
#define GARUDA_LIB_CHANGESET_RULES_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

struct git_repository;
struct git_index;

namespace garuda {

// The ignore rules of the git repository that holds a project, read from the
// project itself (never from the staging copy, so a command cannot hide a
// change by editing .gitignore). A tracked file is never ignored. In a
// folder without git every file counts.
class IgnoreRules {
 public:
  static absl::StatusOr<std::unique_ptr<IgnoreRules>> ForProject(
      const std::string& project);
  ~IgnoreRules();
  IgnoreRules(const IgnoreRules&) = delete;
  IgnoreRules& operator=(const IgnoreRules&) = delete;

  bool has_repository() const { return repository_ != nullptr; }
  // `relative` to the project root. For a folder, true only when nothing
  // beneath it is tracked, so everything beneath it can be treated as
  // ignored without asking again.
  absl::StatusOr<bool> IsIgnored(absl::string_view relative, bool is_folder);

 private:
  IgnoreRules() = default;
  absl::Status LoadIndex();
  git_repository* repository_ = nullptr;
  git_index* index_ = nullptr;
  std::string prefix_;  // the project's path inside the work tree, "" or "a/b/"
  std::string project_;
};

// Shell globs for names of secret files (policies/sensitive.txt).
class SensitiveNames {
 public:
  // The list compiled into the program from policies/sensitive.txt.
  static const SensitiveNames& Default();
  static SensitiveNames Parse(absl::string_view text);
  // Matches the last component of `path`, or, for a pattern with '/', as
  // many trailing components as the pattern has.
  bool Matches(absl::string_view path) const;
  const std::vector<std::string>& patterns() const { return patterns_; }

 private:
  std::vector<std::string> patterns_;
};

}  // namespace garuda

#endif  // GARUDA_LIB_CHANGESET_RULES_H_
