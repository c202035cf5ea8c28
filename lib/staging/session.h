// `garuda-stager run --mode staged`: a command runs in the sandbox over a
// staging view of the project, and its changes come out as a ChangeSet for
// garuda-applier. The real project is read-only for the command and for the
// stager (a read-only bind in the stager's own mount namespace).
//
// The first line on stderr names the backend. A staging view that cannot
// be made or brought up to date stops the call with the reason (exit 125):
// staged mode never runs a command in direct mode instead.
#ifndef GARUDA_LIB_STAGING_SESSION_H_
#define GARUDA_LIB_STAGING_SESSION_H_

#include <string>
#include <vector>

#include "lib/policy/merge.h"

namespace garuda {

// The test seam: when this environment variable is "1", making a staging
// view fails. It can only stop a staged command, never run one another
// way, so honouring it in the real program is harmless.
inline constexpr char kFailStagingVariable[] = "GARUDA_TEST_ONLY_FAIL_STAGING";
// The test seam for an incomplete list: a number lowers the walk's file
// limit (never raises it).
inline constexpr char kFileLimitVariable[] = "GARUDA_TEST_ONLY_FILE_LIMIT";

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

// Returns the command's exit code (128 + signal, 124 timed out), or 125 when
// nothing was run. The ChangeSet goes to `out`, else to stdout when it is
// not a terminal; on a terminal the summary and the diff are printed.
int RunStagedCommand(const MergedSettings& settings,
                     const StagedRunRequest& request);

// `garuda-stager end --session NAME`: removes the named session's view.
int EndStagedSession(const std::string& project, const std::string& session);

}  // namespace garuda

#endif  // GARUDA_LIB_STAGING_SESSION_H_
