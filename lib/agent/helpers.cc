#include "lib/agent/helpers.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"

namespace garuda {
namespace agent {
namespace {

absl::StatusOr<std::unique_ptr<ipc::HelperProcess>> SpawnHelper(
    std::vector<std::string> argv,
    ipc::ChannelOptions channel = ipc::ChannelOptions()) {
  ipc::HelperOptions options;
  options.argv = std::move(argv);
  options.channel = channel;
  // Ctrl-C at the terminal is for the agent (cancel the request), not for
  // its helpers: a helper that died would stop the session.
  options.new_process_group = true;
  // A change list or a command's output can be large; the stager streams
  // change lists in a memfd, so frames stay well under this.
  options.channel.max_frame_bytes = 4 << 20;
  absl::StatusOr<std::unique_ptr<ipc::HelperProcess>> process =
      ipc::HelperProcess::Spawn(options);
  if (!process.ok()) {
    return absl::Status(process.status().code(),
                        absl::StrCat("starting ", Basename(options.argv[0]),
                                     ": ", process.status().message()));
  }
  return process;
}

}  // namespace

HelperPaths HelperPathsIn(const std::string& dir) {
  return {HelperPath(dir, kAuditorProgram), HelperPath(dir, kBudgeterProgram),
          HelperPath(dir, kStagerProgram), HelperPath(dir, kApplierProgram)};
}

absl::Status CheckHelperPaths(const std::string& dir,
                              const HelperPaths& paths) {
  return CheckHelpers(
      dir, {paths.auditor, paths.budgeter, paths.stager, paths.applier});
}

absl::StatusOr<std::unique_ptr<Helpers>> Helpers::Start(
    const HelpersOptions& options) {
  std::unique_ptr<Helpers> helpers(new Helpers());
  std::vector<std::string> weaker;
  if (!options.accept_weaker_lockdown.empty()) {
    weaker.push_back("--accept-weaker-lockdown=" +
                     options.accept_weaker_lockdown);
  }
  std::vector<std::string> auditor = {
      options.paths.auditor, "serve", "--channel-fd=3", "--project",
      options.audit_project.empty() ? options.project : options.audit_project};
  auditor.insert(auditor.end(), weaker.begin(), weaker.end());
  ASSIGN_OR_RETURN(helpers->auditor_, SpawnHelper(auditor));
  helpers->audit_ = AuditChannelClient(helpers->auditor_.get());

  std::vector<std::string> budgeter = {
      options.paths.budgeter, "serve", "--channel-fd=3",
      "--session=" + options.session_id,
      absl::StrCat("--limit=", options.token_limit)};
  budgeter.insert(budgeter.end(), weaker.begin(), weaker.end());
  ASSIGN_OR_RETURN(helpers->budgeter_,
                   SpawnHelper(budgeter, budget::BudgeterChannelOptions()));
  helpers->budget_ =
      std::make_unique<budget::BudgetClient>(helpers->budgeter_.get());

  std::vector<std::string> consent = {"--consent=" + options.consent};
  if (!options.job_file.empty()) consent.push_back("--job=" + options.job_file);
  if (!options.consent_terminal.empty()) {
    consent.push_back("--terminal=" + options.consent_terminal);
  }
  std::vector<std::string> stager = {
      options.paths.stager, "serve",        "--channel-fd=3",   "--project",
      options.project,      "--session-id", options.session_id, "--quiet"};
  stager.insert(stager.end(), consent.begin(), consent.end());
  if (!options.command_mode.empty()) {
    stager.push_back("--mode=" + options.command_mode);
  }
  if (!options.backend.empty())
    stager.push_back("--backend=" + options.backend);
  stager.insert(stager.end(), weaker.begin(), weaker.end());
  ASSIGN_OR_RETURN(helpers->stager_process_, SpawnHelper(stager));
  helpers->stager_ = StagerChannelClient(helpers->stager_process_.get());

  std::vector<std::string> applier = {options.paths.applier, "serve",
                                      "--channel-fd=3", "--project",
                                      options.project, "--quiet"};
  applier.insert(applier.end(), consent.begin(), consent.end());
  if (options.apply_staged) applier.push_back("--apply-staged");
  applier.insert(applier.end(), weaker.begin(), weaker.end());
  ASSIGN_OR_RETURN(helpers->applier_process_, SpawnHelper(applier));
  helpers->applier_ = ApplierChannelClient(helpers->applier_process_.get());
  return helpers;
}

Helpers::~Helpers() {
  if (!stopped_) Stop().IgnoreError();
}

absl::Status Helpers::CheckAlive() {
  for (ipc::HelperProcess* process :
       {auditor_.get(), budgeter_.get(), stager_process_.get(),
        applier_process_.get()}) {
    if (process == nullptr) continue;
    RETURN_IF_ERROR(process->CheckAlive());
  }
  return absl::OkStatus();
}

absl::Status Helpers::Stop() {
  stopped_ = true;
  absl::Status first;
  auto keep = [&first](absl::Status status) {
    if (first.ok() && !status.ok()) first = std::move(status);
  };
  if (stager_process_ != nullptr && stager_process_->CheckAlive().ok()) {
    keep(stager_->End());
  }
  if (auditor_ != nullptr && auditor_->CheckAlive().ok()) {
    keep(audit_->Close());
  }
  for (ipc::HelperProcess* process :
       {applier_process_.get(), stager_process_.get(), budgeter_.get(),
        auditor_.get()}) {
    if (process == nullptr) continue;
    keep(process->Stop());
  }
  return first;
}

}  // namespace agent
}  // namespace garuda
