#include "lib/changeset/builder.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/base/visible.h"
#include "lib/changeset/beneath.h"
#include "lib/changeset/rules.h"

namespace garuda {
namespace {

// One side of a path: the staging view ("new") or the project ("old").
struct Side {
  FileType type = FILE_TYPE_ABSENT;
  struct stat st = {};
  bool whiteout = false;
};

// Reads the two trees for the walk: folder listings, the two sides of a
// path, overlay attributes. What cannot be read makes the change set
// incomplete (or, for a path, refused) rather than failing the build.
class WalkReader {
 protected:
  explicit WalkReader(bool overlay) : overlay_(overlay) {}

  void Incomplete(const std::string& reason) {
    if (!result_.summary.incomplete()) {
      result_.summary.set_incomplete(true);
      result_.summary.set_incomplete_reason(reason);
    }
  }

  void Refuse(const std::string& path, const std::string& reason) {
    RefusedPath* refused = result_.summary.add_refused();
    refused->set_path(path);
    refused->set_reason(reason);
  }

  static std::string Child(const std::string& parent, const std::string& name) {
    return parent.empty() ? name : absl::StrCat(parent, "/", name);
  }

  // Sorted names in the folder `fd` (-1: none).
  std::vector<std::string> List(int fd, const std::string& relative) {
    std::vector<std::string> names;
    if (fd < 0) return names;
    int copy = ::openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR* dir = copy >= 0 ? ::fdopendir(copy) : nullptr;
    if (dir == nullptr) {
      if (copy >= 0) ::close(copy);
      Incomplete(absl::StrCat("cannot list ",
                              VisiblePath(relative.empty() ? "." : relative),
                              ": ", LastErrnoStatus("opendir").message()));
      return names;
    }
    errno = 0;
    while (struct dirent* entry = ::readdir(dir)) {
      std::string name = entry->d_name;
      if (name != "." && name != "..") names.push_back(std::move(name));
      errno = 0;
    }
    if (errno != 0) {
      Incomplete(absl::StrCat("cannot list ", VisiblePath(relative), ": ",
                              LastErrnoStatus("readdir").message()));
    }
    ::closedir(dir);
    std::sort(names.begin(), names.end());
    return names;
  }

  Side Stat(int dir_fd, const std::string& name, const std::string& relative,
            bool staging_side) {
    Side side;
    if (dir_fd < 0) return side;
    if (::fstatat(dir_fd, name.c_str(), &side.st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT) {
        Incomplete(absl::StrCat("cannot read ", VisiblePath(relative), ": ",
                                LastErrnoStatus("stat").message()));
      }
      return side;
    }
    side.type = FileTypeOfMode(side.st.st_mode);
    side.whiteout = overlay_ && staging_side && S_ISCHR(side.st.st_mode) &&
                    side.st.st_rdev == makedev(0, 0);
    return side;
  }

  UniqueFd OpenFolder(int dir_fd, const std::string& name,
                      const std::string& relative) {
    int fd = ::openat(dir_fd, name.c_str(),
                      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      Incomplete(absl::StrCat("cannot open ", VisiblePath(relative), ": ",
                              LastErrnoStatus("open").message()));
    }
    return UniqueFd(fd);
  }

  // The overlay attributes of an upper-layer path. Sets *opaque for a
  // replaced folder; false (and the list incomplete) for anything unknown.
  bool ReadOverlayAttributes(const std::string& relative, bool* opaque) {
    *opaque = false;
    std::string path =
        absl::StrCat("/proc/self/fd/", new_root_->get(), "/", relative);
    ssize_t size = ::llistxattr(path.c_str(), nullptr, 0);
    if (size < 0) {
      if (errno == ENOTSUP) return true;
      Incomplete(absl::StrCat("cannot list the attributes of ",
                              VisiblePath(relative), ": ",
                              LastErrnoStatus("llistxattr").message()));
      return false;
    }
    std::string names(static_cast<size_t>(size), '\0');
    size = ::llistxattr(path.c_str(), names.data(), names.size());
    if (size < 0) {
      Incomplete(absl::StrCat("cannot list the attributes of ",
                              VisiblePath(relative)));
      return false;
    }
    names.resize(static_cast<size_t>(size));
    for (absl::string_view name : absl::StrSplit(names, '\0')) {
      absl::string_view suffix = name;
      if (!absl::ConsumePrefix(&suffix, "trusted.overlay.") &&
          !absl::ConsumePrefix(&suffix, "user.overlay.")) {
        continue;  // not overlay's (security.selinux, user.* of the command)
      }
      if (suffix == "origin" || suffix == "impure" || suffix == "nlink") {
        continue;  // bookkeeping that does not change what the path holds
      }
      if (suffix == "opaque") {
        char value[8];
        std::string attribute(name);
        ssize_t length =
            ::lgetxattr(path.c_str(), attribute.c_str(), value, sizeof(value));
        if (length == 1 && value[0] == 'y') {
          *opaque = true;
          continue;
        }
      }
      Incomplete(absl::StrCat("unknown overlay attribute ", name, " on ",
                              VisiblePath(relative),
                              "; the change list cannot be trusted"));
      return false;
    }
    return true;
  }

