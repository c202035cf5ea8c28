// The copy backend (backend.h): a copy of the project in <folder>/copy,
// kept in step by copy_sync.h and listed after each command.
#include <fcntl.h>
#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <unordered_set>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"
#include "lib/base/visible.h"
#include "lib/changeset/rules.h"
#include "lib/staging/backend.h"
#include "lib/staging/copy_observe.h"
#include "lib/staging/copy_sync.h"
#include "lib/staging/folders.h"
#include "lib/staging/tree_copy.h"
#include "lib/staging/tree_watch.h"

namespace garuda {
namespace {

// "1": the copy backend in serve mode walks both trees at every command, as
// without its watches (bench/staging/ measures both).
constexpr char kWalkVariable[] = "GARUDA_STAGER_WALK";

// The copy backend's first snapshot, from what the copy saw: no file is
// read again. A pair is recorded only where the source did not change while
// it was copied and is not racy (its ctime is older than the start of the
// copy, as copy_sync.h has it); the others are compared at the next
// refresh. Returns once the clock has passed the newest ctime recorded on
// the copy's side, so that any later write there shows.
CopySnapshot FirstSnapshot(const std::vector<CopiedPath>& paths,
                           const struct timespec& started) {
  CopySnapshot snapshot;
  snapshot.Reserve(paths.size());
  int64_t newest = 0;
  for (const CopiedPath& path : paths) {
    newest = std::max(newest, TimespecNanoseconds(path.copy.st_ctim));
    if (S_ISDIR(path.copy.st_mode) || !path.source_steady ||
        TimespecNanoseconds(path.source.st_ctim) >=
            TimespecNanoseconds(started)) {
      snapshot.RecordCopy(path.relative, path.copy);
    } else {
      snapshot.Record(path.relative, path.source, path.copy);
    }
  }
  WaitForClockPast(newest);
  return snapshot;
}

class CopyBackend : public StagingBackend {
 public:
  CopyBackend(std::string project, std::string folder)
      : project_(std::move(project)),
        copy_(JoinPath(folder, "copy")),
        method_file_(JoinPath(folder, "copy-method")),
        snapshot_file_(JoinPath(folder, "copy-snapshot")),
        known_file_(JoinPath(folder, "copy-known")) {}

  std::string name() const override { return "copy"; }
  std::string Describe() const override {
    absl::StatusOr<std::string> method = ReadFileToString(method_file_);
    return absl::StrCat(method.ok() ? *method : "a copy", " of the project in ",
                        copy_);
  }

