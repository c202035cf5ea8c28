#include "lib/agent/helpers.h"

#include <sys/mman.h>
#include <unistd.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/status_macros.h"
#include "proto/auditor_service.pb.h"

namespace garuda {
namespace agent {
namespace {

template <typename Reply>
absl::Status CheckReplySeq(const Reply& reply, uint64_t seq,
                           absl::string_view helper) {
  if (reply.seq() != seq) {
    return absl::DataLossError(absl::StrCat(helper, " answered request ",
                                            reply.seq(), " instead of ", seq));
  }
  if (reply.has_error()) return ErrorReplyStatus(reply.error(), helper);
  return absl::OkStatus();
}

class AuditChannel : public AuditSink {
 public:
  explicit AuditChannel(ipc::HelperProcess* process) : process_(process) {}

  absl::Status Record(const audit::AuditEvent& event) override {
    audit::AuditRequest request;
    request.set_seq(++seq_);
    *request.mutable_append()->add_events() = event;
    audit::AuditReply reply;
    RETURN_IF_ERROR(process_->Call(request, &reply));
    RETURN_IF_ERROR(CheckReplySeq(reply, seq_, kAuditorProgram));
    if (!reply.has_appended()) {
      return absl::DataLossError("garuda-auditor: no Appended reply");
    }
    return absl::OkStatus();
  }

  absl::Status Close() override {
    audit::AuditRequest request;
    request.set_seq(++seq_);
    request.mutable_close();
    audit::AuditReply reply;
    RETURN_IF_ERROR(process_->Call(request, &reply));
    return CheckReplySeq(reply, seq_, kAuditorProgram);
  }

 private:
  ipc::HelperProcess* process_;
  uint64_t seq_ = 0;
};

class StagerChannel : public CommandService {
 public:
  explicit StagerChannel(ipc::HelperProcess* process) : process_(process) {}

  absl::StatusOr<stager::SessionDescription> Describe() override {
    stager::StagerRequest request;
    request.mutable_describe();
    ASSIGN_OR_RETURN(stager::StagerReply reply, Call(request, nullptr));
    if (!reply.has_description()) {
      return absl::DataLossError("garuda-stager: no SessionDescription reply");
    }
    return reply.description();
  }

  absl::StatusOr<Ran> Run(const stager::RunCommand& command) override {
    stager::StagerRequest request;
    *request.mutable_run() = command;
    std::vector<UniqueFd> fds;
    ASSIGN_OR_RETURN(stager::StagerReply reply, Call(request, &fds));
    if (!reply.has_result()) {
      return absl::DataLossError("garuda-stager: no CommandResult reply");
    }
    Ran ran;
    ran.result = reply.result();
    if (ran.result.has_change_set()) {
      if (fds.size() != 1) {
        return absl::DataLossError(
            absl::StrCat("garuda-stager: a change list came with ", fds.size(),
                         " descriptors instead of 1"));
      }
      ASSIGN_OR_RETURN(
          ChangeSet change_set,
          ReadChangeSet(fds[0].get(), "garuda-stager's change list"));
      ran.change_set = std::move(change_set);
    }
    return ran;
  }

  absl::Status End() override {
    stager::StagerRequest request;
    request.mutable_end();
    return Call(request, nullptr).status();
  }

 private:
  absl::StatusOr<stager::StagerReply> Call(stager::StagerRequest& request,
                                           std::vector<UniqueFd>* fds) {
    request.set_seq(++seq_);
    stager::StagerReply reply;
    RETURN_IF_ERROR(process_->Call(request, &reply, fds));
    RETURN_IF_ERROR(CheckReplySeq(reply, seq_, kStagerProgram));
    return reply;
  }

  ipc::HelperProcess* process_;
  uint64_t seq_ = 0;
};

// A change list as the frame stream the applier reads, in a memfd at 0.
absl::StatusOr<UniqueFd> ChangeSetMemfd(const ChangeSet& change_set) {
  UniqueFd memory(::memfd_create("changeset", MFD_CLOEXEC));
  if (!memory) return LastErrnoStatus("memfd_create(changeset)");
  RETURN_IF_ERROR(WriteChangeSet(change_set, memory.get(), "change list"));
  if (::lseek(memory.get(), 0, SEEK_SET) != 0) {
    return LastErrnoStatus("lseek(changeset memfd)");
  }
  return memory;
}

class ApplierChannel : public ApplyService {
 public:
  explicit ApplierChannel(ipc::HelperProcess* process) : process_(process) {}