  const bool overlay_;
  std::shared_ptr<UniqueFd> new_root_;
  ChangeSet result_;
};

class Walker : private WalkReader {
 public:
  Walker(const BuildOptions& options, bool overlay)
      : WalkReader(overlay), options_(options) {}

  absl::StatusOr<ChangeSet> Run(const std::string& new_root) {
    ASSIGN_OR_RETURN(UniqueFd project, OpenRoot(options_.project));
    ASSIGN_OR_RETURN(UniqueFd staged, OpenRoot(new_root));
    new_root_ = std::make_shared<UniqueFd>(std::move(staged));
    ASSIGN_OR_RETURN(rules_, IgnoreRules::ForProject(options_.project));
    result_.header.set_project_root(options_.project);
    result_.header.set_source(overlay_ ? "overlay" : "copy");
    result_.header.set_command(options_.command);
    CompareFolders("", new_root_->get(), project.get(), /*ignored=*/false,
                   /*merge=*/overlay_);
    for (const auto& [folder, files] : ignored_) {
      IgnoredCount* count = result_.summary.add_ignored();
      count->set_folder(folder);
      count->set_files(files);
    }
    return std::move(result_);
  }

 private:
  // Counts one path against the file limit; false once the walk must stop.
  bool Count() {
    if (stopped_) return false;
    if (++walked_ > options_.file_limit) {
      Incomplete(absl::StrCat("the walk passed the limit of ",
                              options_.file_limit, " files"));
      stopped_ = true;
      return false;
    }
    return true;
  }

  void NoteIgnored(const std::string& relative) {
    size_t slash = relative.find('/');
    std::string folder =
        slash == std::string::npos ? "" : relative.substr(0, slash + 1);
    ++ignored_[folder];
    if (sensitive_.Matches(relative)) {
      result_.summary.add_sensitive_ignored(relative);
    }
  }

  bool IsIgnored(const std::string& relative, bool parent_ignored,
                 bool is_folder) {
    if (parent_ignored) return true;
    absl::StatusOr<bool> ignored = rules_->IsIgnored(relative, is_folder);
    if (!ignored.ok()) {
      Incomplete(std::string(ignored.status().message()));
      return false;
    }
    return *ignored;
  }

  Fingerprint FolderFingerprint(const Side& side) {
    Fingerprint fingerprint;
    fingerprint.set_type(FILE_TYPE_DIRECTORY);
    fingerprint.set_mode(side.st.st_mode & 07777);
    return fingerprint;
  }

  // The fingerprint of a file or link, reading it; nullopt-like `ok=false`
  // when it cannot be read (the list is then incomplete).
  bool Fingerprinted(int dir_fd, const std::string& name,
                     const std::string& relative, bool new_side,
                     Fingerprint* out, std::string* content = nullptr) {
    if (new_side && options_.before_read) {
      absl::Status seam = options_.before_read(relative);
      if (!seam.ok()) {
        Incomplete(absl::StrCat("cannot read ", VisiblePath(relative), ": ",
                                seam.message()));
        return false;
      }
    }
    absl::StatusOr<Fingerprint> fingerprint =
        FingerprintAt(dir_fd, name, relative, content);
    if (!fingerprint.ok()) {
      Incomplete(absl::StrCat("cannot read ", VisiblePath(relative), ": ",
                              fingerprint.status().message()));
      return false;
    }
    *out = *std::move(fingerprint);
    return true;
  }

