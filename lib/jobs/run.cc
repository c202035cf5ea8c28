#include "lib/jobs/run.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "lib/audit/client.h"
#include "lib/base/files.h"
#include "lib/base/helper_paths.h"
#include "lib/base/home.h"
#include "lib/base/json_message.h"
#include "lib/base/status_macros.h"
#include "lib/ipc/helper_process.h"
#include "lib/jobs/job_guard.h"
#include "lib/jobs/process.h"
#include "lib/jobs/scope.h"
#include "proto/agent_report.pb.h"

namespace garuda {
namespace jobs {
namespace {

constexpr int kSucceeded = 0;
constexpr int kFailed = 1;
constexpr int kBadJob = 2;

// "a", "b", ... "and 12 more": a line stays readable.
std::string ListLine(const std::vector<std::string>& paths) {
  constexpr size_t kShown = 20;
  std::vector<std::string> shown(
      paths.begin(), paths.begin() + std::min(paths.size(), kShown));
  std::string line = absl::StrJoin(shown, ", ");
  if (paths.size() > kShown) {
    absl::StrAppend(&line, " and ", paths.size() - kShown, " more");
  }
  return line;
}

// The command or path a call names, from its arguments.
std::string CallTarget(const std::string& arguments_json) {
  google::protobuf::Struct arguments;
  if (!google::protobuf::util::JsonStringToMessage(arguments_json, &arguments)
           .ok()) {
    return "";
  }
  for (const char* key : {"command", "path"}) {
    auto found = arguments.fields().find(key);
    if (found != arguments.fields().end() &&
        found->second.kind_case() == google::protobuf::Value::kStringValue) {
      return found->second.string_value();
    }
  }
  return "";
}

// A decision that kept the call from running (lib/agent/tool_calls.cc and
// lib/consent say them so).
bool IsDenial(const std::string& decision) {
  return absl::StartsWith(decision, "denied") ||
         absl::StartsWith(decision, "no person") ||
         absl::StartsWith(decision, "refused") ||
         absl::StartsWith(decision, "not run");
}

std::string Timestamp() {
  return absl::FormatTime("%Y%m%dT%H%M%SZ", absl::Now(), absl::UTCTimeZone());
}

class Runner {
 public:
  explicit Runner(const RunJobOptions& options) : options_(options) {}

