// The overlay backend (backend.h): overlayfs over the project in the
// stager's mount namespace, the command's writes in <folder>/upper.
#include <dirent.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"
#include "lib/base/visible.h"
#include "lib/changeset/rules.h"
#include "lib/staging/backend.h"
#include "lib/staging/copy_snapshot.h"
#include "lib/staging/folders.h"
#include "lib/staging/mounts.h"

namespace garuda {
namespace {

constexpr char kOpaque[] = "user.overlay.opaque";

absl::Status MakeFolder(const std::string& path) {
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    return LastErrnoStatus(absl::StrCat("mkdir(", path, ")"));
  }
  return absl::OkStatus();
}

class OverlayBackend : public StagingBackend {
 public:
  OverlayBackend(std::string project, std::string folder)
      : project_(std::move(project)),
        upper_(JoinPath(folder, "upper")),
        work_(JoinPath(folder, "work")),
        merged_(JoinPath(folder, "view")) {}

  std::string name() const override { return "overlay"; }
  std::string Describe() const override {
    return absl::StrCat("overlayfs over the project, writes in ", upper_);
  }

  absl::Status Create() override {
    // A session whose start failed half way may have left layers behind.
    RETURN_IF_ERROR(RemoveTree(upper_));
    RETURN_IF_ERROR(RemoveTree(work_));
    RETURN_IF_ERROR(MakeFolder(upper_));
    RETURN_IF_ERROR(MakeFolder(work_));
    return MakeFolder(merged_);
  }

  // Overlay's upper layer is changed only while nothing has it mounted
  // (each call mounts it in its own namespace), as overlayfs requires.
  absl::Status Refresh() override {
    UniqueFd upper(::open(upper_.c_str(),
                          O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!upper) {
      return LastErrnoStatus(absl::StrCat("the upper layer ", upper_));
    }
    ASSIGN_OR_RETURN(bool empty, UpperIsEmpty());
    if (empty) return absl::OkStatus();
    ASSIGN_OR_RETURN(rules_, IgnoreRules::ForProject(project_));
    return RefreshFolder(upper.get(), "");
  }

  // An empty upper layer is all a refresh looks at before it returns.
  bool NothingToRefresh() override {
    absl::StatusOr<bool> empty = UpperIsEmpty();
    return empty.ok() && *empty;
  }

  absl::StatusOr<std::string> Mount() override {
    RETURN_IF_ERROR(MountOverlay(project_, upper_, work_, merged_));
    mounted_ = true;
    return merged_;
  }

  void Unmount() override {
    if (mounted_) ::umount2(merged_.c_str(), MNT_DETACH);
    mounted_ = false;
  }

  absl::StatusOr<ChangeSet> List(const BuildOptions& options) override {
    // Nothing written: nothing to walk (and no need to load git's rules).
    ASSIGN_OR_RETURN(bool empty, UpperIsEmpty());
    if (empty) {
      ChangeSet none;
      none.header.set_project_root(options.project);
      none.header.set_source("overlay");
      none.header.set_command(options.command);
      return none;
    }
    return BuildFromOverlayUpper(upper_, options);
  }
  std::string ListedRoot() const override { return upper_; }

 private:
  absl::StatusOr<bool> UpperIsEmpty() {
    UniqueFd upper(::open(upper_.c_str(),
                          O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!upper) {
      return LastErrnoStatus(absl::StrCat("the upper layer ", upper_));
    }
    ASSIGN_OR_RETURN(std::vector<std::string> names,
                     FolderNames(upper.get(), upper_));
    return names.empty();
  }

  absl::StatusOr<bool> Ignored(const std::string& relative, bool folder) {
    return rules_->IsIgnored(relative, folder);
  }

  // Removes from the upper folder `fd` every entry that git does not ignore.
  // Returns through `empty` whether the folder is empty afterwards.
  absl::Status RefreshFolder(int fd, const std::string& relative,
                             bool* empty = nullptr) {
    ASSIGN_OR_RETURN(std::vector<std::string> names,
                     FolderNames(fd, relative.empty() ? upper_ : relative));
    size_t kept = 0;
    for (const std::string& name : names) {
      std::string child = ChildPath(relative, name);
      struct stat st;
      if (::fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        return LastErrnoStatus(absl::StrCat("stat upper ", VisiblePath(child)));
      }
      bool folder = S_ISDIR(st.st_mode);
      if (child == ".git") {
        // git's own files follow the project: a command's commit or index
        // refresh lasts for that command only.
        RETURN_IF_ERROR(RemoveTree(JoinPath(upper_, child)));
        continue;
      }
      ASSIGN_OR_RETURN(bool ignored, Ignored(child, folder));
      if (ignored) {
        ++kept;
        continue;
      }
      if (!folder) {
        // A file, a link or a whiteout: the project's version shows again.
        if (::unlinkat(fd, name.c_str(), 0) != 0) {
          return LastErrnoStatus(
              absl::StrCat("unlink upper ", VisiblePath(child)));
        }
        continue;
      }
      UniqueFd sub = OpenSubfolder(fd, name);
      if (!sub)
        return LastErrnoStatus(absl::StrCat("open upper ", VisiblePath(child)));
      // A replaced folder merges with the project's again.
      if (::fremovexattr(sub.get(), kOpaque) != 0 && errno != ENODATA) {
        return LastErrnoStatus(
            absl::StrCat("remove the opaque mark of ", VisiblePath(child)));
      }
      bool sub_empty = false;
      RETURN_IF_ERROR(RefreshFolder(sub.get(), child, &sub_empty));
      if (sub_empty) {
        if (::unlinkat(fd, name.c_str(), AT_REMOVEDIR) != 0) {
          return LastErrnoStatus(
              absl::StrCat("rmdir upper ", VisiblePath(child)));
        }
        continue;
      }
      ++kept;
    }
    if (empty != nullptr) *empty = kept == 0;
    return absl::OkStatus();
  }

  std::string project_, upper_, work_, merged_;
  std::unique_ptr<IgnoreRules> rules_;
  bool mounted_ = false;
};

}  // namespace

std::unique_ptr<StagingBackend> MakeOverlayBackend(const std::string& project,
                                                   const std::string& folder) {
  return std::make_unique<OverlayBackend>(project, folder);
}

}  // namespace garuda
