#include "lib/changeset/rules.h"

#include <fnmatch.h>
#include <git2.h>
#include <limits.h>
#include <stdlib.h>

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "lib/base/home.h"

namespace garuda {

extern const char kSensitivePatternsText[];  // sensitive_data.cc, generated

namespace {

absl::Status GitError(absl::string_view what) {
  const git_error* error = git_error_last();
  return absl::InternalError(absl::StrCat(
      what, ": ", error != nullptr ? error->message : "libgit2 error"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<IgnoreRules>> IgnoreRules::ForProject(
    const std::string& project) {
  git_libgit2_init();
  std::unique_ptr<IgnoreRules> rules(new IgnoreRules());
  int result =
      git_repository_open_ext(&rules->repository_, project.c_str(), 0, nullptr);
  if (result == GIT_ENOTFOUND) {
    rules->repository_ = nullptr;
    return rules;
  }
  if (result != 0) return GitError(absl::StrCat("git open ", project));
  const char* workdir = git_repository_workdir(rules->repository_);
  if (workdir == nullptr) {  // a bare repository: no ignore rules apply
    git_repository_free(rules->repository_);
    rules->repository_ = nullptr;
    return rules;
  }
  absl::StatusOr<std::string> resolved = RealProjectRoot(project);
  if (!resolved.ok()) return resolved.status();
  std::string root = absl::StrCat(*resolved, "/");
  std::string work = workdir;
  if (!absl::StartsWith(root, work)) {
    return absl::FailedPreconditionError(
        absl::StrCat(project, " is not inside its git work tree ", work));
  }
  rules->prefix_ = root.substr(work.size());
  rules->project_ = project;
  return rules;
}

// The index is read at the first question that needs it: a list whose
// paths are all known unchanged, or an empty overlay upper layer, never
// reads it.
absl::Status IgnoreRules::LoadIndex() {
  if (index_ != nullptr) return absl::OkStatus();
  if (git_repository_index(&index_, repository_) != 0) {
    index_ = nullptr;
    return GitError(absl::StrCat("git index of ", project_));
  }
  return absl::OkStatus();
}

IgnoreRules::~IgnoreRules() {
  if (index_ != nullptr) git_index_free(index_);
  if (repository_ != nullptr) git_repository_free(repository_);
}

absl::StatusOr<bool> IgnoreRules::IsIgnored(absl::string_view relative,
                                            bool is_folder) {
  if (repository_ == nullptr) return false;
  std::string path = absl::StrCat(prefix_, relative);
  if (absl::Status loaded = LoadIndex(); !loaded.ok()) return loaded;
  if (is_folder) {
    size_t position;
    std::string folder = absl::StrCat(path, "/");
    if (git_index_find_prefix(&position, index_, folder.c_str()) == 0) {
      return false;  // something beneath it is tracked
    }
  } else if (git_index_get_bypath(index_, path.c_str(), 0) != nullptr) {
    return false;
  }
  int ignored = 0;
  std::string query = is_folder ? absl::StrCat(path, "/") : path;
  if (git_ignore_path_is_ignored(&ignored, repository_, query.c_str()) != 0) {
    return GitError(absl::StrCat("git ignore rules for ", path));
  }
  return ignored != 0;
}

const SensitiveNames& SensitiveNames::Default() {
  static const SensitiveNames* names =
      new SensitiveNames(Parse(kSensitivePatternsText));
  return *names;
}

SensitiveNames SensitiveNames::Parse(absl::string_view text) {
  SensitiveNames names;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line.front() == '#') continue;
    names.patterns_.emplace_back(line);
  }
  return names;
}

bool SensitiveNames::Matches(absl::string_view path) const {
  std::vector<absl::string_view> components = absl::StrSplit(path, '/');
  for (const std::string& pattern : patterns_) {
    size_t parts = std::count(pattern.begin(), pattern.end(), '/') + 1;
    if (parts > components.size()) continue;
    std::string tail =
        absl::StrJoin(components.end() - parts, components.end(), "/");
    if (::fnmatch(pattern.c_str(), tail.c_str(), FNM_PATHNAME) == 0) {
      return true;
    }
  }
  return false;
}

}  // namespace garuda
