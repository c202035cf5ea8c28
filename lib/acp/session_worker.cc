#include "lib/acp/session_worker.h"

#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "lib/acp/acp_interaction.h"
#include "lib/acp/json_rpc.h"
#include "lib/acp/mcp_servers.h"
#include "lib/acp/prompt.h"
#include "lib/acp/worker_channel.h"
#include "lib/acp/worker_link.h"
#include "lib/agent/agent.h"
#include "lib/agent/mcp_servers.h"
#include "lib/agent/session.h"
#include "lib/agent/session_setup.h"
#include "lib/base/cancel_flag.h"

namespace garuda {
namespace acp {
namespace {

void Log(absl::string_view line) {
  std::cerr << "garuda-agent acp-session: " << line << "\n";
}

// What the reader thread hands to the turn loop: the next prompt, or the
// end of the front's socket.
class PromptQueue {
 public:
  // A prompt is queued or running (one turn at a time).
  bool busy() {
    std::lock_guard<std::mutex> lock(mutex_);
    return busy_;
  }
  void Push(Message prompt) {
    std::lock_guard<std::mutex> lock(mutex_);
    busy_ = true;
    prompt_ = std::move(prompt);
    changed_.notify_all();
  }
  void End() {
    std::lock_guard<std::mutex> lock(mutex_);
    ended_ = true;
    changed_.notify_all();
  }
  // The next prompt; nullopt at the end.
  std::optional<Message> Pop() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return ended_ || prompt_.has_value(); });
    if (!prompt_) return std::nullopt;
    std::optional<Message> prompt = std::move(prompt_);
    prompt_.reset();
    return prompt;
  }
  void Done() {
    std::lock_guard<std::mutex> lock(mutex_);
    busy_ = false;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<Message> prompt_;
  bool busy_ = false;
  bool ended_ = false;
};

// ACP's stopReason of a turn. A budget refusal ends the turn as an output
// limit does (its message was streamed as text before).
const char* StopReason(const agent::TurnOutcome& outcome) {
  const std::string& model = outcome.model_stop_reason;
  switch (outcome.end) {
    case agent::TurnEnd::kAnswered:
      if (model == "max_tokens") return "max_tokens";
      if (model == "refusal" || model == "content_filter") return "refusal";
      return "end_turn";
    case agent::TurnEnd::kBudget:
      return "max_tokens";
    case agent::TurnEnd::kCancelled:
      return "cancelled";
    case agent::TurnEnd::kFailed:
      break;
  }
  if (outcome.step_limit) return "max_turn_requests";
  return "end_turn";
}

// The first request: session/new {cwd, mcpServers} or session/load
// {sessionId, cwd, mcpServers}.
struct Opening {
  Message request;
  bool load = false;
  std::string cwd;
  std::string session_id;
  Value mcp_servers;  // the editor's list, as sent
};

absl::StatusOr<Opening> ReadOpening(LineReader& reader) {
  absl::StatusOr<std::optional<LineReader::Line>> line = reader.ReadLine();
  if (!line.ok()) return line.status();
  if (!line->has_value() || (*line)->too_long) {
    return absl::InvalidArgumentError("no session/new or session/load");
  }
  absl::StatusOr<FrontMessage> parsed = ParseFromFront(**line);
  if (!parsed.ok()) return parsed.status();
  Opening opening;
  opening.request = std::move(parsed->message);
  if (parsed->verb != FromFrontVerb::kOpen) {
    return absl::InvalidArgumentError(
        absl::StrCat("the first request is ", opening.request.method));
  }
  opening.load = opening.request.method == "session/load";
  const Value& params = opening.request.params;
  opening.cwd = StringField(params, "cwd").value_or("");
  opening.session_id = StringField(params, "sessionId").value_or("");
  if (const Value* servers = Field(params, "mcpServers")) {
    opening.mcp_servers = *servers;
  }
  return opening;
}

}  // namespace

// The worker between its open and its serve: the link to the front, the
// request that opened the session, the opened and started session.
struct SessionWorker::Parts {
  explicit Parts(int fd) : link(fd), reader(fd, kMaxRelayLineBytes) {}
  WorkerLink link;
  LineReader reader;
  Opening opening;
  agent::AgentOptions agent;
  agent::OpenedSession opened;
  std::unique_ptr<agent::StartedSession> started;
};

