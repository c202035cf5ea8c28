// garuda-applier: the only program that writes the project in staged mode.
// It applies a change list after the conflict check, all or nothing, keeps
// the pre-images for undo, and asks the person first with --ask.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "cmd/garuda-applier/help.h"
#include "lib/apply/commands.h"
#include "lib/apply/service.h"
#include "lib/base/flags.h"
#include "lib/base/status_macros.h"
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

namespace garuda {
namespace {

namespace help = applier_help;
using Args = std::vector<std::string>;

int Usage(const std::string& why);

void Say(const std::string& line) {
  std::fprintf(stderr, "garuda-applier: %s\n", line.c_str());
}

// How many of --ask, --yes, --dry-run were given.
int Modes() {
  return absl::GetFlag(FLAGS_ask) + absl::GetFlag(FLAGS_yes) +
         absl::GetFlag(FLAGS_dry_run);
}

// Open what the role needs (the channel, the project, the undo store, the
// rules, the terminal) → lock down to writing the project and the undo
// store → serve.
int Serve(const Args& args, const WeakerLockdown& weaker) {
  if (args.size() != 2) return Usage("serve takes no arguments");
  if (absl::GetFlag(FLAGS_channel_fd) < 0) {
    return Usage("serve needs --channel-fd");
  }
  ApplierServeOptions options;
  options.channel_fd = absl::GetFlag(FLAGS_channel_fd);
  options.project = absl::GetFlag(FLAGS_project);
  options.undo_root = absl::GetFlag(FLAGS_undo_root);
  absl::StatusOr<ConsentMode> consent =
      ParseConsentMode(absl::GetFlag(FLAGS_consent));
  if (!consent.ok()) return Usage(std::string(consent.status().message()));
  options.consent.mode = *consent;
  options.consent.terminal = absl::GetFlag(FLAGS_terminal);
  options.consent.apply_staged = absl::GetFlag(FLAGS_apply_staged);
  options.job_file = absl::GetFlag(FLAGS_job);
  if (!absl::GetFlag(FLAGS_quiet)) options.log = Say;
  absl::Status served = [&]() -> absl::Status {
    ASSIGN_OR_RETURN(OpenedApplier opened, OpenApplierServe(options));
    RETURN_IF_ERROR(
        LockDownAs(Role::kApplier, {opened.writable_paths()}, weaker).status());
    return ServeApplier(opened, options);
  }();
  if (served.ok()) return kExitApplied;
  Say(absl::StrCat("serve: ", served.message()));
  return kExitError;
}

// The other subcommands: their own argument check (the usage error, or "")
// → open (and what may still be written: the project and the undo store, or
// nothing) → lock down → run.
template <auto check, auto open, auto run>
int Command(const Args& args, const WeakerLockdown& weaker) {
  ApplierCommand command{args[1], absl::GetFlag(FLAGS_project)};
  command.undo_root = absl::GetFlag(FLAGS_undo_root);
  command.list = absl::GetFlag(FLAGS_list);
  command.staged = absl::GetFlag(FLAGS_staged);
  command.upper = absl::GetFlag(FLAGS_upper);
  command.command = absl::GetFlag(FLAGS_command);
  command.file_limit = absl::GetFlag(FLAGS_file_limit);
  if (absl::GetFlag(FLAGS_ask)) command.mode = ApplyMode::kAsk;
  if (absl::GetFlag(FLAGS_yes)) command.mode = ApplyMode::kYes;
  if (absl::GetFlag(FLAGS_dry_run)) command.mode = ApplyMode::kDryRun;
  if (std::string why = check(args, &command); !why.empty()) return Usage(why);
  if (command.name != "apply" && Modes() != 0) {
    return Usage("--ask, --yes and --dry-run are for apply");
  }
  absl::StatusOr<OpenedCommand> opened = open(command);
  if (!opened.ok()) return FailApplierCommand(command, opened.status());
  if (auto locked = LockDownAs(Role::kApplier, opened->needs, weaker);
      !locked.ok()) {
    return FailApplierCommand(command, locked.status());
  }
  return run(command, *opened);
}

std::string NoArguments(const Args& args, ApplierCommand*) {
  return args.size() == 2 ? "" : args[1] + " takes no arguments";
}
std::string ApplyArguments(const Args& args, ApplierCommand* command) {
  if (Modes() != 1) return "apply needs exactly one of --ask, --yes, --dry-run";
  return NoArguments(args, command);
}
std::string UndoArguments(const Args& args, ApplierCommand* command) {
  if (command->list == (args.size() == 3)) return "undo needs --list or one ID";
  if (args.size() > 3) return "undo takes one ID";
  if (args.size() == 3) command->undo_id = args[2];
  return "";
}
std::string DiffDirsArguments(const Args&, ApplierCommand* command) {
  if (command->staged.empty() != command->upper.empty()) return "";
  return "diff-dirs needs one of --staged or --upper";
}

struct Subcommand {
  const char* name;
  const char* usage;  // its block of the help text (help.h)
  int (*function)(const Args& args, const WeakerLockdown& weaker);
};

const Subcommand kSubcommands[] = {
    {"show", help::kShow, Command<NoArguments, OpenShow, RunShow>},
    {"apply", help::kApply, Command<ApplyArguments, OpenApply, RunApply>},
    {"undo", help::kUndo, Command<UndoArguments, OpenUndo, RunUndo>},
    {"serve", help::kServe, Serve},
    {"recover", help::kRecover, Command<NoArguments, OpenRecover, RunRecover>},
    {"diff-dirs", help::kDiffDirs,
     Command<DiffDirsArguments, OpenDiffDirs, RunDiffDirs>},
};

std::string UsageText() {
  std::string text = help::kIntro;
  for (const Subcommand& row : kSubcommands) text += row.usage;
  return text + help::kOutro;
}

int Usage(const std::string& why) {
  std::fprintf(stderr, "garuda-applier: %s\n\n%s\n", why.c_str(),
               UsageText().c_str());
  return kExitUsage;
}

}  // namespace
}  // namespace garuda

int main(int argc, char** argv) {
  std::vector<std::string> args =
      garuda::ParseProgramFlags(argc, argv, garuda::UsageText());
  garuda::RequireFolderFlag("garuda-applier", "project",
                            absl::GetFlag(FLAGS_project));
  if (args.size() < 2) return garuda::Usage("a subcommand is needed");
  if (args[1] != "serve" && absl::GetFlag(FLAGS_apply_staged)) {
    return garuda::Usage("--apply-staged is for serve");
  }
  // Without Landlock or seccomp: a refusal, unless the person accepted less.
  const garuda::WeakerLockdown weaker{
      absl::GetFlag(FLAGS_accept_weaker_lockdown), garuda::Say};
  for (const garuda::Subcommand& subcommand : garuda::kSubcommands) {
    if (args[1] == subcommand.name) return subcommand.function(args, weaker);
  }
  return garuda::Usage(absl::StrCat("unknown subcommand ", args[1]));
}
