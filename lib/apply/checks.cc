#include "lib/apply/checks.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <deque>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "lib/apply/paths.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/sha256.h"
#include "lib/base/status_macros.h"
#include "lib/changeset/beneath.h"
#include "lib/base/visible.h"

namespace garuda {

using apply_internal::Child;
using apply_internal::Parent;

bool HasGitComponent(absl::string_view path) {
  // In any case, as git itself refuses it: on a case-folding file system
  // (ext4 casefold, a vfat or exFAT mount) ".GIT" is the same folder.
  for (absl::string_view part : absl::StrSplit(path, '/')) {
    if (absl::EqualsIgnoreCase(part, ".git")) return true;
  }
  return false;
}

void CheckEntries(const ChangeSet& change_set,
                  std::vector<std::string>* problems) {
  if (change_set.summary.incomplete()) {
    problems->push_back(
        absl::StrCat("the change list is incomplete (",
                     MakeVisible(change_set.summary.incomplete_reason()),
                     "); it can only be discarded"));
  }
  for (const RefusedPath& refused : change_set.summary.refused()) {
    problems->push_back(absl::StrCat(VisiblePath(refused.path()), ": ",
                                     MakeVisible(refused.reason())));
  }
  std::map<std::string, FileType> new_types;
  for (const Change& change : change_set.changes) {
    const ChangeEntry& entry = change.entry;
    const std::string& path = entry.path();
    absl::Status valid = CheckRelativePath(path);
    if (!valid.ok()) {
      problems->push_back(std::string(valid.message()));
      continue;
    }
    std::string shown = VisiblePath(path);
    if (HasGitComponent(path)) {
      problems->push_back(absl::StrCat(
          shown,
          ": git's own files (a .git folder, at any depth) are never "
          "applied"));
    }
    if (!new_types.emplace(path, entry.new_type()).second) {
      problems->push_back(absl::StrCat(shown, ": listed twice"));
    }
    switch (entry.new_type()) {
      case FILE_TYPE_ABSENT:
        if (entry.base().type() == FILE_TYPE_ABSENT) {
          problems->push_back(absl::StrCat(shown, ": deletes nothing"));
        }
        break;
      case FILE_TYPE_REGULAR:
        if (entry.new_mode() & (S_ISUID | S_ISGID)) {
          problems->push_back(
              absl::StrCat(shown, ": the setuid or setgid bit"));
        }
        if (change.content.size() != entry.size() ||
            Sha256Bytes(change.content) != entry.new_sha256()) {
          problems->push_back(absl::StrCat(
              shown, ": the content does not match its size and SHA-256"));
        }
        break;
      case FILE_TYPE_DIRECTORY:
        // A setgid folder hands its group to everything made in it later.
        if (entry.new_mode() & (S_ISUID | S_ISGID)) {
          problems->push_back(
              absl::StrCat(shown, ": the setuid or setgid bit on a folder"));
        }
        break;
      case FILE_TYPE_SYMLINK:
        if (entry.link_target().empty()) {
          problems->push_back(absl::StrCat(shown, ": a link with no target"));
        }
        break;
      default:
        problems->push_back(
            absl::StrCat(shown, ": a special file (device, fifo, socket)"));
        break;
    }
  }
  // A path beneath another entry needs that entry to leave a folder.
  for (const auto& [path, type] : new_types) {
    if (type == FILE_TYPE_ABSENT) continue;
    for (std::string parent = Parent(path); !parent.empty();
         parent = Parent(parent)) {
      auto it = new_types.find(parent);
      if (it != new_types.end() && it->second != FILE_TYPE_DIRECTORY) {
        problems->push_back(absl::StrCat(
            VisiblePath(path), ": its folder ", VisiblePath(parent),
            " is not a folder in the change list"));
        break;
      }
    }
  }
}

namespace {

// The kernel's limit on links followed in one lookup (ELOOP past it).
constexpr int kMaxLinks = 40;

// The project as it is now, or as it will be once the list is applied.
class TreeView {
 public:
  TreeView(int root_fd, const ChangeSet& change_set) : root_fd_(root_fd) {
    for (const Change& change : change_set.changes) {
      entries_[change.entry.path()] = &change.entry;
    }
  }

