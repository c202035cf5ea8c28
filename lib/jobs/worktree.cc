#include "lib/jobs/worktree.h"

#include <git2.h>

#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/jobs/scope.h"

namespace garuda {
namespace jobs {
namespace {

absl::Status GitError(absl::string_view what) {
  const git_error* error = git_error_last();
  return absl::InternalError(absl::StrCat(
      what, ": ", error != nullptr ? error->message : "libgit2 error"));
}

template <typename T, void (*Free)(T*)>
struct GitDeleter {
  void operator()(T* object) const {
    if (object != nullptr) Free(object);
  }
};
template <typename T, void (*Free)(T*)>
using GitPtr = std::unique_ptr<T, GitDeleter<T, Free>>;

using Repository = GitPtr<git_repository, git_repository_free>;
using Commit = GitPtr<git_commit, git_commit_free>;
using Tree = GitPtr<git_tree, git_tree_free>;
using Reference = GitPtr<git_reference, git_reference_free>;
using Worktree = GitPtr<git_worktree, git_worktree_free>;
using StatusList = GitPtr<git_status_list, git_status_list_free>;
using Index = GitPtr<git_index, git_index_free>;
using Signature = GitPtr<git_signature, git_signature_free>;

absl::StatusOr<Repository> Open(const std::string& path) {
  git_libgit2_init();
  git_repository* repository = nullptr;
  if (git_repository_open_ext(&repository, path.c_str(),
                              GIT_REPOSITORY_OPEN_NO_SEARCH, nullptr) != 0) {
    return GitError(absl::StrCat("git: open ", path));
  }
  return Repository(repository);
}

std::string Hex(const git_oid& oid) {
  char hex[GIT_OID_HEXSZ + 1];
  git_oid_tostr(hex, sizeof hex, &oid);
  return hex;
}

absl::StatusOr<Commit> HeadCommit(git_repository* repository,
                                  const std::string& what) {
  git_object* object = nullptr;
  if (git_revparse_single(&object, repository, "HEAD^{commit}") != 0) {
    return GitError(absl::StrCat("git: the HEAD commit of ", what));
  }
  return Commit(reinterpret_cast<git_commit*>(object));
}

}  // namespace

absl::StatusOr<JobWorktree> CreateJobWorktree(const std::string& checkout,
                                              const std::string& job,
                                              const std::string& timestamp,
                                              const std::string& parent) {
  ASSIGN_OR_RETURN(Repository repository, Open(checkout));
  ASSIGN_OR_RETURN(Commit head, HeadCommit(repository.get(), checkout));
  JobWorktree made;
  made.branch = absl::StrCat("garuda/", job, "/", timestamp);
  made.base_commit = Hex(*git_commit_id(head.get()));
  const std::string name = absl::StrCat(job, "-", timestamp);
  made.path = JoinPath(parent, name);
  RETURN_IF_ERROR(MakeDirectories(parent, 0700));

  git_reference* branch = nullptr;
  if (git_branch_create(&branch, repository.get(), made.branch.c_str(),
                        head.get(), /*force=*/0) != 0) {
    return GitError(absl::StrCat("git: create the branch ", made.branch));
  }
  Reference branch_ref(branch);
  git_worktree_add_options options = GIT_WORKTREE_ADD_OPTIONS_INIT;
  options.ref = branch_ref.get();
  git_worktree* worktree = nullptr;
  if (git_worktree_add(&worktree, repository.get(), name.c_str(),
                       made.path.c_str(), &options) != 0) {
    absl::Status error = GitError(absl::StrCat("git: add the worktree ", made.path));
    git_branch_delete(branch_ref.get());  // nothing half-made stays behind
    return error;
  }
  Worktree(worktree).reset();
  return made;
}

absl::Status RemoveUnusedJobWorktree(const std::string& checkout,
                                     const JobWorktree& worktree) {
  ASSIGN_OR_RETURN(Repository repository, Open(checkout));
  git_worktree* raw = nullptr;
  if (git_worktree_lookup(&raw, repository.get(),
                          Basename(worktree.path).c_str()) != 0) {
    return GitError(absl::StrCat("git: find the worktree ", worktree.path));
  }
  Worktree found(raw);
  git_worktree_prune_options options = GIT_WORKTREE_PRUNE_OPTIONS_INIT;
  options.flags = GIT_WORKTREE_PRUNE_VALID | GIT_WORKTREE_PRUNE_WORKING_TREE;
  if (git_worktree_prune(found.get(), &options) != 0) {
    return GitError(absl::StrCat("git: remove the worktree ", worktree.path));
  }
  git_reference* branch = nullptr;
  if (git_branch_lookup(&branch, repository.get(), worktree.branch.c_str(),
                        GIT_BRANCH_LOCAL) != 0) {
    return GitError(absl::StrCat("git: find the branch ", worktree.branch));
  }
  Reference branch_ref(branch);
  if (git_branch_delete(branch_ref.get()) != 0) {
    return GitError(absl::StrCat("git: delete the branch ", worktree.branch));
  }
  return absl::OkStatus();
}

absl::StatusOr<WorktreeChanges> ListWorktreeChanges(
    const std::string& worktree, const std::string& base_commit) {
  ASSIGN_OR_RETURN(Repository repository, Open(worktree));
  git_oid base;
  if (git_oid_fromstr(&base, base_commit.c_str()) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", base_commit, "\" is not a commit id"));
  }
  git_commit* commit = nullptr;
  if (git_commit_lookup(&commit, repository.get(), &base) != 0) {
    return GitError(absl::StrCat("git: the base commit ", base_commit));
  }
  Commit base_commit_object(commit);
  git_tree* tree = nullptr;
  if (git_commit_tree(&tree, base_commit_object.get()) != 0) {
    return GitError("git: the base commit's tree");
  }
  Tree base_tree(tree);

