// The subcommands of garuda-applier (show, apply, undo, recover, diff-dirs),
// each in two steps so that main.cc makes the lockdown call between them:
// Open (the project, the undo store, the terminal, and what the command may
// still write) and Run (everything after the lockdown).
#ifndef GARUDA_LIB_APPLY_COMMANDS_H_
#define GARUDA_LIB_APPLY_COMMANDS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lib/apply/outcome.h"
#include "lib/base/unique_fd.h"
#include "lib/lockdown/roles.h"

namespace garuda {

// Exit codes of garuda-applier.
inline constexpr int kExitApplied =
    0;  // also: no changes; a dry run that would apply
inline constexpr int kExitError = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitDiscarded = 3;
inline constexpr int kExitConflict = 4;
inline constexpr int kExitRefused = 5;

enum class ApplyMode { kNone, kAsk, kYes, kDryRun };

struct ApplierCommand {
  std::string name;     // show, apply, undo, recover, diff-dirs
  std::string project;  // --project; empty: the current folder
  ApplyMode mode = ApplyMode::kNone;
  bool list = false;            // undo --list
  std::string undo_id;          // undo ID
  std::string staged;           // diff-dirs --staged (a full copy)
  std::string upper;            // diff-dirs --upper (an overlay upper layer)
  std::string command;          // diff-dirs --command: shown in the question
  uint64_t file_limit = 50000;  // diff-dirs --file-limit
  std::string undo_root;        // empty: ~/.garuda/undo
  std::string tty = "/dev/tty";
  int in = 0, out = 1, err = 2;
};

// What a subcommand opened before the lockdown, and `needs`: the paths it
// may still write after it (the project and the undo store for apply, undo
// and recover; nothing for show, diff-dirs, undo --list, apply --dry-run).
struct OpenedCommand {
  RoleNeeds needs;
  std::string project;                  // real path
  std::optional<ApplierPlaces> places;  // apply, undo, recover
  UniqueFd root;                        // show, apply: the project folder
  // apply --ask: the terminal, opened now since the lockdown leaves no way
  // to open it later; its error is said only when the question is due.
  absl::StatusOr<UniqueFd> tty = absl::FailedPreconditionError("no question");
};

// The Open step: nothing is written yet (except the undo store's folder).
// An error is for FailApplierCommand.
absl::StatusOr<OpenedCommand> OpenShow(const ApplierCommand& command);
absl::StatusOr<OpenedCommand> OpenApply(const ApplierCommand& command);
absl::StatusOr<OpenedCommand> OpenUndo(const ApplierCommand& command);
absl::StatusOr<OpenedCommand> OpenRecover(const ApplierCommand& command);
absl::StatusOr<OpenedCommand> OpenDiffDirs(const ApplierCommand& command);

// The Run step, once locked down; returns the exit code. Messages go to
// `err`, the one-line outcome for the model (and show's text) to `out`, the
// question to the terminal.
int RunShow(const ApplierCommand& command, OpenedCommand& opened);
int RunApply(const ApplierCommand& command, OpenedCommand& opened);
int RunUndo(const ApplierCommand& command, OpenedCommand& opened);
int RunRecover(const ApplierCommand& command, OpenedCommand& opened);
int RunDiffDirs(const ApplierCommand& command, OpenedCommand& opened);

// Says why an Open step or the lockdown failed on `err`; returns the exit
// code: 2 for a usage error (a terminal where a change list belongs), else 1.
int FailApplierCommand(const ApplierCommand& command,
                       const absl::Status& status);

}  // namespace garuda

#endif  // GARUDA_LIB_APPLY_COMMANDS_H_