  struct Node {
    FileType type = FILE_TYPE_ABSENT;
    std::string target;  // of a link
  };

  // `path` has no link above it (the resolver follows those first).
  Node Lookup(const std::string& path, bool after) {
    if (after) {
      auto it = entries_.find(path);
      if (it != entries_.end()) {
        Node node;
        node.type = it->second->new_type();
        node.target = it->second->link_target();
        return node;
      }
      // Beneath an entry that is no folder once applied, or that becomes a
      // folder only now: nothing of the project's is there.
      for (std::string p = Parent(path); !p.empty(); p = Parent(p)) {
        auto above = entries_.find(p);
        if (above == entries_.end()) continue;
        if (above->second->new_type() != FILE_TYPE_DIRECTORY ||
            above->second->base().type() != FILE_TYPE_DIRECTORY) {
          return Node();
        }
      }
    }
    return OnDisk(path);
  }

 private:
  Node OnDisk(const std::string& path) {
    auto cached = disk_.find(path);
    if (cached != disk_.end()) return cached->second;
    Node node;
    absl::StatusOr<UniqueFd> parent = OpenParentBeneath(root_fd_, path);
    if (parent.ok()) {
      std::string name = Basename(path);
      struct stat st;
      if (::fstatat(parent->get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) ==
          0) {
        node.type = FileTypeOfMode(st.st_mode);
        if (S_ISLNK(st.st_mode)) {
          std::string target(PATH_MAX, '\0');
          ssize_t n = ::readlinkat(parent->get(), name.c_str(), target.data(),
                                   target.size());
          target.resize(n > 0 ? static_cast<size_t>(n) : 0);
          node.target = target;
        }
      }
    }
    disk_[path] = node;
    return node;
  }

