#include "lib/staging/service.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "lib/base/errno_status.h"
#include "lib/base/files.h"
#include "lib/base/home.h"
#include "lib/base/status_macros.h"
#include "lib/base/unique_fd.h"
#include "lib/changeset/beneath.h"
#include "lib/changeset/changeset.h"
#include "lib/ipc/channel.h"
#include "lib/ipc/client.h"
#include "lib/ipc/dispatcher.h"
#include "lib/ipc/helper_process.h"
#include "lib/netproxy/session_proxy.h"
#include "lib/staging/command_reply.h"
#include "lib/staging/job_commands.h"
#include "lib/staging/mcp_host.h"
#include "lib/staging/mcp_remote.h"
#include "lib/staging/network_start.h"
#include "lib/staging/command_watch.h"
#include "lib/staging/session.h"
#include "lib/staging/stager_settings.h"
#include "proto/stager_service.pb.h"
#include "sandbox/command_policy.h"
#include "sandbox/private_walk.h"
#include "sandbox/probe.h"
#include "sandbox/sandbox.h"

namespace garuda {
namespace {

enum State { kServing = 0, kEnded = 1 };

constexpr const char* kHostMode = kHostRunnerMode;

class StagerService {
 public:
  explicit StagerService(const StagerServeOptions& options)
      : options_(options) {}

  absl::Status Start() {
    ASSIGN_OR_RETURN(project_, RealProjectRoot(options_.project));
    ASSIGN_OR_RETURN(settings_, LoadProjectSettings(project_));
    mode_ = options_.mode.empty() ? settings_.settings.commands().mode()
                                  : options_.mode;
    if (mode_.empty()) mode_ = "direct";
    if (mode_ != "direct" && mode_ != "staged" && mode_ != kHostMode) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--mode: \"", mode_, "\" is not \"direct\" or \"staged\""));
    }
    // The commands get /dev/null as their input; so does an on_host one,
    // which would otherwise share the agent's terminal.
    ASSIGN_OR_RETURN(UniqueFd null, OpenFile("/dev/null", O_RDONLY));
    if (::dup2(null.get(), 0) < 0) return LastErrnoStatus("stdin /dev/null");
    if (mode_ == kHostMode) return absl::OkStatus();
    // The rules are read and the terminal opened now, before anything is
    // served: what decides an on_host command is this process's own view.
    ASSIGN_OR_RETURN(consent_, Consent::Open(options_.consent, project_));

    probe_ = ProbeSandbox({});
    problem_ = FirstSandboxProblem(probe_);
    if (!options_.job_file.empty()) {
      ASSIGN_OR_RETURN(job_, OpenStagerJob(options_.job_file, project_, mode_,
                                           problem_));
      notices_.push_back(DescribeJobScope(*job_));
    }
    // The network proxy of an allow list, before the lockdown; under the
    // strict profile its enforcement proven in a sandbox, or no session.
    if (!problem_) {
      ASSIGN_OR_RETURN(proxy_, StartSessionProxy(settings_, project_,
                                                 options_.self, &notices_));
    }

