// garuda-applier: the only program that writes the project in staged mode.
// It applies a change list after the conflict check, all or nothing, keeps
// the pre-images for undo, and asks the person first with --ask.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "lib/apply/commands.h"
#include "lib/apply/service.h"
#include "lib/base/flags.h"
#include "lib/lockdown/roles.h"

ABSL_FLAG(std::string, project, "",
          "the project folder (default: the current folder)");
ABSL_FLAG(bool, ask, false, "apply: show the change and ask on the terminal");
ABSL_FLAG(bool, yes, false, "apply: apply without asking");
ABSL_FLAG(bool, dry_run, false,
          "apply: run the checks (refusals, conflicts) and write nothing");
ABSL_FLAG(bool, list, false, "undo: list the recorded applies, newest first");
ABSL_FLAG(std::string, staged, "",
          "diff-dirs: a full copy of the project that a command changed");
ABSL_FLAG(std::string, upper, "",
          "diff-dirs: the upper layer of an overlay over the project");
ABSL_FLAG(uint64_t, file_limit, 50000,
          "diff-dirs: more paths than this make the list incomplete");
ABSL_FLAG(std::string, command, "",
          "diff-dirs: the command that made the change, shown in the question");
ABSL_FLAG(bool, quiet, false,
          "serve: no \"serving\" line on stderr (errors are still printed)");
ABSL_FLAG(int, channel_fd, -1,
          "serve: the descriptor of garuda-agent's channel (one end of a Unix "
          "stream socketpair)");
ABSL_FLAG(std::string, consent, "rules",
          "serve: who agrees to a change: \"rules\" (only an allow rule of "
          "the settings), \"terminal\" (ask the person on --terminal) or "
          "\"relayed\" (the agent relays the answer; lib/consent)");
ABSL_FLAG(bool, apply_staged, false,
          "serve --consent=rules: apply a command's complete change list "
          "without a question unless a rule denies or asks about one of its "
          "paths (garuda-agent -p --apply-staged; the decision says so)");
ABSL_FLAG(std::string, terminal, "/dev/tty",
          "serve --consent=terminal: the terminal to ask on");
ABSL_FLAG(std::string, job, "",
          "serve: the applier of a job (T6): read this job file, add its "
          "rules, and refuse any change list with a path outside its "
          "writeScope");
ABSL_FLAG(std::string, undo_root, "",
          "apply, undo, recover, serve: the undo store (default: "
          "~/.garuda/undo)");
ABSL_FLAG(std::string, accept_weaker_lockdown, "",
          "run on a kernel without Landlock or seccomp, for this reason "
          "(what is missing is said on stderr)");

namespace {

constexpr char kUsage[] = R"(applies a command's change list to the project.

The change list (a ChangeSet stream) comes on standard input, from
`garuda-stager run --mode staged` or `garuda-applier diff-dirs`.

