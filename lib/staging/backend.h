// The staging backends: where a staged command's writes go, and how the
// change list is made.
//
//   overlay: overlayfs with the project as its lower layer, the writes in
//            <folder>/upper; the list is a walk of the upper layer, so its
//            cost follows the size of the change.
//   copy:    a copy of the project in <folder>/copy (a reflink where the
//            file system shares blocks); the list compares both trees.
//
// Keeping the view up to date (Refresh, before each command of a named
// session): every path that git does not ignore is put back to the
// project's state, so the person's edits and applied changes show, and a
// change that was discarded is gone. Ignored paths (build outputs) stay;
// .git follows the project (git's own writes last one command).
#ifndef GARUDA_LIB_STAGING_BACKEND_H_
#define GARUDA_LIB_STAGING_BACKEND_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/changeset/builder.h"
#include "lib/changeset/changeset.h"

namespace garuda {

class StagingBackend {
 public:
  virtual ~StagingBackend() = default;
  virtual std::string name() const = 0;
  // One line for a person: what the view is made of.
  virtual std::string Describe() const = 0;
  // Makes the view in a new, empty session folder.
  virtual absl::Status Create() = 0;
  // Before each command of a reused session.
  virtual absl::Status Refresh() = 0;
  // Whether Refresh() would change nothing now (so that the next view may
  // be mounted ahead; false when not known).
  virtual bool NothingToRefresh() { return false; }
  // In the stager's mount namespace: the folder to bind over the project.
  virtual absl::StatusOr<std::string> Mount() = 0;
  // Before the folder is removed.
  virtual void Unmount() {}
  // After the command. Changes of paths the command did not write are left
  // out (a copy also differs where the person edited the project).
  virtual absl::StatusOr<ChangeSet> List(const BuildOptions& options) = 0;
  // The view's root for the paths of the list (upper layer or copy).
  virtual std::string ListedRoot() const = 0;
  // garuda-stager serve: this process runs several commands on the view,
  // one at a time, and every process of a command ends with it. The backend
  // may then keep its state in memory and learn what changed from watches
  // instead of walking (the copy backend does).
  virtual void ServeSeveralCommands() {}
};

// `kind` is "overlay" or "copy"; `folder` the session folder.
std::unique_ptr<StagingBackend> MakeStagingBackend(const std::string& kind,
                                                   const std::string& project,
                                                   const std::string& folder);

// One file each: overlay_backend.cc, copy_backend.cc.
std::unique_ptr<StagingBackend> MakeOverlayBackend(const std::string& project,
                                                   const std::string& folder);
std::unique_ptr<StagingBackend> MakeCopyBackend(const std::string& project,
                                                const std::string& folder);

}  // namespace garuda

#endif  // GARUDA_LIB_STAGING_BACKEND_H_