  int Run() {
    // 1. The job file, read strictly, from the person's checkout.
    absl::StatusOr<std::string> checkout = RealProjectRoot(options_.checkout);
    if (!checkout.ok()) return Bad(checkout.status());
    checkout_ = *checkout;
    absl::StatusOr<std::string> path = JobFilePath(checkout_, options_.job);
    if (!path.ok()) return Bad(path.status());
    // Absolute: the session and its helpers read the same file, whatever
    // their working folder.
    if ((*path)[0] != '/') {
      char cwd[4096];
      if (::getcwd(cwd, sizeof cwd) == nullptr) {
        return Bad(absl::FailedPreconditionError(
            "cannot read the current folder; give the job file's full path"));
      }
      *path = JoinPath(cwd, *path);
    }
    absl::StatusOr<Job> job = ReadJobFile(*path);
    if (!job.ok()) return Bad(job.status());
    if (absl::Status named = CheckJobName(job->name); !named.ok()) {
      return Bad(named);
    }
    job_ = *std::move(job);
    report_.set_job(job_.name);
    report_.set_job_file(job_.path);
    report_.set_test_command(job_.file.test_command());
    report_.set_test_exit_code(-1);
    absl::StatusOr<std::string> home = HomeDirectory();
    if (!home.ok()) return Bad(home.status());
    home_ = *home;

    // 2. The audit log of the checkout: every decision of the run.
    if (absl::Status started = StartAuditor(); !started.ok()) {
      return Fail(
          absl::StrCat("the audit log could not start: ", started.message()));
    }
    Audit("job_start", job_.path, "start", job_.file.prompt().substr(0, 200));

    // 3. The worktree on a branch of its own, outside the checkout.
    // Two runs of a job in the same second get "-1", "-2"...: a branch or
    // worktree that exists is never reused.
    const std::string timestamp = Timestamp();
    absl::StatusOr<JobWorktree> worktree;
    for (int attempt = 0; attempt < 10; ++attempt) {
      worktree = CreateJobWorktree(
          checkout_, job_.name,
          attempt == 0 ? timestamp : absl::StrCat(timestamp, "-", attempt),
          JobsFolder(home_, checkout_));
      if (worktree.ok()) break;
    }
    if (!worktree.ok()) {
      return Fail(
          absl::StrCat("the job's worktree: ", worktree.status().message()));
    }
    worktree_ = *std::move(worktree);
    report_.set_branch(worktree_.branch);
    report_.set_worktree(worktree_.path);
    Audit("job_worktree", worktree_.path, "created",
          absl::StrCat("branch ", worktree_.branch, " at ",
                       worktree_.base_commit));
    absl::StatusOr<JobGuard> guard = LoadJobGuard(job_.path, worktree_.path);
    if (!guard.ok()) {
      // Nothing ran in it: the worktree and its branch go again.
      absl::Status removed = RemoveUnusedJobWorktree(checkout_, worktree_);
      Audit("job_worktree", worktree_.path, removed.ok() ? "removed" : "kept",
            removed.ok() ? "the scope was refused"
                         : std::string(removed.message()));
      if (removed.ok()) {
        report_.clear_branch();
        report_.clear_worktree();
      }
      return Bad(guard.status());
    }
    report_.set_scope_line(ScopeLine(guard->whole_worktree, guard->scope));
    // The first line says what the job's commands may write.
    Line(report_.scope_line());
    Line(absl::StrCat("job ", job_.name, " in ", worktree_.path, " on ",
                      worktree_.branch));

    // 4. The turn, in a session of its own (locked down; its helpers hold
    // the scope themselves).
    absl::Status turn = RunSession();
    if (int code = StopIfInterrupted(); code != kSucceeded) return code;
    if (!turn.ok()) return Fail(std::string(turn.message()));
    ChangeAfterTurnForTests();

    // 5. The post-check; then the test command under the same scope, and
    // the post-check again (nothing outside the scope is ever committed).
    if (int code = PostCheckStep(); code != kSucceeded) return code;
    if (!session_failure_.empty()) return Fail(session_failure_);
    if (!job_.file.test_command().empty()) {
      absl::Status tested = RunTestCommand();
      if (int code = StopIfInterrupted(); code != kSucceeded) return code;
      if (!tested.ok()) return Fail(std::string(tested.message()));
      if (int code = PostCheckStep(); code != kSucceeded) return code;
    }

    // 6. The commit on the job's branch (a signal from here on waits for
    // it: the commit is one ref update after its objects are written).
    if (int code = StopIfInterrupted(); code != kSucceeded) return code;
    absl::StatusOr<std::string> commit = CommitJobChanges(
        worktree_.path, absl::StrCat("garuda job ", job_.name, "\n\n",
                                     job_.file.prompt().substr(0, 2000), "\n"));
    if (!commit.ok()) {
      return Fail(absl::StrCat("commit: ", commit.status().message()));
    }
    report_.set_commit(*commit);
    Audit("job_commit", worktree_.branch, commit->empty() ? "none" : "commit",
          commit->empty() ? "nothing to commit" : *commit);
    report_.set_status("succeeded");
    return Finish(kSucceeded);
  }

 private:
  void Line(const std::string& text) {
    WriteAll(options_.err_fd, absl::StrCat("garuda-agent: ", text, "\n"))
        .IgnoreError();
  }

  absl::Status StartAuditor() {
    ipc::HelperOptions helper;
    helper.argv = {ProgramIn("garuda-auditor"), "serve", "--channel-fd=3",
                   "--project", checkout_};
    if (!options_.accept_weaker_lockdown.empty()) {
      helper.argv.push_back("--accept-weaker-lockdown=" +
                            options_.accept_weaker_lockdown);
    }
    ASSIGN_OR_RETURN(auditor_, ipc::HelperProcess::Spawn(helper));
    audit_ = AuditChannelClient(auditor_.get());
    return absl::OkStatus();
  }