    // The on_host runner is forked now, before this process locks down
    // (its filter and no_new_privs would bind an on_host command too: sudo,
    // a debugger; nothing forked after the lockdown can be free of them)
    // and, in staged mode, while it still sees the project writable: it is
    // the only way an agreed on_host command can change the project. It
    // execs only at the first host command the stager agrees to; until then
    // it waits, before exec, holding nothing but its channel. Only where a
    // host command can be agreed to at all: a session whose every host
    // command is refused has no unconfined process (docs/lockdown.md, "The
    // host runner").
    if (!RequiredSandbox(settings_).has_value() && !job_ &&
        consent_->MayAgreeToHostCommands()) {
      ipc::HelperOptions helper;
      helper.argv = {options_.self, "serve",  "--channel-fd=3", "--project",
                     project_,      "--mode", kHostMode};
      if (options_.quiet) helper.argv.push_back("--quiet");
      helper.channel.peer_name = "garuda-stager (on_host runner)";
      absl::StatusOr<std::unique_ptr<ipc::PendingHelper>> host =
          ipc::PendingHelper::Fork(helper);
      if (host.ok()) {
        host_launcher_ = *std::move(host);
      } else {
        notices_.push_back(absl::StrCat("on_host commands cannot run: ",
                                        host.status().message()));
      }
    }
    if (mode_ == "direct") return absl::OkStatus();
    StagedViewOptions view;
    view.project = project_;
    view.backend = options_.backend;
    view.probe = &probe_;
    view.serves_several = true;
    absl::StatusOr<std::unique_ptr<StagedView>> opened =
        StagedView::Open(settings_, view);
    absl::Status entered =
        opened.ok() ? (*opened)->EnterAndLock() : opened.status();
    if (!entered.ok()) {
      staging_error_ = std::string(entered.message());
      notices_.push_back(absl::StrCat("staged commands cannot run: ",
                                      staging_error_, " ", kNothingRunInstead));
      return absl::OkStatus();
    }
    view_ = *std::move(opened);
    notices_.push_back(view_->Describe());
    return absl::OkStatus();
  }

  absl::Status Serve(ipc::Channel& channel) {
    Log(absl::StrCat(
        "serving", options_.session_id.empty() ? "" : " session ",
        options_.session_id, " for ", project_, ": ", mode_, " mode",
        view_ ? absl::StrCat(", ", view_->backend(), " backend") : ""));
    using Dispatcher =
        ipc::Dispatcher<stager::StagerRequest, stager::StagerReply>;
    Dispatcher dispatcher(kServing);
    dispatcher.NameState(kServing, "serving").NameState(kEnded, "ended");
    dispatcher.On(stager::StagerRequest::kDescribe, {kServing},
                  [&](const stager::StagerRequest&, std::vector<UniqueFd>&,
                      stager::StagerReply* reply) {
                    Describe(reply->mutable_description());
                    return absl::OkStatus();
                  });
    dispatcher.OnWithReplyFds(
        stager::StagerRequest::kRun, {kServing},
        [&](const stager::StagerRequest& request, std::vector<UniqueFd>& fds,
            stager::StagerReply* reply, std::vector<UniqueFd>* reply_fds) {
          return Run(request.run(), fds, reply->mutable_result(), reply_fds);
        });
    dispatcher.OnWithReplyFds(
        stager::StagerRequest::kStartMcpServer, {kServing},
        [&](const stager::StagerRequest& request, std::vector<UniqueFd>&,
            stager::StagerReply* reply, std::vector<UniqueFd>* reply_fds) {
          ASSIGN_OR_RETURN(McpHost * mcp, Mcp());
          return mcp->Start(request.start_mcp_server().server(),
                            reply->mutable_mcp_server_started(), reply_fds);
        });
    dispatcher.OnWithReplyFds(
        stager::StagerRequest::kCollectMcpChanges, {kServing},
        [&](const stager::StagerRequest& request, std::vector<UniqueFd>&,
            stager::StagerReply* reply, std::vector<UniqueFd>* reply_fds) {
          ASSIGN_OR_RETURN(McpHost * mcp, Mcp());
          std::optional<ChangeSet> change_set;
          int conflicts = 0;
          RETURN_IF_ERROR(mcp->Collect(request.collect_mcp_changes().name(),
                                       reply->mutable_result(), &change_set,
                                       &conflicts));
          if (!change_set) return absl::OkStatus();
          return PutChangeSet(*change_set, conflicts, reply->mutable_result(),
                              reply_fds);
        });
    dispatcher.On(stager::StagerRequest::kConnectMcpProxy, {kServing},
                  [&](const stager::StagerRequest& request,
                      std::vector<UniqueFd>&, stager::StagerReply* reply) {
                    ASSIGN_OR_RETURN(McpHost * mcp, Mcp());
                    if (!mcp_remote_) {
                      mcp_remote_ = std::make_unique<McpRemote>(mcp);
                    }
                    return mcp_remote_->Connect(
                        request.connect_mcp_proxy().server(),
                        reply->mutable_mcp_proxy_connected());
                  });
    dispatcher.On(stager::StagerRequest::kStopMcpServer, {kServing},
                  [&](const stager::StagerRequest& request,
                      std::vector<UniqueFd>&, stager::StagerReply* reply) {
                    ASSIGN_OR_RETURN(McpHost * mcp, Mcp());
                    return mcp->Stop(request.stop_mcp_server().name(),
                                     reply->mutable_mcp_server_stopped());
                  });
    dispatcher.On(
        stager::StagerRequest::kEnd, {kServing},
        [&](const stager::StagerRequest&, std::vector<UniqueFd>&,
            stager::StagerReply* reply) {
          End();
          reply->mutable_ended();
          dispatcher.StopAfterReply();
          return absl::OkStatus();
        },
        kEnded);
    absl::Status served = dispatcher.Serve(channel);
    End();  // a closed or broken channel ends the session too
    return served;
  }

 private:
  void Log(const std::string& line) {
    if (options_.log && !options_.quiet) options_.log(line);
  }

  // The view goes (unmounted, its folder removed); the runner ends.
  void End() {
    mcp_remote_.reset();
    mcp_.reset();
    view_.reset();
    proxy_.reset();
    host_client_.reset();
    if (host_) {
      host_->Stop().IgnoreError();
      host_.reset();
    }
    host_launcher_.reset();
  }

  void Describe(stager::SessionDescription* description) {
    description->set_mode(mode_);
    if (view_) description->set_backend(view_->backend());
    description->set_profile(settings_.strict() ? "strict" : "default");
    description->set_sandboxed(mode_ != kHostMode && !problem_.has_value());
    if (problem_) {
      description->set_sandbox_problem(
          absl::StrCat(problem_->reason, ". fix: ", problem_->fix));
    }
    for (const std::string& notice : notices_) {
      description->add_notices(notice);
    }
  }

  // The session's MCP servers (lib/staging/mcp_host.h), set up at the
  // first request about one.
  absl::StatusOr<McpHost*> Mcp() {
    if (mode_ == kHostMode) {
      return absl::FailedPreconditionError(
          "the on_host runner starts no MCP server");
    }
    if (mcp_) return mcp_.get();
    McpHostOptions mcp;
    mcp.settings = &settings_;
    mcp.project = project_;
    mcp.mode = mode_;
    ASSIGN_OR_RETURN(std::string home, HomeDirectory());
    ASSIGN_OR_RETURN(
        std::string session,
        GarudaSessionFolder(home, options_.session_id.empty()
                                      ? absl::StrCat("stager-", ::getpid())
                                      : options_.session_id));
    mcp.log_folder = JoinPath(session, "mcp");
    mcp.self = options_.self;
    mcp.probe = &probe_;
    mcp.problem = problem_;
    if (view_) mcp.backend = view_->backend();
    mcp.staging_error = staging_error_;
    if (job_) {
      const jobs::JobGuard* job = &*job_;
      mcp.narrow = [job](SandboxPolicy* policy) {
        ScopeJobCommand(*job, policy);
      };
    }
    mcp_ = std::make_unique<McpHost>(std::move(mcp));
    return mcp_.get();
  }

  absl::StatusOr<std::string> WorkingDirectory(const std::string& relative) {
    if (relative.empty()) return project_;
    absl::Status valid = CheckRelativePath(relative);
    if (!valid.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("RunCommand working_directory: ", valid.message()));
    }
    return JoinPath(project_, relative);
  }

  // The request's watch socket (RunCommand.watched), checked before
  // anything runs.
  static absl::StatusOr<std::optional<WatchSocket>> TakeWatch(
      const stager::RunCommand& request, std::vector<UniqueFd>& fds) {
    if (!request.watched()) {
      if (!fds.empty()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "RunCommand came with ", fds.size(),
            " descriptors but is not watched; nothing was run"));
      }
      return std::optional<WatchSocket>();
    }
    if (fds.size() != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("RunCommand.watched came with ", fds.size(),
                       " descriptors instead of 1; nothing was run"));
    }
    ASSIGN_OR_RETURN(WatchSocket watch, WatchSocket::Adopt(std::move(fds[0])));
    return std::optional<WatchSocket>(std::move(watch));
  }

  absl::Status Run(const stager::RunCommand& request,
                   std::vector<UniqueFd>& fds, stager::CommandResult* result,
                   std::vector<UniqueFd>* reply_fds) {
    if (request.command().empty()) {
      return absl::InvalidArgumentError("RunCommand: the command is empty");
    }
    ASSIGN_OR_RETURN(std::optional<WatchSocket> watch, TakeWatch(request, fds));
    uint64_t limit = request.output_limit() == 0 ? kDefaultOutputLimit
                                                 : request.output_limit();
    if (limit > kMaxOutputLimit) {
      return absl::InvalidArgumentError(
          absl::StrCat("RunCommand output_limit ", limit, " is over the ",
                       kMaxOutputLimit, "-byte limit of one stream"));
    }
    ASSIGN_OR_RETURN(std::string directory,
                     WorkingDirectory(request.working_directory()));
    RunOptions run;
    run.argv = {"/bin/bash", "-c", request.command()};
    run.capture_output = true;
    run.capture_limit = limit;
    // The walk of /etc for what the host keeps private: once per session,
    // again only after something there changed (sandbox/private_walk.h).
    run.private_walk = &private_walk_;
    uint64_t wall_time_ms = uint64_t{request.timeout_seconds()} * 1000;
    if (watch) {
      // The agent's stop ends the run; its live view gets the output.
      run.cancel_fd = watch->fd();
      const WatchSocket* live = &*watch;
      run.on_output = [live](int stream, absl::string_view data) {
        live->Output(stream, data);
      };
    }

    if (request.on_host() && job_) {
      return absl::PermissionDeniedError(
          absl::StrCat("on_host is refused: ", jobs::kJobHostRefusal));
    }
    if (request.on_host()) {
      return RunOnTheHost(request, run, directory, wall_time_ms,
                          watch ? &*watch : nullptr, result);
    }
    if (mode_ == kHostMode) {
      return absl::FailedPreconditionError(
          "the on_host runner runs on_host commands only");
    }
    if (problem_) {
      std::optional<SandboxRequirement> required = RequiredSandbox(settings_);
      return absl::FailedPreconditionError(absl::StrCat(
          "no working OS sandbox: ", problem_->reason, ". fix: ", problem_->fix,
          required ? absl::StrCat("; ", required->why, ", so nothing runs")
                   : "; with the person's agreement a command can run on "
                     "the host instead (on_host)"));
    }
    CommandRequest command;
    command.project = project_;
    command.working_directory = directory;
    command.environment = CurrentEnvironment();
    if (watch) watch->Started();

    if (mode_ == "staged") {
      if (!view_) {
        return absl::FailedPreconditionError(
            absl::StrCat(staging_error_, " ", kNothingRunInstead));
      }
      std::vector<proxy::NetworkEvent> asked;
      ASSIGN_OR_RETURN(
          StagedOutcome outcome,
          netproxy::RunAttached(proxy_.get(), &run.proxy_handoff_fd, &asked, [&] {
            return view_->Run(settings_, command, run, wall_time_ms,
                              request.command());
          }));
      AddNetworkEvents(settings_, std::move(asked), result);
      FillResult(outcome.result, false, result);
      return PutChangeSet(outcome.change_set, outcome.conflicts, result,
                          reply_fds);
    }
    ASSIGN_OR_RETURN(SandboxPolicy policy,
                     DirectCommandPolicy(settings_, command));
    if (job_) ScopeJobCommand(*job_, &policy);
    LowerWallTime(wall_time_ms, &policy);
    std::vector<proxy::NetworkEvent> asked;
    ASSIGN_OR_RETURN(
        RunResult ran,
        netproxy::RunAttached(proxy_.get(), &run.proxy_handoff_fd, &asked,
                              [&] { return RunInSandbox(policy, run); }));
    FillResult(ran, false, result);
    AddNetworkEvents(settings_, std::move(asked), result);
    return absl::OkStatus();
  }

  absl::Status RunOnTheHost(const stager::RunCommand& request, RunOptions run,
                            const std::string& directory, uint64_t wall_time_ms,
                            const WatchSocket* watch,
                            stager::CommandResult* result) {
    if (std::optional<SandboxRequirement> required =
            RequiredSandbox(settings_)) {
      return absl::PermissionDeniedError(absl::StrCat(
          "on_host is refused: ", required->why,
          "; nothing was run (to allow it: ", required->undo, ")"));
    }
    // Every mode but the runner's own: the stager agrees first, then the
    // runner (started before the lockdown) runs the command.
    if (mode_ != kHostMode) {
      RETURN_IF_ERROR(AgreeOnHost(request, result));
      RETURN_IF_ERROR(StartHostRunner());
      stager::StagerRequest forwarded;
      *forwarded.mutable_run() = request;
      forwarded.mutable_run()->set_watched(watch != nullptr);
      std::vector<int> forwarded_fds;
      if (watch != nullptr) {
        // Agreed: the command starts now, and the runner watches for the
        // stop on the same socket.
        watch->Started();
        forwarded_fds.push_back(watch->fd());
      }
      ASSIGN_OR_RETURN(stager::StagerReply reply,
                       host_client_->Call(forwarded, nullptr, forwarded_fds));
      std::string consent = result->consent();
      *result = reply.result();
      result->set_consent(consent);
      return absl::OkStatus();
    }
    // The settings' wall time bounds a host command too; the other limits
    // need the sandbox.
    run.wall_time_ms = StricterLimit(
        wall_time_ms,
        uint64_t{settings_.settings.sandbox().limits().wall_time_seconds()} *
            1000);
    ASSIGN_OR_RETURN(RunResult ran, RunOnHostIntoFiles(run, directory));
    FillResult(ran, true, result);
    return absl::OkStatus();
  }

  // The runner execs at the first host command agreed to, so that a
  // session that runs none never has an unconfined process running the
  // stager's code.
  absl::Status StartHostRunner() {
    if (host_) return absl::OkStatus();
    if (!host_launcher_) {
      return absl::FailedPreconditionError(
          "on_host commands cannot run: the on_host runner did not start");
    }
    absl::StatusOr<std::unique_ptr<ipc::HelperProcess>> started =
        host_launcher_->Start();
    host_launcher_.reset();
    if (!started.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("on_host commands cannot run: the on_host runner did "
                       "not start: ",
                       started.status().message()));
    }
    host_ = *std::move(started);
    host_client_ = std::make_unique<HostClient>(
        host_.get(), "garuda-stager (on_host runner)");
    return absl::OkStatus();
  }

  // The stager's own decision on an on_host command: an error (nothing
  // run) when it does not agree; else how it agreed, in `result`.
  absl::Status AgreeOnHost(const stager::RunCommand& request,
                           stager::CommandResult* result) {
    std::optional<RelayedConsent> relayed;
    if (request.has_relayed_answer()) {
      if (consent_->mode() != ConsentMode::kRelayed) {
        return absl::PermissionDeniedError(absl::StrCat(
            "RunCommand carries a relayed answer, but this stager decides "
            "itself (--consent=",
            ConsentModeName(consent_->mode()), "); nothing was run"));
      }
      relayed = RelayedConsent{request.relayed_answer().from(),
                               request.relayed_answer().yes()};
    }
    ConsentDecision decision = consent_->ForHostCommand(
        request.command(), request.on_host_reason(), relayed);
    if (!decision.yes) {
      return absl::PermissionDeniedError(
          absl::StrCat("not run on the host: ", decision.how));
    }
    result->set_consent(decision.how);
    return absl::OkStatus();
  }

  const StagerServeOptions& options_;
  std::unique_ptr<Consent> consent_;
  std::optional<jobs::JobGuard> job_;  // --job
  std::string project_;
  MergedSettings settings_;
  std::string mode_;
  ProbeReport probe_;
  std::optional<SandboxProblem> problem_;
  std::vector<std::string> notices_;
  std::unique_ptr<StagedView> view_;
  std::string staging_error_;
  PrivateWalk private_walk_;
  std::unique_ptr<McpHost> mcp_;
  std::unique_ptr<McpRemote> mcp_remote_;  // uses mcp_
  std::unique_ptr<netproxy::SessionProxy> proxy_;  // with an allow list
  std::unique_ptr<ipc::PendingHelper> host_launcher_;
  std::unique_ptr<ipc::HelperProcess> host_;
  using HostClient = ipc::Client<stager::StagerRequest, stager::StagerReply>;
  std::unique_ptr<HostClient> host_client_;
};

}  // namespace

class StagerServer::Service : public StagerService {
 public:
  using StagerService::StagerService;
};

absl::StatusOr<std::unique_ptr<StagerServer>> StagerServer::Open(
    const StagerServeOptions& options) {
  ASSIGN_OR_RETURN(
      ipc::Channel channel,
      ipc::ChannelFromFd(options.channel_fd,
                         ipc::ChannelOptions{"garuda-agent", 1 << 20, 2}));
  std::unique_ptr<StagerServer> serve(
      new StagerServer(std::move(channel), options));
  RETURN_IF_ERROR(serve->service_->Start());
  return serve;
}

StagerServer::StagerServer(ipc::Channel channel,
                           const StagerServeOptions& options)
    : channel_(std::move(channel)),
      service_(std::make_unique<Service>(options)) {}

StagerServer::~StagerServer() = default;

absl::Status StagerServer::Serve() { return service_->Serve(channel_); }

}  // namespace garuda
