// Staged mode: a command runs in the sandbox over a staging view of the
// project, and its changes come out as a ChangeSet for garuda-applier. The
// real project is read-only for the command and for the stager (a
// read-only bind in the stager's own mount namespace).
//
// StagedView is the view itself, shared by `garuda-stager run --mode
// staged` (one call, or a --session kept across calls) and `garuda-stager
// serve` (one view for the whole channel). A view that cannot be made or
// brought up to date is an error: staged mode never runs a command in
// direct mode instead.
#ifndef GARUDA_LIB_STAGING_SESSION_H_
#define GARUDA_LIB_STAGING_SESSION_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "lib/changeset/changeset.h"
#include "lib/lockdown/roles.h"
#include "lib/policy/merge.h"
#include "lib/staging/backend.h"
#include "lib/staging/folders.h"
#include "sandbox/command_policy.h"
#include "sandbox/probe.h"
#include "sandbox/sandbox.h"

namespace garuda {

// The test seam: when this environment variable is "1", making a staging
// view fails. It can only stop a staged command, never run one another
// way, so honouring it in the real program is harmless.
inline constexpr char kFailStagingVariable[] = "GARUDA_TEST_ONLY_FAIL_STAGING";
// The test seam for an incomplete list: a number lowers the walk's file
// limit (never raises it).
inline constexpr char kFileLimitVariable[] = "GARUDA_TEST_ONLY_FILE_LIMIT";

// The sentence every refusal of staged mode ends with.
inline constexpr char kNothingRunInstead[] =
    "Nothing was run: staged mode never runs a command in direct mode "
    "instead.";

// How long each phase took, printed on stderr when GARUDA_STAGER_TIMINGS=1
// (for bench/staging/).
class StagingTimings {
 public:
  StagingTimings();
  void Mark(const char* phase);
  void Print() const;

 private:
  absl::Time last_;
  std::vector<std::string> phases_;
};

struct StagedViewOptions {
  std::string project;  // real path of the project
  std::string backend;  // "auto", "overlay", "copy"; empty: settings, else auto
  std::string session;  // a named session kept across calls; empty: this
                        // process only (removed at its end, or at the next
                        // start for the project when the process was killed)
  // A probe already made (a full one: serve's at its start; its overlay
  // check decides "auto"); nullptr: a new view runs one quick probe, with
  // the overlay check for "auto".
  const ProbeReport* probe = nullptr;
  StagingTimings* timings = nullptr;  // may be nullptr
  // garuda-stager serve: this process runs several commands on the view
  // (StagingBackend::ServeSeveralCommands).
  bool serves_several = false;
};

// What a staged command did.
struct StagedOutcome {
  RunResult result;
  // Its changes: paths denied to commands are refused, and a path the
  // person changed during the command has a base that matches nothing (a
  // conflict at apply).
  ChangeSet change_set;
  int conflicts = 0;  // paths that also changed in the project meanwhile
};

class StagedView {
 public:
  // Checks the sandbox, makes (or reopens, for a named session) the staging
  // folder and the view. An error says why; nothing was run.
  static absl::StatusOr<std::unique_ptr<StagedView>> Open(
      const MergedSettings& settings, const StagedViewOptions& options);
  // Unmounts the view and removes its folder (unless it is a named
  // session's).
  ~StagedView();
  StagedView(const StagedView&) = delete;
  StagedView& operator=(const StagedView&) = delete;

  const std::string& backend() const { return kind_; }
  // "staged mode, overlay backend: overlayfs over the project, writes in
  // ... (one shot)".
  std::string Describe() const;

  // Enters the stager's own user and mount namespaces and binds the
  // project read-only over itself: from here on neither this process nor
  // anything it starts can write the project. Once per process, while it
  // has one thread.
  absl::Status EnterAndLock();

  // After EnterAndLock(): brings the view up to date with the project
  // (except before the first command of a new view), runs `run` in the
  // sandbox of `request` with the view at the project's path, and lists
  // what it changed. `wall_time_ms` 0 keeps the policy's limit. An error
  // means the view or the list failed (the message says which).
  absl::StatusOr<StagedOutcome> Run(const MergedSettings& settings,
                                    const CommandRequest& request,
                                    const RunOptions& run,
                                    uint64_t wall_time_ms,
                                    const std::string& shown_command);

  // The halves of Run for a process that outlives one call (an MCP server,
  // lib/staging/mcp_host.h), on a view of its own: the view mounted (it
  // stays mounted; the view is never refreshed under a running process) and
  // `request`'s policy with the view bound over the project; then, as often
  // as asked, what was written in the view: with `only_written`, the paths
  // written at or after t0 only (the copy backend always needs it; a
  // process that lives across several lists too). `conflicts` counts the
  // paths that also changed in the project since t0.
  absl::StatusOr<SandboxPolicy> MountedPolicy(const MergedSettings& settings,
                                              const CommandRequest& request);
  absl::StatusOr<ChangeSet> ListWrittenSince(const SandboxPolicy& policy,
                                             const std::string& shown_command,
                                             const struct timespec& t0,
                                             bool only_written, int* conflicts);

 private:
  StagedView(const StagedViewOptions& options) : options_(options) {}
  absl::Status Make(const MergedSettings& settings);
  absl::Status ViewFailed(const absl::Status& status) const;
  // `request`'s policy with `view` (mounted) bound over the project.
  absl::StatusOr<SandboxPolicy> PolicyOver(const MergedSettings& settings,
                                           const CommandRequest& request,
                                           const std::string& view);
  // After a command of a view that serves several: the next command's view
  // mounted on a thread of its own, joined by the next Run().
  void MountAheadForNext();

  StagedViewOptions options_;
  StagingFolder folder_;
  std::string kind_;
  std::unique_ptr<StagingBackend> backend_;
  bool remove_at_end_ = true;
  bool up_to_date_ = false;  // the next Run() needs no refresh
  std::thread mounting_ahead_;
  absl::StatusOr<std::string> mounted_ahead_;  // set by mounting_ahead_
};

struct StagedRunRequest {
  std::string project;            // real path of the project
  std::string working_directory;  // the caller's folder
  std::string backend;            // "auto", "overlay", "copy"; empty: settings
  std::string session;            // empty: one shot
  std::string out;                // the ChangeSet to this file; empty: stdout
  bool network = false;
  std::vector<std::string> write_paths;
  std::vector<std::string> argv;
};

// `garuda-stager end --session NAME`: removes the named session's view.
int EndStagedSession(const std::string& project, const std::string& session);

}  // namespace garuda

#endif  // GARUDA_LIB_STAGING_SESSION_H_