  void Audit(const std::string& kind, const std::string& target,
             const std::string& decision, const std::string& reason) {
    if (audit_ == nullptr) return;
    audit::AuditEvent event;
    event.set_kind(kind);
    event.set_tool("job");
    event.set_target(target);
    event.set_decision(decision);
    event.set_reason(reason);
    auto& fields = *event.mutable_fields()->mutable_fields();
    fields["job"].set_string_value(job_.name);
    if (!worktree_.branch.empty()) {
      fields["branch"].set_string_value(worktree_.branch);
    }
    absl::Status recorded = audit_->Record(event);
    if (!recorded.ok() && audit_error_.empty()) {
      audit_error_ = std::string(recorded.message());
    }
  }

  std::string ProgramIn(const std::string& name) const {
    return HelperPath(options_.helpers_dir, name);
  }

  absl::Status RunSession() {
    std::vector<std::string> argv = {options_.agent_program,
                                     "--project",
                                     worktree_.path,
                                     "--job",
                                     job_.path,
                                     "--audit-project",
                                     checkout_,
                                     "-p",
                                     job_.file.prompt(),
                                     "--output-format",
                                     "json",
                                     "--helpers-dir",
                                     options_.helpers_dir};
    const ModelSettings& model = job_.file.model();
    auto pass = [&argv](const char* flag, const std::string& given,
                        const std::string& from_job) {
      const std::string& value = given.empty() ? from_job : given;
      if (!value.empty()) argv.insert(argv.end(), {flag, value});
    };
    pass("--provider", options_.overrides.provider, model.provider());
    pass("--model", options_.overrides.model, model.name());
    pass("--base-url", options_.overrides.base_url, model.base_url());
    if (!options_.accept_weaker_lockdown.empty()) {
      argv.push_back("--accept-weaker-lockdown=" +
                     options_.accept_weaker_lockdown);
    }
    ASSIGN_OR_RETURN(ProgramRun ran, RunProgram(argv, -1, options_.err_fd));
    agent::OneShotReport session;
    absl::Status parsed =
        ran.out.empty()
            ? absl::DataLossError("no report")
            : ParseJsonMessage(ran.out, "the job's session report", &session);
    if (!parsed.ok()) {
      Audit("job_session", worktree_.path, "failed",
            absl::StrCat("exit ", ran.exit_code));
      return absl::FailedPreconditionError(
          absl::StrCat("the job's session did not run (exit ", ran.exit_code,
                       "; its lines are above)"));
    }
    report_.set_session_id(session.session_id());
    report_.mutable_tokens()->set_input(session.usage().input_tokens());
    report_.mutable_tokens()->set_output(session.usage().output_tokens());
    report_.mutable_tokens()->set_charged(session.usage().charged_tokens());
    for (const agent::ToolCallReport& call : session.tool_calls()) {
      JobToolCall* done = report_.add_tool_calls();
      done->set_tool(call.tool());
      done->set_target(CallTarget(call.arguments_json()));
      done->set_decision(call.decision());
      done->set_outcome(call.outcome());
      done->set_is_error(call.is_error());
      if (IsDenial(call.decision())) {
        DeniedCall* denied = report_.add_denied_calls();
        denied->set_tool(call.tool());
        denied->set_target(done->target());
        denied->set_why(call.decision());
      }
    }
    Audit(
        "job_session", session.session_id(),
        ran.exit_code == 0 ? "answered" : "failed",
        absl::StrCat("exit ", ran.exit_code, ", ", report_.denied_calls_size(),
                     " denied calls", session.stopped().empty() ? "" : ": ",
                     session.stopped()));
    if (ran.exit_code != 0) {
      session_failure_ = absl::StrCat(
          "the turn did not finish (exit ", ran.exit_code, ")",
          session.stopped().empty() ? "" : ": ", session.stopped());
    }
    return absl::OkStatus();
  }