  // The project's side as a base fingerprint ("absent" when there is
  // nothing); false when it cannot be read.
  bool BaseFingerprint(int old_parent, const std::string& name,
                       const std::string& relative, const Side& old,
                       Fingerprint* base) {
    base->set_type(FILE_TYPE_ABSENT);
    return old.type == FILE_TYPE_ABSENT ||
           Fingerprinted(old_parent, name, relative, false, base);
  }

  // Whether the content of a new file of `size` bytes is kept in memory
  // when it is read for its fingerprint, so that writing the list does not
  // read (and hash) it again. Small files only, up to a total.
  bool KeepContent(const Side& side) const {
    if (side.type != FILE_TYPE_REGULAR) return false;
    uint64_t size = static_cast<uint64_t>(side.st.st_size);
    return size <= kKeptFileBytes && kept_bytes_ + size <= kKeptTotalBytes;
  }

  void AddChange(const std::string& relative, ChangeKind kind,
                 const Fingerprint& base, int new_dir_fd,
                 const std::string& name, const Side& side,
                 const Fingerprint* new_fingerprint,
                 std::string* content = nullptr) {
    Change change;
    ChangeEntry& entry = change.entry;
    entry.set_path(relative);
    entry.set_kind(kind);
    *entry.mutable_base() = base;
    entry.set_sensitive(sensitive_.Matches(relative));
    if (side.type == FILE_TYPE_ABSENT || side.whiteout) {
      entry.set_new_type(FILE_TYPE_ABSENT);
    } else {
      entry.set_new_type(side.type);
      if (side.type != FILE_TYPE_SYMLINK) {
        entry.set_new_mode(side.st.st_mode & 07777);
      }
      if (side.type == FILE_TYPE_SYMLINK) {
        std::string target(static_cast<size_t>(side.st.st_size) + 1, '\0');
        ssize_t n = ::readlinkat(new_dir_fd, name.c_str(), target.data(),
                                 target.size());
        if (n < 0) {
          Incomplete(
              absl::StrCat("cannot read the link ", VisiblePath(relative)));
          return;
        }
        target.resize(static_cast<size_t>(n));
        entry.set_link_target(target);
      } else if (side.type == FILE_TYPE_REGULAR) {
        entry.set_size(static_cast<uint64_t>(side.st.st_size));
        entry.set_new_sha256(new_fingerprint->sha256());
        if (content != nullptr && content->size() == entry.size()) {
          // The bytes that were hashed: the list is consistent by
          // construction.
          kept_bytes_ += content->size();
          change.content = std::move(*content);
        } else {
          change.source_root = new_root_;
          change.source_relative = relative;
        }
      }
    }
    result_.changes.push_back(std::move(change));
  }

  // Everything beneath the project folder `old_fd` is gone. Returns true
  // when every path in it is listed as deleted (none was ignored).
  bool DeleteFolderContent(const std::string& relative, int old_fd,
                           bool ignored) {
    bool all = true;
    for (const std::string& name : List(old_fd, relative)) {
      if (stopped_) return false;
      std::string child = Child(relative, name);
      Side old = Stat(old_fd, name, child, false);
      bool is_folder = old.type == FILE_TYPE_DIRECTORY;
      bool child_ignored = IsIgnored(child, ignored, is_folder);
      if (!child_ignored && !Count()) return false;
      if (is_folder) {
        UniqueFd fd = OpenFolder(old_fd, name, child);
        if (!fd) return false;
        if (DeleteFolderContent(child, fd.get(), child_ignored) &&
            !child_ignored) {
          AddChange(child, CHANGE_KIND_DELETED, FolderFingerprint(old), -1,
                    name, Side(), nullptr);
        } else {
          all = false;
        }
        continue;
      }
      if (child_ignored) {
        all = false;  // an ignored file stays; so does its folder
        continue;
      }
      Fingerprint base;
      if (!Fingerprinted(old_fd, name, child, false, &base)) return false;
      AddChange(child, CHANGE_KIND_DELETED, base, -1, name, Side(), nullptr);
    }
    return all;
  }