  int root_fd_;
  std::map<std::string, const ChangeEntry*> entries_;
  std::map<std::string, Node> disk_;
};

struct Resolution {
  bool inside = true;
  std::string resolved;
  std::string why;
};

// Follows `target` from the folder of the link at `link_path` the way path
// lookup does: ".." goes up from where the walk really is (after the links
// followed so far), every link on the way is followed, the last one too. A
// component that is missing or not a folder is passed lexically, which is
// stricter than the kernel (it would stop there) and stays right if that
// component is made later.
Resolution Resolve(TreeView& tree, const std::string& link_path,
                   const std::string& target, bool after) {
  Resolution out;
  std::vector<std::string> where;
  for (absl::string_view part : absl::StrSplit(Parent(link_path), '/')) {
    if (!part.empty()) where.emplace_back(part);
  }
  std::vector<std::string> through;  // the links followed, in order
  auto leave = [&](std::string why) {
    out.inside = false;
    if (through.size() > 4) {  // a loop: the first turns say enough
      through.resize(4);
      through.push_back("...");
    }
    out.why = through.empty() ? std::move(why)
                              : absl::StrCat(why, ", after following ",
                                             absl::StrJoin(through, ", "));
    return out;
  };
  if (!target.empty() && target.front() == '/') {
    return leave("an absolute target");
  }
  std::deque<std::string> pending;
  for (absl::string_view part : absl::StrSplit(target, '/')) {
    pending.emplace_back(part);
  }
  int followed = 0;
  while (!pending.empty()) {
    std::string part = std::move(pending.front());
    pending.pop_front();
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (where.empty()) return leave("\"..\" from the project's root");
      where.pop_back();
      continue;
    }
    std::string path = Child(absl::StrJoin(where, "/"), part);
    TreeView::Node node = tree.Lookup(path, after);
    if (node.type != FILE_TYPE_SYMLINK) {
      where.push_back(part);
      continue;
    }
    through.push_back(
        absl::StrCat(VisiblePath(path), " -> ", VisiblePath(node.target)));
    if (++followed > kMaxLinks) {
      return leave(absl::StrCat("more than ", kMaxLinks, " links followed"));
    }
    if (node.target.empty() || node.target.front() == '/') {
      return leave(absl::StrCat("through ", VisiblePath(path),
                                ", a link to an absolute path"));
    }
    std::vector<std::string> parts = absl::StrSplit(node.target, '/');
    pending.insert(pending.begin(), parts.begin(), parts.end());
  }
  out.resolved = where.empty() ? "." : absl::StrJoin(where, "/");
  return out;
}

// Every symlink of the project, beneath `folder` (an open folder at
// `relative`), skipping git's own folders.
void ListLinks(int folder, const std::string& relative,
               std::vector<std::string>* links, int depth) {
  if (depth > 256) return;
  int copy = ::openat(folder, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* dir = copy >= 0 ? ::fdopendir(copy) : nullptr;
  if (dir == nullptr) {
    if (copy >= 0) ::close(copy);
    return;
  }
  std::vector<std::string> folders;
  while (struct dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name == "." || name == ".." || name == ".git") continue;
    unsigned char type = entry->d_type;
    if (type == DT_UNKNOWN) {
      struct stat st;
      if (::fstatat(::dirfd(dir), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
        continue;
      type = S_ISLNK(st.st_mode) ? DT_LNK : S_ISDIR(st.st_mode) ? DT_DIR : 0;
    }
    if (type == DT_LNK) links->push_back(Child(relative, name));
    if (type == DT_DIR) folders.push_back(name);
  }
  for (const std::string& name : folders) {
    int sub = ::openat(::dirfd(dir), name.c_str(),
                       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sub < 0) continue;
    UniqueFd owned(sub);
    ListLinks(sub, Child(relative, name), links, depth + 1);
  }
  ::closedir(dir);
}

}  // namespace

absl::Status CheckLinks(const ChangeSet& change_set, int root_fd,
                        std::vector<ResolvedLink>* links,
                        std::vector<std::string>* problems) {
  TreeView tree(root_fd, change_set);
  bool makes_links = false;
  std::map<std::string, const ChangeEntry*> listed;
  for (const Change& change : change_set.changes) {
    listed[change.entry.path()] = &change.entry;
    if (change.entry.new_type() != FILE_TYPE_SYMLINK) continue;
    makes_links = true;
    ResolvedLink link;
    link.path = change.entry.path();
    link.target = change.entry.link_target();
    Resolution after = Resolve(tree, link.path, link.target, true);
    link.inside = after.inside;
    link.resolved = after.resolved;
    link.why = after.why;
    if (!link.inside) {
      problems->push_back(
          absl::StrCat(VisiblePath(link.path),
                       ": a link that leads out of the project once "
                       "applied (",
                       VisiblePath(link.path), " -> ", VisiblePath(link.target),
                       ": ", after.why, ")"));
    }
    links->push_back(std::move(link));
  }
  // Only a link can redirect a lookup, so a list that makes none cannot
  // change where the project's own links lead.
  if (!makes_links) return absl::OkStatus();
  std::vector<std::string> existing;
  ListLinks(root_fd, "", &existing, 0);
  for (const std::string& path : existing) {
    if (listed.count(path)) continue;
    TreeView::Node node = tree.Lookup(path, true);
    if (node.type != FILE_TYPE_SYMLINK) continue;  // gone once applied
    Resolution before = Resolve(tree, path, node.target, false);
    if (!before.inside) continue;  // the person's own, not the list's doing
    Resolution after = Resolve(tree, path, node.target, true);
    if (after.inside && after.resolved == before.resolved) continue;
    ResolvedLink link;
    link.path = path;
    link.target = node.target;
    link.existing = true;
    link.inside = after.inside;
    link.resolved = after.resolved;
    link.why = after.why;
    if (!link.inside) {
      problems->push_back(absl::StrCat(
          VisiblePath(path), ": the project's link ", VisiblePath(path), " -> ",
          VisiblePath(node.target),
          " would lead out of the project once the list is applied (",
          after.why, ")"));
    }
    links->push_back(std::move(link));
  }
  return absl::OkStatus();
}

}  // namespace garuda
