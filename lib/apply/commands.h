// The subcommands of garuda-applier, as a library so that main.cc only
// parses flags.
#ifndef GARUDA_LIB_APPLY_COMMANDS_H_
#define GARUDA_LIB_APPLY_COMMANDS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
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
  // main.cc's LockDownAs(Role::kApplier), called once everything the
  // command needs is open, with the paths it may still write (the project
  // and the undo store, or none); empty: the command refuses to run.
  LockDownCall lock_down;
};

// Runs one subcommand; returns the exit code. Messages go to `err`, the
// one-line outcome for the model (and show's text) to `out`, the question
// to the terminal.
int RunApplierCommand(const ApplierCommand& command);

}  // namespace garuda

#endif  // GARUDA_LIB_APPLY_COMMANDS_H_