  absl::StatusOr<applier::ApplyOutcome> Apply(
      const ChangeSet& change_set, const std::string& reason,
      const std::string& session_id) override {
    ASSIGN_OR_RETURN(UniqueFd memory, ChangeSetMemfd(change_set));
    applier::ApplierRequest request;
    request.mutable_apply()->set_reason(reason);
    request.mutable_apply()->set_session_id(session_id);
    const int fds[] = {memory.get()};
    ASSIGN_OR_RETURN(applier::ApplierReply reply, Call(request, fds));
    if (!reply.has_applied()) {
      return absl::DataLossError("garuda-applier: no ApplyOutcome reply");
    }
    return reply.applied();
  }

  absl::StatusOr<applier::UndoOutcome> Undo(
      const std::string& undo_id, const std::string& session_id) override {
    applier::ApplierRequest request;
    request.mutable_undo()->set_undo_id(undo_id);
    request.mutable_undo()->set_session_id(session_id);
    ASSIGN_OR_RETURN(applier::ApplierReply reply, Call(request, {}));
    if (!reply.has_undone()) {
      return absl::DataLossError("garuda-applier: no UndoOutcome reply");
    }
    return reply.undone();
  }

 private:
  absl::StatusOr<applier::ApplierReply> Call(applier::ApplierRequest& request,
                                             absl::Span<const int> fds) {
    request.set_seq(++seq_);
    applier::ApplierReply reply;
    RETURN_IF_ERROR(process_->Call(request, &reply, nullptr, fds));
    RETURN_IF_ERROR(CheckReplySeq(reply, seq_, kApplierProgram));
    return reply;
  }

  ipc::HelperProcess* process_;
  uint64_t seq_ = 0;
};

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

absl::Status ErrorReplyStatus(const Error& error, absl::string_view helper) {
  absl::StatusCode code = static_cast<absl::StatusCode>(error.code());
  if (code == absl::StatusCode::kOk) code = absl::StatusCode::kUnknown;
  return absl::Status(code, absl::StrCat(helper, ": ", error.message()));
}

HelperPaths HelperPathsIn(const std::string& dir) {
  auto find = [&](const char* name) {
    std::string beside = JoinPath(dir, name);
    std::string built = JoinPath(JoinPath(Dirname(dir), name), name);
    if (::access(beside.c_str(), X_OK) != 0 &&
        ::access(built.c_str(), X_OK) == 0) {
      return built;
    }
    return beside;
  };
  return {find(kAuditorProgram), find(kBudgeterProgram), find(kStagerProgram),
          find(kApplierProgram)};
}

absl::StatusOr<std::string> OwnProgramFolder() {
  char buffer[4096];
  ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
  if (n < 0) return LastErrnoStatus("readlink(/proc/self/exe)");
  return Dirname(std::string(buffer, n));
}

std::unique_ptr<AuditSink> AuditChannelClient(ipc::HelperProcess* auditor) {
  return std::make_unique<AuditChannel>(auditor);
}
std::unique_ptr<CommandService> StagerChannelClient(
    ipc::HelperProcess* stager) {
  return std::make_unique<StagerChannel>(stager);
}
std::unique_ptr<ApplyService> ApplierChannelClient(
    ipc::HelperProcess* applier) {
  return std::make_unique<ApplierChannel>(applier);
}

absl::StatusOr<std::unique_ptr<Helpers>> Helpers::Start(
    const HelpersOptions& options) {
  std::unique_ptr<Helpers> helpers(new Helpers());
  std::vector<std::string> weaker;
  if (!options.accept_weaker_lockdown.empty()) {
    weaker.push_back("--accept-weaker-lockdown=" +
                     options.accept_weaker_lockdown);
  }
  std::vector<std::string> auditor = {options.paths.auditor, "serve",
                                      "--channel-fd=3", "--project",
                                      options.project};
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

  std::vector<std::string> stager = {
      options.paths.stager, "serve",        "--channel-fd=3",  "--project",
      options.project,      "--session-id", options.session_id, "--quiet"};
  if (!options.command_mode.empty()) {
    stager.push_back("--mode=" + options.command_mode);
  }
  if (!options.backend.empty())
    stager.push_back("--backend=" + options.backend);
  ASSIGN_OR_RETURN(helpers->stager_process_, SpawnHelper(stager));
  helpers->stager_ = StagerChannelClient(helpers->stager_process_.get());

  ASSIGN_OR_RETURN(
      helpers->applier_process_,
      SpawnHelper({options.paths.applier, "serve", "--channel-fd=3",
                   "--project", options.project, "--quiet"}));
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
