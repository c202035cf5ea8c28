// The applier's refusals: what a change list may never do, judged before
// anything is written (and by `garuda-applier show`, which writes nothing).
#ifndef GARUDA_LIB_APPLY_CHECKS_H_
#define GARUDA_LIB_APPLY_CHECKS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "lib/changeset/changeset.h"

namespace garuda {

// True when some component of `path` is ".git", in any case: git's own
// files, at the top or in a nested repository (vendor/lib/.git/hooks/x,
// sub/.git/config), are never written by an apply.
bool HasGitComponent(absl::string_view path);

// Refusals that need no look at the project: each problem is one line that
// names the visible path and what is wrong.
void CheckEntries(const ChangeSet& change_set,
                  std::vector<std::string>* problems);

// Where a link of the change set leads once the list is applied.
struct ResolvedLink {
  std::string path;    // the link
  std::string target;  // its text
  // Resolved as the kernel would, against the tree as it will be after the
  // apply (the list's entries over the project): "src/x", "." for the root,
  // or empty when it leaves the root.
  std::string resolved;
  bool inside = false;
  // Already in the project, not in the list: judged because the list
  // changes where it leads.
  bool existing = false;
  std::string why;  // when !inside: the step that leaves the root
};

// Resolves every link the change list makes, and, when it makes any, every
// link of the project whose meaning the list changes. A link is refused
// (a line in `problems`) when it leaves the root after the apply; an
// existing link that already left the root before is not the list's doing
// and is not judged. `root_fd` is the project, opened with OpenRoot.
absl::Status CheckLinks(const ChangeSet& change_set, int root_fd,
                        std::vector<ResolvedLink>* links,
                        std::vector<std::string>* problems);

}  // namespace garuda

#endif  // GARUDA_LIB_APPLY_CHECKS_H_