  void CompareFolders(const std::string& relative, int new_fd, int old_fd,
                      bool ignored, bool merge) {
    std::vector<std::string> names = List(new_fd, relative);
    if (!merge) {
      std::vector<std::string> old_names = List(old_fd, relative);
      std::vector<std::string> all;
      std::set_union(names.begin(), names.end(), old_names.begin(),
                     old_names.end(), std::back_inserter(all));
      names = std::move(all);
    }
    for (const std::string& name : names) {
      if (stopped_) return;
      ComparePath(Child(relative, name), name, new_fd, old_fd, ignored, merge);
    }
  }

  // Counts the files the command wrote beneath an ignored or unapplied
  // folder of the staging view.
  void CountWritten(const std::string& relative, int new_fd) {
    for (const std::string& name : List(new_fd, relative)) {
      if (stopped_) return;
      std::string child = Child(relative, name);
      Side side = Stat(new_fd, name, child, true);
      if (side.type == FILE_TYPE_DIRECTORY) {
        UniqueFd fd = OpenFolder(new_fd, name, child);
        if (fd) CountWritten(child, fd.get());
      } else if (!side.whiteout && side.type != FILE_TYPE_ABSENT) {
        NoteIgnored(child);
      }
    }
  }

  void ComparePath(const std::string& relative, const std::string& name,
                   int new_parent, int old_parent, bool parent_ignored,
                   bool merge) {
    if (stopped_) return;
    Side now = Stat(new_parent, name, relative, true);
    if (!overlay_ && options_.unchanged && now.type != FILE_TYPE_ABSENT &&
        now.type != FILE_TYPE_DIRECTORY &&
        options_.unchanged(relative, now.st)) {
      return;
    }
    Side old = Stat(old_parent, name, relative, false);
    bool gone = now.type == FILE_TYPE_ABSENT || now.whiteout;
    if (absl::EqualsIgnoreCase(name, ".git")) {
      // Never applied, at any depth (a nested repository's hooks and config
      // run code as the top one's do; the applier refuses them too): git's
      // own files stay in the staging view. The overlay walk sees what the
      // command wrote there and counts it.
      if (overlay_ && now.type == FILE_TYPE_DIRECTORY) {
        UniqueFd fd = OpenFolder(new_parent, name, relative);
        if (fd) CountWritten(relative, fd.get());
      }
      return;
    }
    bool opaque = false;
    if (overlay_ && !gone && !ReadOverlayAttributes(relative, &opaque)) {
      stopped_ = true;
      return;
    }
    bool is_folder = (!gone && now.type == FILE_TYPE_DIRECTORY) ||
                     (gone && old.type == FILE_TYPE_DIRECTORY);
    bool ignored = IsIgnored(relative, parent_ignored, is_folder);
    if (!ignored && !Count()) return;
    if (!overlay_ && !ignored && options_.unchanged_folder &&
        now.type == FILE_TYPE_DIRECTORY && old.type == FILE_TYPE_DIRECTORY &&
        (now.st.st_mode & 07777) == (old.st.st_mode & 07777) &&
        options_.unchanged_folder(relative, now.st)) {
      return;
    }

    // The staging side is a folder.
    if (!gone && now.type == FILE_TYPE_DIRECTORY) {
      UniqueFd new_fd = OpenFolder(new_parent, name, relative);
      if (!new_fd) return;
      if ((now.st.st_mode & S_ISUID) && !ignored) {
        Refuse(relative, "a folder with the setuid bit");
      }
      if (old.type == FILE_TYPE_DIRECTORY) {
        UniqueFd old_fd = OpenFolder(old_parent, name, relative);
        if (!old_fd) return;
        if (!ignored) {
          if (opaque) {
            AddChange(relative, CHANGE_KIND_REPLACED_FOLDER,
                      FolderFingerprint(old), new_parent, name, now, nullptr);
          } else if ((now.st.st_mode & 07777) != (old.st.st_mode & 07777)) {
            AddChange(relative, CHANGE_KIND_MODE_CHANGED,
                      FolderFingerprint(old), new_parent, name, now, nullptr);
          }
        }
        CompareFolders(relative, new_fd.get(), old_fd.get(), ignored,
                       merge && !opaque);
        return;
      }
      if (ignored) {
        CountWritten(relative, new_fd.get());
        return;
      }
      Fingerprint base;
      if (!BaseFingerprint(old_parent, name, relative, old, &base)) return;
      AddChange(relative,
                old.type == FILE_TYPE_ABSENT ? CHANGE_KIND_ADDED
                                             : CHANGE_KIND_TYPE_CHANGED,
                base, new_parent, name, now, nullptr);
      CompareFolders(relative, new_fd.get(), -1, false, false);
      return;
    }

    // The project side is a folder that is gone or replaced by a non-folder.
    if (old.type == FILE_TYPE_DIRECTORY) {
      UniqueFd old_fd = OpenFolder(old_parent, name, relative);
      if (!old_fd) return;
      bool all = DeleteFolderContent(relative, old_fd.get(), ignored);
      if (ignored) return;  // deletions of ignored files are not applied
      if (gone) {
        if (all) {
          AddChange(relative, CHANGE_KIND_DELETED, FolderFingerprint(old),
                    new_parent, name, now, nullptr);
        }
        return;
      }
      if (!all) {
        Refuse(relative,
               "a folder that holds ignored files cannot become a file");
        return;
      }
      if (now.type == FILE_TYPE_SPECIAL) {
        Refuse(relative, "a device, fifo or socket");
        return;
      }
      Fingerprint now_fingerprint;
      if (!Fingerprinted(new_parent, name, relative, true, &now_fingerprint)) {
        return;
      }
      if (now.type == FILE_TYPE_REGULAR &&
          (now.st.st_mode & (S_ISUID | S_ISGID))) {
        Refuse(relative, "a file with the setuid or setgid bit");
        return;
      }
      AddChange(relative, CHANGE_KIND_TYPE_CHANGED, FolderFingerprint(old),
                new_parent, name, now, &now_fingerprint);
      return;
    }

    // Neither side is a folder.
    if (gone) {
      if (old.type == FILE_TYPE_ABSENT || ignored) return;
      Fingerprint base;
      if (!Fingerprinted(old_parent, name, relative, false, &base)) return;
      AddChange(relative, CHANGE_KIND_DELETED, base, new_parent, name, now,
                nullptr);
      return;
    }
    if (now.type == FILE_TYPE_SPECIAL) {
      if (ignored) {
        NoteIgnored(relative);
      } else {
        Refuse(relative, "a device, fifo or socket");
      }
      return;
    }
    Fingerprint now_fingerprint;
    std::string content;
    std::string* keep = KeepContent(now) ? &content : nullptr;
    if (!Fingerprinted(new_parent, name, relative, true, &now_fingerprint,
                       keep)) {
      return;
    }
    Fingerprint base;
    if (!BaseFingerprint(old_parent, name, relative, old, &base)) return;
    if (SameFingerprint(now_fingerprint, base)) return;  // e.g. a copy-up
    if (ignored) {
      NoteIgnored(relative);
      return;
    }
    if (now.type == FILE_TYPE_REGULAR &&
        (now.st.st_mode & (S_ISUID | S_ISGID))) {
      Refuse(relative, "a file with the setuid or setgid bit");
      return;
    }
    ChangeKind kind;
    if (base.type() == FILE_TYPE_ABSENT) {
      kind = CHANGE_KIND_ADDED;
    } else if (base.type() != now_fingerprint.type()) {
      kind = CHANGE_KIND_TYPE_CHANGED;
    } else if (base.sha256() == now_fingerprint.sha256()) {
      kind = CHANGE_KIND_MODE_CHANGED;
    } else {
      kind = CHANGE_KIND_MODIFIED;
    }
    AddChange(relative, kind, base, new_parent, name, now, &now_fingerprint,
              keep);
  }

  const BuildOptions& options_;
  const SensitiveNames& sensitive_ = SensitiveNames::Default();
  std::unique_ptr<IgnoreRules> rules_;
  std::map<std::string, uint64_t> ignored_;
  static constexpr uint64_t kKeptFileBytes = 1 << 20;
  static constexpr uint64_t kKeptTotalBytes = uint64_t{256} << 20;
  uint64_t kept_bytes_ = 0;
  uint64_t walked_ = 0;
  bool stopped_ = false;
};

}  // namespace

absl::StatusOr<ChangeSet> BuildFromCopy(const std::string& staged,
                                        const BuildOptions& options) {
  Walker walker(options, /*overlay=*/false);
  return walker.Run(staged);
}

absl::StatusOr<ChangeSet> BuildFromOverlayUpper(const std::string& upper,
                                                const BuildOptions& options) {
  Walker walker(options, /*overlay=*/true);
  return walker.Run(upper);
}

}  // namespace garuda