  int StopIfInterrupted() {
    const int signal = StopSignal();
    if (signal == 0) return kSucceeded;
    return Fail(absl::StrCat("interrupted by signal ", signal, " (",
                             strsignal(signal), "); nothing was committed"));
  }

  // Test seam: a file written in the worktree after the turn by something
  // other than a command of the job (as a git operation or another process
  // would), so that a test can show the post-check catches it. Never set
  // outside tests.
  void ChangeAfterTurnForTests() {
    const char* path = ::getenv("GARUDA_TEST_ONLY_JOB_CHANGE_AFTER_TURN");
    if (path == nullptr || *path == '\0') return;
    std::string target = JoinPath(worktree_.path, path);
    MakeDirectories(Dirname(target), 0755).IgnoreError();
    WriteFileAtomically(target, "changed after the turn\n", 0644).IgnoreError();
  }

  int PostCheckStep() {
    absl::StatusOr<PostCheck> checked =
        CheckWorktree(worktree_.path, worktree_.base_commit, job_);
    if (!checked.ok()) {
      return Fail(absl::StrCat("post-check: ", checked.status().message()));
    }
    report_.clear_changed_files();
    for (const std::string& path : checked->changes.paths) {
      report_.add_changed_files(path);
    }
    report_.clear_outside_scope();
    for (const std::string& path : checked->outside) {
      report_.add_outside_scope(path);
    }
    if (!checked->outside.empty()) {
      Audit("job_post_check", worktree_.path, "failed",
            absl::StrCat("changes outside the approved scope: ",
                         ListLine(checked->outside)));
      return Fail(absl::StrCat("changes outside the approved scope: ",
                               ListLine(checked->outside)));
    }
    Audit("job_post_check", worktree_.path, "passed",
          absl::StrCat(checked->changes.paths.size(), " changed paths"));
    return kSucceeded;
  }

  // Under the same scope as every command of the job: through garuda-stager
  // with --job, which reads the scope itself; never on the host.
  absl::Status RunTestCommand() {
    std::vector<std::string> argv = {ProgramIn("garuda-stager"),
                                     "run",
                                     "--project",
                                     worktree_.path,
                                     "--job",
                                     job_.path,
                                     "--",
                                     "/bin/bash",
                                     "-c",
                                     job_.file.test_command()};
    if (!options_.accept_weaker_lockdown.empty()) {
      argv.insert(argv.begin() + 2, "--accept-weaker-lockdown=" +
                                        options_.accept_weaker_lockdown);
    }
    Line(absl::StrCat("test command (in the sandbox, under the same scope): ",
                      job_.file.test_command()));
    // Its output is for the person: on standard error, so that --json's
    // standard output holds the report alone.
    ASSIGN_OR_RETURN(ProgramRun ran,
                     RunProgram(argv, options_.err_fd, options_.err_fd));
    report_.set_test_exit_code(ran.exit_code);
    Audit("job_test", job_.file.test_command(),
          ran.exit_code == 0 ? "passed" : "failed",
          absl::StrCat("exit ", ran.exit_code));
    if (ran.exit_code != 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("the test command exited with ", ran.exit_code, ": ",
                       job_.file.test_command()));
    }
    return absl::OkStatus();
  }

  int Bad(const absl::Status& status) {
    Line(std::string(status.message()));
    report_.set_reason(std::string(status.message()));
    report_.set_status("failed");
    return Finish(kBadJob);
  }

  int Fail(const std::string& reason) {
    Line(absl::StrCat("job ", job_.name, " failed: ", reason));
    report_.set_reason(reason);
    report_.set_status("failed");
    return Finish(kFailed);
  }