  absl::Status Create() override {
    RETURN_IF_ERROR(RemoveTree(copy_));  // left by a start that failed
    ::unlink(known_file_.c_str());
    ::unlink(snapshot_file_.c_str());
    struct timespec started;
    ::clock_gettime(CLOCK_REALTIME_COARSE, &started);
    // One walk: the copy lists, counts (refusing past a limit before any
    // file is copied), copies, and gives the lstat pairs of the first
    // snapshot.
    CopyLimits limits;
    limits.files = kCopyFileLimit;
    limits.bytes = kCopyByteLimit;
    CopyStats stats;
    std::vector<CopiedPath> paths;
    CopyRefusal refused = CopyRefusal::kNone;
    absl::Status copied =
        CopyProjectTree(project_, copy_, limits, &stats, &paths, &refused);
    if (refused == CopyRefusal::kFiles) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the project has more than ", kCopyFileLimit,
          " files, the copy backend's limit; use the overlay backend "
          "(\"backend\": \"overlay\") or direct mode"));
    }
    if (refused == CopyRefusal::kBytes) {
      return absl::FailedPreconditionError(
          "the project holds more than 2 GB and this file system cannot "
          "share blocks (no reflink), so a plain copy is refused; use the "
          "overlay backend (\"backend\": \"overlay\") or direct mode");
    }
    RETURN_IF_ERROR(copied);
    std::string method = stats.copied == 0 && stats.reflinked > 0
                             ? "a reflink copy"
                             : (stats.reflinked > 0 ? "a partly reflinked copy"
                                                    : "a plain copy");
    RETURN_IF_ERROR(WriteFileAtomically(method_file_, method, 0600));
    snapshot_ = FirstSnapshot(paths, started);
    return snapshot_.Save(snapshot_file_);
  }

  // Only paths whose lstat results differ from the snapshot are looked at:
  // the cost follows what changed, plus one lstat per project path. The
  // copy's side comes from the snapshot when the marker file says that the
  // walk after the last command recorded it and nothing wrote it since
  // (only the stager and its commands write the copy, one call at a time
  // under the session lock). The marker is removed before anything else
  // here, so a call that dies after this point leaves the copy unknown.
  absl::Status Refresh() override {
    if (serving_) return RefreshServing();
    absl::StatusOr<std::string> mark = ReadFileToString(known_file_);
    if (::unlink(known_file_.c_str()) != 0 && errno != ENOENT) {
      return LastErrnoStatus(absl::StrCat("unlink(", known_file_, ")"));
    }
    bool known = mark.ok() && !mark->empty() && *mark == SnapshotIdentity();
    // A process that serves several commands (garuda-stager serve) still
    // holds the snapshot it saved after the last one: the same file, as
    // the mark says.
    absl::StatusOr<CopySnapshot> previous =
        known && *mark == saved_identity_ ? std::move(snapshot_)
                                          : CopySnapshot::Load(snapshot_file_);
    saved_identity_.clear();
    // A damaged snapshot costs a full comparison, never a wrong one.
    if (!previous.ok()) {
      previous = CopySnapshot();
      known = false;
    }
    SyncOptions sync;
    sync.copy_known = known;
    sync.rules_project = project_;  // opened only if a path needs them
    SyncStats counts;
    ASSIGN_OR_RETURN(snapshot_, SyncCopy(project_, copy_, *previous, nullptr,
                                         sync, &counts));
    // Not saved here: the list saves the state after the command. Should
    // this call die first, the older file on disk is still sound (its
    // pairs name lstat results that have changed since).
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> Mount() override {
    struct stat st;
    if (::stat(copy_.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat("the staging copy ", copy_, " is missing"));
    }
    return copy_;
  }

  absl::StatusOr<ChangeSet> List(const BuildOptions& options) override {
    if (serving_) return ListServing(options);
    absl::StatusOr<CopySnapshot> observed;
    ASSIGN_OR_RETURN(ChangeSet list,
                     ListByWalk(options, nullptr, nullptr, &observed));
    if (observed.ok()) {
      RETURN_IF_ERROR(observed->Save(snapshot_file_));
      // The mark names the snapshot file it vouches for (inode, size), so
      // that after a crash it can only match the file written here. Not
      // synced: lost, the next refresh walks the copy.
      ASSIGN_OR_RETURN(
          UniqueFd mark,
          OpenFile(known_file_, O_WRONLY | O_CREAT | O_TRUNC, 0600));
      saved_identity_ = SnapshotIdentity();
      RETURN_IF_ERROR(WriteAll(mark.get(), saved_identity_));
      snapshot_ = *std::move(observed);
    } else {
      // The next refresh walks the copy (the marker is absent).
      RETURN_IF_ERROR(snapshot_.Save(snapshot_file_));
    }
    return list;
  }
  std::string ListedRoot() const override { return copy_; }

  // No change, and nothing written in an ignored folder to count (the
  // repository is not even opened).
  static ChangeSet NoChange(const BuildOptions& options) {
    ChangeSet list;
    list.header.set_project_root(options.project);
    list.header.set_source("copy");
    list.header.set_command(options.command);
    return list;
  }

  // One walk of the copy (ObserveCopy) finds what the command wrote and
  // records the copy's state for the next refresh (`observed`; an error
  // there only makes the list look at every folder); the list then skips
  // the folders in which nothing changed. (Not while a lowered file limit,
  // a test seam, wants every path counted.) A path the command did not
  // write is not its change, whatever the project holds now (a person's
  // edit during the command is not listed as the command's).
  absl::StatusOr<ChangeSet> ListByWalk(
      const BuildOptions& options,
      const std::function<void(const std::string&, int)>& before_read,
      std::set<std::string>* links, absl::StatusOr<CopySnapshot>* observed) {
    BuildOptions with_snapshot = options;
    with_snapshot.unchanged = [this](const std::string& relative,
                                     const struct stat& staged) {
      return snapshot_.CopyUnchanged(relative, staged);
    };
    std::unordered_set<std::string> unchanged;
    *observed = ObserveCopy(copy_, snapshot_, &unchanged, before_read, links);
    if (!observed->ok() || options.file_limit < kDefaultFileLimit) {
      return BuildFromCopy(copy_, with_snapshot);
    }
    if (unchanged.count("") != 0) return NoChange(options);
    with_snapshot.unchanged_folder = [&unchanged](const std::string& relative,
                                                  const struct stat&) {
      return unchanged.count(relative) != 0;
    };
    return BuildFromCopy(copy_, with_snapshot);
  }

  // The snapshot made by Create() stays in memory from here on, and the
  // watches of both trees say which paths to look at (see RefreshServing
  // and ListServing). Without it (a view reopened, not made by this
  // process) every call works as for the CLI.
  void ServeSeveralCommands() override {
    if (snapshot_.size() == 0) return;
    serving_ = true;
    copy_known_ = true;  // Create() recorded the copy as it made it
    // The file on disk is not saved again: no marker may vouch for it. (A
    // serve view is removed at its end, or at the next start after a
    // crash; a reader of the older file would walk the copy and compare.)
    ::unlink(known_file_.c_str());
    // What the copy's start freed goes back to the system: the process
    // that serves the commands stays small.
    ::malloc_trim(0);
  }

 private:
  // Whether `watch` (made here when missing) can say what changed in
  // `root`. When it never can, says why once on stderr.
  bool WatchUsable(std::unique_ptr<TreeWatch>* watch, const std::string& root,
                   const char* label) {
    // The benchmark's seam: the walk, for comparison. It can only make the
    // backend look at more paths, never fewer.
    const char* walk = std::getenv(kWalkVariable);
    if (walk != nullptr && std::string(walk) == "1") return false;
    if (!*watch && !watch_failed_) {
      absl::StatusOr<std::unique_ptr<TreeWatch>> made =
          TreeWatch::Create(root, label);
      if (made.ok()) {
        *watch = *std::move(made);
      } else {
        watch_failed_ = true;
        Notice(absl::StrCat("cannot watch ", label, ": ",
                            made.status().message()));
      }
    }
    if (!*watch) return false;
    if (!(*watch)->broken().empty()) {
      Notice((*watch)->broken());
      return false;
    }
    return true;
  }

  // Once per reason kind, on stderr (the person's terminal).
  void Notice(const std::string& why) {
    if (said_.insert(why).second && said_.size() <= 4) {
      std::fprintf(stderr,
                   "garuda-stager: %s; the copy backend walks the project "
                   "and the copy at each command instead\n",
                   why.c_str());
    }
  }

  // A change of git's ignore rules changes which copy paths must follow
  // the project, anywhere in the tree: walk.
  static bool IgnoreRulesChanged(const TreeWatch::Changes& changes) {
    for (const std::string& path : changes.paths) {
      if (path == ".gitignore" || absl::EndsWith(path, "/.gitignore") ||
          path == ".git" || path == ".git/info" ||
          absl::StartsWith(path, ".git/info/") || path == ".git/config") {
        return true;
      }
    }
    return false;
  }

  // Serve mode, before a command: the paths the project's events named,
  // those the last command changed in the copy, and the files with more
  // than one link are compared; the rest is as the snapshot says. A whole
  // walk (which watches every folder before reading it) when the watch
  // cannot vouch for the project: the first time, after lost events, a
  // change of the ignore rules, a new hard link, an unknown copy.
  absl::Status RefreshServing() {
    // Should this fail part way, the next refresh walks both trees.
    SyncOptions sync;
    sync.copy_known = copy_known_;
    sync.rules_project = project_;  // opened only if a path needs them
    sync.links = &project_links_;
    sync.newest_copy_ctime_ns = copy_ctime_floor_;
    bool walk_asked = walk_next_refresh_ || !copy_known_;
    PathSet pending = std::move(pending_);
    pending_ = PathSet();
    copy_known_ = false;
    walk_next_refresh_ = false;
    SyncStats counts;
    bool walk = true;
    TreeWatch* watch = nullptr;
    if (WatchUsable(&project_watch_, project_, "the project")) {
      watch = project_watch_.get();
      TreeWatch::Changes changes = watch->Drain();
      if (changes.lost && watch->watches() > 0) {
        Notice(
            "events of the project were lost (the inotify queue "
            "overflowed)");
      }
      walk = changes.lost || walk_asked || IgnoreRulesChanged(changes);
      if (!walk) {
        PathSet only;
        only.paths = std::move(changes.paths);
        only.paths.insert(pending.paths.begin(), pending.paths.end());
        only.paths.insert(project_links_.begin(), project_links_.end());
        only.subtrees = std::move(changes.folders);
        only.subtrees.insert(pending.subtrees.begin(), pending.subtrees.end());
        RETURN_IF_ERROR(
            SyncCopyPaths(project_, copy_, only, &snapshot_, sync, &counts));
        // A new hard link: a write through its other names raises no
        // event where the watch looks; the walk finds them all.
        walk = counts.new_link;
      }
      if (walk) {
        watch->BeginWalk();
        sync.before_read = [watch](const std::string& relative, int fd) {
          watch->Watch(relative, fd);
        };
      }
    }
    if (walk) {
      ASSIGN_OR_RETURN(snapshot_, SyncCopy(project_, copy_, snapshot_, nullptr,
                                           sync, &counts));
    }
    copy_known_ = true;  // the snapshot holds the copy as this left it
    // This refresh's own writes to the copy raised events: drained before
    // the command starts, so that the next ones are the command's. (Nothing
    // else writes the copy: commands run one at a time, and every process
    // of a command ends with it.) A folder copied in gets its watches here.
    if (copy_watch_) copy_watch_->Drain();
    return absl::OkStatus();
  }

  // Serve mode, after a command: the copy paths its events named (and the
  // files with more than one link) are what it may have written; the list
  // looks only at them and at their folders. The whole copy is walked (and
  // every folder watched before it is read) when the watch cannot vouch
  // for it: the first command, lost events, a new hard link.
  absl::StatusOr<ChangeSet> ListServing(const BuildOptions& options) {
    BuildOptions with_snapshot = options;
    // A lowered file limit (the test seam) wants every path counted.
    bool skip_folders = options.file_limit >= kDefaultFileLimit;
    TreeWatch* watch = WatchUsable(&copy_watch_, copy_, "the copy")
                           ? copy_watch_.get()
                           : nullptr;
    // Until this list has recorded the command's writes, the snapshot does
    // not know the copy: should it fail, the next refresh walks both trees.
    bool known = copy_known_;
    copy_known_ = false;
    walk_next_refresh_ = true;
    if (watch != nullptr && known) {
      TreeWatch::Changes changes = watch->Drain();
      if (changes.lost && watch->watches() > 0) {
        Notice(
            "events of the copy were lost (the inotify queue "
            "overflowed)");
      }
      if (!changes.lost) {
        PathSet named;
        named.paths = std::move(changes.paths);
        named.subtrees = std::move(changes.folders);
        ObservedPaths seen;
        RETURN_IF_ERROR(
            ObserveCopyPaths(copy_, named, &copy_links_, &snapshot_, &seen));
        if (!seen.new_link) {
          copy_known_ = true;
          walk_next_refresh_ = false;
          copy_ctime_floor_ = seen.newest_ctime_ns;
          pending_.paths = seen.changed;
          pending_.subtrees = std::move(named.subtrees);
          if (skip_folders && seen.touched.empty()) return NoChange(options);
          // The snapshot now has the copy as the command left it: a path
          // is the command's change when it saw it change.
          with_snapshot.unchanged = [this, &seen](const std::string& relative,
                                                  const struct stat& staged) {
            return seen.changed.count(relative) == 0 &&
                   snapshot_.CopyUnchanged(relative, staged);
          };
          if (skip_folders) {
            with_snapshot.unchanged_folder =
                [&seen](const std::string& relative, const struct stat&) {
                  return seen.touched.count(relative) == 0;
                };
          }
          return BuildFromCopy(copy_, with_snapshot);
        }
      }
    }
    // The walk, as for the CLI, with the watches put in place before each
    // folder is read.
    std::function<void(const std::string&, int)> before_read;
    if (watch != nullptr) {
      watch->BeginWalk();
      before_read = [watch](const std::string& relative, int fd) {
        watch->Watch(relative, fd);
      };
    }
    absl::StatusOr<CopySnapshot> observed;
    ASSIGN_OR_RETURN(ChangeSet list,
                     ListByWalk(options, before_read, &copy_links_, &observed));
    // What changed is not known path by path: the next refresh walks.
    copy_ctime_floor_ = 0;
    copy_known_ = observed.ok();
    if (observed.ok()) snapshot_ = *std::move(observed);
    return list;
  }

  // The snapshot file's inode and size; empty when it cannot be read.
  std::string SnapshotIdentity() const {
    struct stat st;
    if (::stat(snapshot_file_.c_str(), &st) != 0) return "";
    return absl::StrCat(st.st_ino, " ", st.st_size, " ", st.st_mtim.tv_sec, ".",
                        st.st_mtim.tv_nsec);
  }

  std::string project_, copy_, method_file_, snapshot_file_, known_file_;
  // Of the copy as the command found it; after the list, as it left it.
  CopySnapshot snapshot_;
  std::string saved_identity_;  // of the file that list saved

  // Serve mode (ServeSeveralCommands).
  bool serving_ = false;
  // snapshot_ holds the copy's full state, and only the stager wrote the
  // copy since (false after a list that could not walk it).
  bool copy_known_ = false;
  bool walk_next_refresh_ = false;
  std::unique_ptr<TreeWatch> project_watch_, copy_watch_;
  bool watch_failed_ = false;
  std::set<std::string> said_;
  // Files with more than one hard link: lstat'ed at every refresh / list.
  std::set<std::string> project_links_, copy_links_;
  // What the last command changed in the copy: the next refresh looks at it.
  PathSet pending_;
  int64_t copy_ctime_floor_ = 0;
};

}  // namespace

std::unique_ptr<StagingBackend> MakeCopyBackend(const std::string& project,
                                                const std::string& folder) {
  return std::make_unique<CopyBackend>(project, folder);
}

}  // namespace garuda