absl::StatusOr<std::unique_ptr<SessionWorker>> SessionWorker::Open(
    const WorkerOptions& options) {
  ::signal(SIGPIPE, SIG_IGN);
  // The editor's Ctrl-C reaches the front; a session ends by its socket.
  ::signal(SIGINT, SIG_IGN);
  std::unique_ptr<SessionWorker> worker(new SessionWorker(options));
  Parts& parts = *worker->parts_;

  // 1. The request that opens the session (the front has checked its
  //    method, cwd and id).
  absl::StatusOr<Opening> opening = ReadOpening(parts.reader);
  if (!opening.ok()) {
    Log(opening.status().message());
    return opening.status();
  }
  parts.opening = *std::move(opening);
  auto fail = [&](int code, const absl::Status& status) {
    worker->Answer(code, status.message());
    return status;
  };

  // 2. Open the session in the editor's folder, as a terminal session
  //    would; the helpers take relayed answers (nobody at a terminal).
  agent::AgentOptions& agent = parts.agent;
  agent = options.agent;
  agent.project = parts.opening.cwd;
  agent.resume_id = parts.opening.load ? parts.opening.session_id : "";
  agent.one_shot = false;
  agent.consent = "relayed";
  agent.in_fd = -1;
  absl::StatusOr<agent::OpenedSession> opened = agent::OpenSession(agent);
  if (!opened.ok()) {
    return fail(parts.opening.load && absl::IsNotFound(opened.status())
                    ? kResourceNotFound
                    : kInvalidParams,
                opened.status());
  }
  parts.opened = *std::move(opened);
  // 3. Start what a locked-down agent could not (the helpers, the code
  //    tools, libcurl); main.cc locks down next.
  absl::StatusOr<std::unique_ptr<agent::StartedSession>> started =
      agent::StartSession(agent, parts.opened);
  if (!started.ok()) return fail(kInternalError, started.status());
  parts.started = *std::move(started);
  return worker;
}

SessionWorker::SessionWorker(const WorkerOptions& options)
    : fd_(options.channel_fd),
      parts_(std::make_unique<Parts>(options.channel_fd)) {}

SessionWorker::~SessionWorker() = default;

agent::AgentLockdown SessionWorker::Lockdown() const {
  return agent::SessionLockdown(parts_->agent, parts_->opened);
}

void SessionWorker::Answer(int code, absl::string_view message) {
  Log(message);
  parts_->link.Send(
      ErrorLine(parts_->opening.request.id, {code, std::string(message)}));
}

int SessionWorker::Refuse(const absl::Status& why) {
  Answer(kInternalError,
         absl::StrCat("the session did not start: ", why.message()));
  return agent::EndSession(parts_->agent, *parts_->started, 1);
}

