#include "bench/budget/quiet_session.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace garuda {
namespace budget {

class QuietSession::Silent : public agent::Interaction {
 public:
  bool CanAsk() const override { return false; }
  void ShowText(absl::string_view) override {}
  void ShowRetry(absl::string_view) override {}
  void ShowToolCall(const agent::ToolCallView&) override {}
  void ShowToolOutcome(const agent::ToolOutcomeView&) override {}
  void ShowNotice(absl::string_view) override {}
  agent::PermissionAnswer AskPermission(
      const agent::PermissionQuestion&) override {
    return agent::PermissionAnswer::kNo;
  }
  Answer AskChangeSet(const ChangeSet&, const Rendered&) override {
    return Answer::kDiscard;
  }
};

class QuietSession::NoAudit : public AuditSink {
 public:
  absl::Status Record(const audit::AuditEvent&) override {
    return absl::OkStatus();
  }
  absl::Status Close() override { return absl::OkStatus(); }
};

QuietSession::QuietSession()
    : person_(std::make_unique<Silent>()),
      audit_(std::make_unique<NoAudit>()) {}

QuietSession::~QuietSession() { Stop().IgnoreError(); }

absl::StatusOr<std::unique_ptr<QuietSession>> QuietSession::Start(
    const QuietSessionOptions& options) {
  std::unique_ptr<QuietSession> out(new QuietSession());
  ipc::HelperOptions helper;
  helper.argv = {options.budgeter_path, "serve", "--channel-fd=3",
                 absl::StrCat("--session=", options.session_id),
                 absl::StrCat("--limit=", options.limit)};
  helper.channel = BudgeterChannelOptions();
  auto budgeter = ipc::HelperProcess::Spawn(helper);
  if (!budgeter.ok()) return budgeter.status();
  out->budgeter_ = std::move(*budgeter);
  out->budget_ = std::make_unique<BudgetClient>(out->budgeter_.get());

  auto project = Project::Open(options.project_root);
  if (!project.ok()) return project.status();
  out->project_ = std::move(*project);
  provider::ClientOptions client;
  client.provider = "openai";
  client.model = "bench";
  client.base_url = options.base_url;
  client.max_tokens = options.max_tokens;
  if (options.min_output_tokens > 0) {
    client.min_output_tokens = options.min_output_tokens;
  }
  auto model = provider::ModelClient::Create(client);
  if (!model.ok()) return model.status();
  out->model_ = std::move(*model);

  agent::SessionConfig config;
  config.session_id = options.session_id;
  config.description.set_mode("direct");
  config.description.set_sandboxed(true);
  config.agents = options.agents;
  agent::SessionParts parts;
  parts.interaction = out->person_.get();
  parts.project = out->project_.get();
  parts.permissions = &out->permissions_;
  parts.audit = out->audit_.get();
  parts.budget = out->budget_.get();
  parts.model = out->model_.get();
  auto session = agent::Session::Start(std::move(config), parts);
  if (!session.ok()) return session.status();
  out->session_ = std::move(*session);
  return out;
}

absl::Status QuietSession::Stop() {
  session_.reset();
  if (budgeter_ == nullptr) return absl::OkStatus();
  absl::Status stopped = budgeter_->Stop();
  budgeter_.reset();
  return stopped;
}

}  // namespace budget
}  // namespace garuda