  garuda-applier show [--project DIR] < changes
      the change as the question shows it: file list with counts, diff with
      hidden characters made visible (cut at 60 000 characters)
  garuda-applier apply [--project DIR] (--ask | --yes | --dry-run) < changes
      conflict check, then all or nothing; --ask asks on /dev/tty with one
      key: a apply, d discard, c choose files (a or d for each, then the
      chosen ones are applied all or nothing and the rest discarded),
      v view in the pager (space/b page, / search, q quit); Ctrl-C or end
      of input discards. A list that garuda-agent -p kept in its session
      folder (~/.garuda/sessions/ID/staged/N.changeset) is reviewed so.
  garuda-applier undo [--project DIR] (--list | ID)
      list the recorded applies, or restore the project as it was before one
  garuda-applier serve --channel-fd=N [--project DIR] [--undo-root DIR]
                       [--consent rules|terminal|relayed] [--terminal TTY]
                       [--apply-staged]
                       [--job FILE]
      serve garuda-agent's session channel (proto/applier_service.proto):
      ApplyChangeSet (the list in a sealed memfd passed with the request;
      the applier decides itself: it asks the person on the terminal, or
      applies only what an allow rule of the settings permits) and
      UndoApply (an undo id, or the session's last apply); with
      --apply-staged (rules only) a command's changes are applied without
      a question unless a rule denies or asks about one of their paths;
      with --job FILE (a job's applier, garuda-agent run) the job's rules
      are added and any change list with a path outside the job file's
      writeScope is refused
  garuda-applier recover [--project DIR] [--undo-root DIR]
      finish or reverse an apply that was interrupted (a kill, a crash, a
      power loss) and say which; apply and undo do this first on their own
  garuda-applier diff-dirs [--project DIR] (--staged COPY | --upper UPPER)
                           [--command TEXT] [--file-limit N] > changes
      the change list of a staged copy or of an overlay upper layer

Every subcommand takes --accept-weaker-lockdown=WHY to run on a kernel
without Landlock or seccomp.

Exit codes: 0 applied (or no changes; recover: done, the line on standard
output says "finished" or "reversed"), 1 error, 2 usage, 3 discarded,
4 conflict (nothing written), 5 refused (nothing written).)";

void Say(const std::string& line) {
  std::fprintf(stderr, "garuda-applier: %s\n", line.c_str());
}

int Usage(const std::string& why) {
  std::fprintf(stderr, "garuda-applier: %s\n\n%s\n", why.c_str(), kUsage);
  return garuda::kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args = garuda::ParseProgramFlags(argc, argv, kUsage);
  garuda::RequireFolderFlag("garuda-applier", "project",
                            absl::GetFlag(FLAGS_project));
  if (args.size() < 2) return Usage("a subcommand is needed");

  // The lockdown each subcommand takes once it has opened what it needs
  // (lib/apply fills in what it may still write: the project and the undo
  // store for an apply or an undo, nothing for show, diff-dirs, undo --list);
  // a kernel without Landlock or seccomp is a refusal unless the person
  // accepted less.
  const garuda::WeakerLockdown weaker{
      absl::GetFlag(FLAGS_accept_weaker_lockdown), Say};
  const garuda::LockDownCall lock_down =
      garuda::LockDownCallFor(garuda::Role::kApplier, weaker);

  if (args[1] == "serve") {
    if (args.size() != 2) return Usage("serve takes no arguments");
    if (absl::GetFlag(FLAGS_channel_fd) < 0) {
      return Usage("serve needs --channel-fd");
    }
    garuda::ApplierServeOptions options;
    options.channel_fd = absl::GetFlag(FLAGS_channel_fd);
    options.project = absl::GetFlag(FLAGS_project);
    options.undo_root = absl::GetFlag(FLAGS_undo_root);
    absl::StatusOr<garuda::ConsentMode> consent =
        garuda::ParseConsentMode(absl::GetFlag(FLAGS_consent));
    if (!consent.ok()) return Usage(std::string(consent.status().message()));
    options.consent.mode = *consent;
    options.consent.terminal = absl::GetFlag(FLAGS_terminal);
    options.consent.apply_staged = absl::GetFlag(FLAGS_apply_staged);
    options.job_file = absl::GetFlag(FLAGS_job);
    if (!absl::GetFlag(FLAGS_quiet)) options.log = Say;
    // Open: the channel, the project, the undo store, the rules and the
    // terminal; lock down to writing those two places; serve.
    absl::StatusOr<garuda::OpenedApplier> opened =
        garuda::OpenApplierServe(options);
    absl::Status served = opened.status();
    if (served.ok()) {
      garuda::RoleNeeds needs;
      needs.writable_paths = opened->writable_paths();
      served =
          garuda::LockDownAs(garuda::Role::kApplier, needs, weaker).status();
    }
    if (served.ok()) served = garuda::ServeApplier(*opened, options);
    if (!served.ok()) {
      Say(absl::StrCat("serve: ", served.message()));
      return garuda::kExitError;
    }
    return garuda::kExitApplied;
  }
  if (absl::GetFlag(FLAGS_apply_staged)) {
    return Usage("--apply-staged is for serve");
  }
  garuda::ApplierCommand command;
  command.name = args[1];
  command.undo_root = absl::GetFlag(FLAGS_undo_root);
  command.project = absl::GetFlag(FLAGS_project);
  command.list = absl::GetFlag(FLAGS_list);
  command.staged = absl::GetFlag(FLAGS_staged);
  command.upper = absl::GetFlag(FLAGS_upper);
  command.command = absl::GetFlag(FLAGS_command);
  command.file_limit = absl::GetFlag(FLAGS_file_limit);
  int modes = absl::GetFlag(FLAGS_ask) + absl::GetFlag(FLAGS_yes) +
              absl::GetFlag(FLAGS_dry_run);
  if (absl::GetFlag(FLAGS_ask)) command.mode = garuda::ApplyMode::kAsk;
  if (absl::GetFlag(FLAGS_yes)) command.mode = garuda::ApplyMode::kYes;
  if (absl::GetFlag(FLAGS_dry_run)) command.mode = garuda::ApplyMode::kDryRun;

  if (command.name == "apply") {
    if (modes != 1)
      return Usage("apply needs exactly one of --ask, --yes, --dry-run");
    if (args.size() != 2) return Usage("apply takes no arguments");
  } else if (command.name == "undo") {
    if (command.list == (args.size() == 3))
      return Usage("undo needs --list or one ID");
    if (args.size() > 3) return Usage("undo takes one ID");
    if (args.size() == 3) command.undo_id = args[2];
  } else if (command.name == "diff-dirs") {
    if (command.staged.empty() == command.upper.empty()) {
      return Usage("diff-dirs needs one of --staged or --upper");
    }
  } else if (command.name == "show" || command.name == "recover") {
    if (args.size() != 2) {
      return Usage(absl::StrCat(command.name, " takes no arguments"));
    }
  } else {
    return Usage(absl::StrCat("unknown subcommand ", command.name));
  }
  if (command.name != "apply" && modes != 0) {
    return Usage("--ask, --yes and --dry-run are for apply");
  }
  // Each subcommand opens what it needs, then locks down: writes only to the
  // project and the undo store (apply, undo), or nowhere; no network.
  command.lock_down = lock_down;
  return garuda::RunApplierCommand(command);
}