  int Finish(int code) {
    report_.set_exit_code(code);
    Audit("job_end", report_.branch(), report_.status(), report_.reason());
    if (audit_ != nullptr) {
      absl::Status closed = audit_->Close();
      if (!closed.ok() && audit_error_.empty()) {
        audit_error_ = std::string(closed.message());
      }
      if (auditor_ != nullptr) auditor_->Stop().IgnoreError();
    }
    // A run whose decisions are not all in the audit log has not succeeded.
    if (!audit_error_.empty() && code == kSucceeded) {
      code = kFailed;
      report_.set_status("failed");
      report_.set_reason(absl::StrCat("the audit log: ", audit_error_));
      report_.set_exit_code(code);
    }
    if (!home_.empty() && !checkout_.empty() && !job_.name.empty()) {
      std::string last = LastReportFile(home_, checkout_, job_.name);
      if (MakeDirectories(Dirname(last), 0700).ok()) {
        WriteFileAtomically(last, MessageToJsonLineWithDefaults(report_) + "\n",
                            0600)
            .IgnoreError();
      }
    }
    if (options_.json) {
      WriteAll(options_.out_fd, MessageToJsonLineWithDefaults(report_) + "\n")
          .IgnoreError();
    } else {
      WriteAll(options_.out_fd, ReportText(report_)).IgnoreError();
    }
    return code;
  }

  const RunJobOptions& options_;
  std::string checkout_, home_;
  Job job_;
  JobWorktree worktree_;
  JobReport report_;
  std::string session_failure_;
  std::unique_ptr<ipc::HelperProcess> auditor_;
  std::unique_ptr<AuditSink> audit_;
  std::string audit_error_;
};

}  // namespace

int RunJob(const RunJobOptions& options) {
  ::signal(SIGPIPE, SIG_IGN);
  ForwardStopSignals();
  return Runner(options).Run();
}

std::string JobsFolder(const std::string& home, const std::string& checkout) {
  return JoinPath(JoinPath(GarudaFolder(home), "jobs"), ProjectKey(checkout));
}

std::string LastReportFile(const std::string& home, const std::string& checkout,
                           const std::string& job) {
  return JoinPath(JoinPath(JobsFolder(home, checkout), "last"),
                  absl::StrCat(job, ".json"));
}

absl::StatusOr<PostCheck> CheckWorktree(const std::string& worktree,
                                        const std::string& base_commit,
                                        const Job& job) {
  PostCheck check;
  ASSIGN_OR_RETURN(check.changes, ListWorktreeChanges(worktree, base_commit));
  std::vector<std::string> scope(job.file.write_scope().begin(),
                                 job.file.write_scope().end());
  check.outside = OutsideScope(check.changes, scope, job.whole_worktree);
  return check;
}

std::string ReportText(const JobReport& report) {
  std::string text = absl::StrCat("job ", report.job(), ": ", report.status());
  if (!report.reason().empty()) absl::StrAppend(&text, ": ", report.reason());
  absl::StrAppend(&text, "\n");
  if (!report.branch().empty()) {
    absl::StrAppend(&text, "  branch    ", report.branch(), "\n");
  }
  if (!report.commit().empty()) {
    absl::StrAppend(&text, "  commit    ", report.commit(), "\n");
  }
  if (!report.worktree().empty()) {
    absl::StrAppend(&text, "  worktree  ", report.worktree(), "\n");
  }
  if (report.changed_files_size() > 0) {
    absl::StrAppend(&text, "  changed   ",
                    ListLine({report.changed_files().begin(),
                              report.changed_files().end()}),
                    "\n");
  }
  if (report.outside_scope_size() > 0) {
    absl::StrAppend(&text, "  outside the scope: ",
                    ListLine({report.outside_scope().begin(),
                              report.outside_scope().end()}),
                    "\n");
  }
  for (const DeniedCall& denied : report.denied_calls()) {
    absl::StrAppend(&text, "  denied    ", denied.tool(), " ", denied.target(),
                    ": ", denied.why(), "\n");
  }
  absl::StrAppend(&text, "  tokens    ", report.tokens().input(), " in, ",
                  report.tokens().output(), " out\n");
  return text;
}

}  // namespace jobs
}  // namespace garuda