  WorktreeChanges changes;
  ASSIGN_OR_RETURN(Commit head, HeadCommit(repository.get(), worktree));
  changes.head_moved = !git_oid_equal(git_commit_id(head.get()), &base);

  // Against the base commit's tree, not HEAD: a commit made in the turn
  // must not hide what it changed.
  git_status_options options = GIT_STATUS_OPTIONS_INIT;
  options.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
  options.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED |
                  GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS |
                  GIT_STATUS_OPT_INCLUDE_IGNORED |
                  GIT_STATUS_OPT_RECURSE_IGNORED_DIRS |
                  GIT_STATUS_OPT_DISABLE_PATHSPEC_MATCH;
  options.baseline = base_tree.get();
  git_status_list* list = nullptr;
  if (git_status_list_new(&list, repository.get(), &options) != 0) {
    return GitError(absl::StrCat("git: the status of ", worktree));
  }
  StatusList statuses(list);
  for (size_t i = 0; i < git_status_list_entrycount(statuses.get()); ++i) {
    const git_status_entry* entry = git_status_byindex(statuses.get(), i);
    if (entry->status == GIT_STATUS_CURRENT) continue;
    for (const git_diff_delta* delta :
         {entry->head_to_index, entry->index_to_workdir}) {
      if (delta == nullptr) continue;
      for (const char* path : {delta->old_file.path, delta->new_file.path}) {
        if (path != nullptr) changes.paths.push_back(path);
      }
    }
  }
  std::sort(changes.paths.begin(), changes.paths.end());
  changes.paths.erase(std::unique(changes.paths.begin(), changes.paths.end()),
                      changes.paths.end());
  return changes;
}

std::vector<std::string> OutsideScope(const WorktreeChanges& changes,
                                      const std::vector<std::string>& scope,
                                      bool whole_worktree) {
  std::vector<std::string> outside;
  if (changes.head_moved) outside.push_back("HEAD");
  if (whole_worktree) return outside;
  for (const std::string& path : changes.paths) {
    if (!InScope(scope, path)) outside.push_back(path);
  }
  return outside;
}

absl::StatusOr<std::string> CommitJobChanges(const std::string& worktree,
                                             const std::string& message) {
  ASSIGN_OR_RETURN(Repository repository, Open(worktree));
  git_index* raw_index = nullptr;
  if (git_repository_index(&raw_index, repository.get()) != 0) {
    return GitError(absl::StrCat("git: the index of ", worktree));
  }
  Index index(raw_index);
  char star[] = "*";
  char* patterns[] = {star};
  git_strarray everything = {patterns, 1};
  if (git_index_add_all(index.get(), &everything, GIT_INDEX_ADD_DEFAULT,
                        nullptr, nullptr) != 0 ||
      git_index_update_all(index.get(), &everything, nullptr, nullptr) != 0 ||
      git_index_write(index.get()) != 0) {
    return GitError(absl::StrCat("git: stage the changes of ", worktree));
  }
  git_oid tree_id;
  if (git_index_write_tree(&tree_id, index.get()) != 0) {
    return GitError("git: write the tree");
  }
  ASSIGN_OR_RETURN(Commit head, HeadCommit(repository.get(), worktree));
  if (git_oid_equal(&tree_id, git_commit_tree_id(head.get()))) {
    return std::string();  // nothing changed that git keeps
  }
  git_tree* raw_tree = nullptr;
  if (git_tree_lookup(&raw_tree, repository.get(), &tree_id) != 0) {
    return GitError("git: read the new tree");
  }
  Tree tree(raw_tree);
  // The person's own git identity where they have one, so that the commit
  // looks like theirs in review; else a name that says who made it.
  git_signature* raw_signature = nullptr;
  if (git_signature_default(&raw_signature, repository.get()) != 0 &&
      git_signature_now(&raw_signature, "Garuda job", "garuda@localhost") != 0) {
    return GitError("git: a signature for the commit");
  }
  Signature signature(raw_signature);
  const git_commit* parents[] = {head.get()};
  git_oid commit_id;
  if (git_commit_create(&commit_id, repository.get(), "HEAD", signature.get(),
                        signature.get(), nullptr, message.c_str(), tree.get(),
                        1, parents) != 0) {
    return GitError(absl::StrCat("git: commit in ", worktree));
  }
  return Hex(commit_id);
}

}  // namespace jobs
}  // namespace garuda