int SessionWorker::Serve(const std::string& lockdown_summary) {
  Parts& p = *parts_;
  const int fd = fd_;
  WorkerLink& link = p.link;
  LineReader& reader = p.reader;
  const Opening* opening = &p.opening;
  agent::OpenedSession* opened = &p.opened;
  std::unique_ptr<agent::StartedSession>* started = &p.started;
  const Value id = opening->request.id;
  auto fail = [&](int code, absl::string_view message) {
    Answer(code, message);
    return 1;
  };
  auto stop = [&](int code) {
    return agent::EndSession(p.agent, **started, code);
  };

  // 4. Start the session; the strict profile without a sandbox ends here
  //    with its reason and its fix.
  AcpInteraction interaction(&link, opened->project.get(),
                             opened->settings.token_limit);
  interaction.set_session_id(opened->session_id);
  agent::SessionParts parts = agent::SessionPartsFor(
      *opened, *(*started)->helpers, (*started)->code_tools.get());
  parts.interaction = &interaction;
  parts.events = &interaction.events();
  agent::SessionConfig config = agent::SessionConfigFor(
      *opened, (*started)->description, lockdown_summary);
  // The editor's servers start as the settings' do: by the stager, in the
  // session's sandbox.
  McpServerPlan mcp_plan = (*started)->mcp_plan;
  AddEditorMcpServers(&opening->mcp_servers, &mcp_plan);
  std::unique_ptr<agent::McpServers> mcp = agent::StartSessionMcp(
      mcp_plan, parts.stager, (*started)->description,
      opened->project->root(), &config.notices);
  parts.mcp = mcp.get();
  absl::StatusOr<std::unique_ptr<agent::Session>> session =
      agent::Session::Start(std::move(config), parts);
  if (!session.ok()) {
    fail(kInternalError, session.status().message());
    return stop(1);
  }
  // Replayed as restored: a call the ended session left without a result
  // shows the result the model now sees ("Not run: ...").
  (*session)->Restore(std::move(opened->resumed));
  interaction.events().set_tools(&(*session)->tools());
  interaction.events().Replay((*session)->messages());
  Value result = Object();
  if (!opening->load) Set(result, "sessionId", Str(opened->session_id));
  link.Send(ResultLine(id, result));
  std::string notices = interaction.TakeNotices();
  interaction.set_in_turn(true);
  if (!notices.empty()) interaction.ShowText(notices);

  // 5. Serve: the reader thread takes the front's lines (prompts, cancel,
  //    answers to our questions); this thread runs the turns.
  CancelFlag cancel;
  PromptQueue prompts;
  // The front's messages to a running session, by verb (worker_channel.h);
  // a line that is not one is ignored.
  std::thread reading([&] {
    while (true) {
      absl::StatusOr<std::optional<LineReader::Line>> line = reader.ReadLine();
      if (!line.ok() || !line->has_value()) break;
      absl::StatusOr<FrontMessage> parsed = ParseFromFront(**line);
      if (!parsed.ok()) continue;
      Message& message = parsed->message;
      switch (parsed->verb) {
        case FromFrontVerb::kResponse:
          link.Deliver(message);
          break;
        case FromFrontVerb::kCancel:
          cancel.Cancel();
          link.CancelTurn();
          break;
        case FromFrontVerb::kPrompt:
          if (prompts.busy()) {
            // Refused without touching the running turn's cancel.
            link.Send(ErrorLine(message.id,
                                {kInvalidRequest,
                                 "a prompt of this session is still running; "
                                 "send session/cancel first"}));
            break;
          }
          // Reset here, not when the turn starts: a cancel that follows the
          // prompt at once must not be lost. Only this thread makes the
          // queue busy, so it is still free for the Push.
          cancel.Reset();
          link.BeginTurn();
          prompts.Push(std::move(message));
          break;
        case FromFrontVerb::kOpen:  // the session is open already
        case FromFrontVerb::kOtherRequest:
          link.Send(
              ErrorLine(message.id,
                        {kMethodNotFound,
                         absl::StrCat("no method \"", message.method, "\"")}));
          break;
      }
    }
    cancel.Cancel();
    link.End();
    prompts.End();
  });

  int code = 0;
  while (std::optional<Message> prompt = prompts.Pop()) {
    absl::StatusOr<std::string> text = PromptText(prompt->params);
    if (!text.ok()) {
      link.Send(ErrorLine(
          prompt->id, {kInvalidParams, std::string(text.status().message())}));
      prompts.Done();
      continue;
    }
    interaction.events().StartTurn();
    absl::StatusOr<agent::TurnOutcome> outcome =
        (*session)->RunTurn(*text, &cancel);
    if (!outcome.ok()) {
      // A helper is gone: the session cannot go on.
      link.Send(
          ErrorLine(prompt->id,
                    {kInternalError, std::string(outcome.status().message())}));
      Log(outcome.status().message());
      code = 1;
      prompts.Done();
      break;
    }
    Value response = Object();
    Set(response, "stopReason", Str(StopReason(*outcome)));
    link.Send(ResultLine(prompt->id, response));
    prompts.Done();
  }
  // The front closed the socket, or a helper died: then the socket is shut
  // so that the reader thread ends too. The session is ended before this
  // process exits and closes the socket, so that a front that waits for the
  // end of its workers' sockets knows the session's last audit line and
  // journal line are written.
  if (code != 0) ::shutdown(fd, SHUT_RDWR);
  reading.join();
  if (code == 0 || (*started)->helpers->CheckAlive().ok()) {
    (*session)->End().IgnoreError();
  }
  return stop(code);
}

}  // namespace acp
}  // namespace garuda
