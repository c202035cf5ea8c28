// The model clients against the scripted servers over real HTTP on loopback,
// metered by a real budget server (lib/budget) on a thread: every case runs
// for both wire formats.
#include <stdlib.h>

#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "lib/base/files.h"
#include "lib/budget/journal.h"
#include "lib/budget/meter.h"
#include "lib/budget/server.h"
#include "lib/ipc/channel.h"
#include "lib/provider/budget_meter.h"
#include "lib/provider/client.h"
#include "lib/provider/json.h"
#include "tests/providers/scripted_server.h"

namespace garuda {
namespace provider {
namespace {

using testing::ScriptedServer;
using testing::ServerKind;

constexpr char kKey[] = "sk-test-5ecret-K3y-0123456789abcdef";

class ProviderTest : public ::testing::TestWithParam<ServerKind> {
 protected:
  ServerKind kind() const { return GetParam(); }

  // A budget of `limit` tokens served on a thread, as garuda-budgeter would.
  void StartBudget(int64_t limit) {
    std::string templ = JoinPath(std::getenv("TEST_TMPDIR"), "budgetXXXXXX");
    home_ = ::mkdtemp(templ.data());
    journal_path_ = BudgetJournalFile(*GarudaSessionFolder(home_, "s"));
    auto ledger = budget::JournaledLedger::Open({journal_path_, limit});
    ASSERT_TRUE(ledger.ok()) << ledger.status();
    ledger_ = std::move(*ledger);
    auto pair = ipc::MakeSocketPair();
    ASSERT_TRUE(pair.ok()) << pair.status();
    budget_server_ = std::make_unique<budget::BudgetServer>(ledger_.get());
    budget_thread_ = std::thread([this, fd = pair->first.Release()] {
      budget_server_->Serve(ipc::Channel(UniqueFd(fd))).IgnoreError();
    });
    budget_client_ = std::make_unique<budget::BudgetClient>(
        ipc::Channel(std::move(pair->second)));
    meter_ = std::make_unique<BudgetRequestMeter>(budget_client_.get());
  }

  void StartServer(ProviderScript script) {
    auto server = ScriptedServer::Start(kind(), std::move(script));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
  }

  // A budget, and a server whose answer stops after its first text delta
  // until the client hangs up.
  void StartHeldStream() {
    StartBudget(100000);
    ProviderScript script;
    ScriptedReply* held = script.add_replies();
    held->set_text("First words, then the server waits");
    held->set_text_pieces(4);
    held->set_fault(ScriptedReply::HOLD);
    StartServer(script);
  }

  std::unique_ptr<ModelClient> Client(uint32_t max_tokens = 1000,
                                      std::string key = "") {
    ClientOptions options;
    options.provider = testing::KindName(kind());
    options.model = "scripted-model";
    options.base_url = server_->base_url();
    options.max_tokens = max_tokens;
    options.min_output_tokens = 100;
    if (!key.empty()) options.api_key = *ApiKey::FromString(key, "test key");
    // Backoff waits are recorded, not slept.
    options.sleep = [this](absl::Duration delay, const CancelFlag*) {
      sleeps_.push_back(delay);
    };
    auto client = ModelClient::Create(std::move(options));
    EXPECT_TRUE(client.ok()) << client.status();
    return std::move(*client);
  }

  static ModelRequest Ask(const std::string& question) {
    ModelRequest request;
    request.set_system("You are a test.");
    ChatMessage* message = request.add_messages();
    message->set_role("user");
    message->set_text(question);
    request.set_request_id("r1");
    return request;
  }

  garuda::budget::BudgetStatus BudgetStatus() {
    auto status = budget_client_->Status();
    EXPECT_TRUE(status.ok()) << status.status();
    return *status;
  }
  const garuda::budget::AgentUsage& Top(
      const garuda::budget::BudgetStatus& status) {
    return status.agents(0);
  }

  // max_tokens of the request the server received.
  int64_t SentMaxTokens(size_t i) {
    auto body = ParseJson(server_->requests().at(i).body(), "request");
    EXPECT_TRUE(body.ok());
    return *TokenCountMember(*body, "max_tokens");
  }

  void TearDown() override {
    server_.reset();
    meter_.reset();
    budget_client_.reset();  // the budget server sees the session end
    if (budget_thread_.joinable()) budget_thread_.join();
  }

  std::string home_, journal_path_;
  std::unique_ptr<budget::JournaledLedger> ledger_;
  std::unique_ptr<budget::BudgetServer> budget_server_;
  std::thread budget_thread_;
  std::unique_ptr<budget::BudgetClient> budget_client_;
  std::unique_ptr<BudgetRequestMeter> meter_;
  std::unique_ptr<ScriptedServer> server_;
  std::vector<absl::Duration> sleeps_;
};

ScriptedReply Answer(const std::string& text, int64_t input, int64_t output) {
  ScriptedReply reply;
  reply.set_text(text);
  reply.set_text_pieces(4);
  reply.set_input_tokens(input);
  reply.set_output_tokens(output);
  return reply;
}

TEST_P(ProviderTest, PlainAnswerIsStreamedAndSettledToItsUsage) {
  StartBudget(100000);
  ProviderScript script;
  *script.add_replies() = Answer("Hello from the scripted model.", 120, 9);
  StartServer(script);
  auto client = Client();
  std::vector<std::string> deltas;
  StreamCallbacks callbacks;
  callbacks.on_text = [&](absl::string_view text) {
    deltas.emplace_back(text);
  };
  CancelFlag cancel;
  auto response =
      client->Send(Ask("Say hello."), meter_.get(), callbacks, &cancel);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->text(), "Hello from the scripted model.");
  EXPECT_EQ(deltas.size(), 4u);
  EXPECT_EQ(absl::StrJoin(deltas, ""), response->text());
  EXPECT_EQ(response->stop_reason(), "end_turn");
  EXPECT_TRUE(response->usage_reported());
  EXPECT_EQ(response->usage().input_tokens(), 120);
  EXPECT_EQ(response->usage().output_tokens(), 9);
  EXPECT_EQ(response->attempts(), 1u);
  EXPECT_EQ(response->charged_tokens(), 129);
  EXPECT_EQ(response->model(), "scripted");

  const auto status = BudgetStatus();
  EXPECT_EQ(status.spent(), 129);
  EXPECT_EQ(status.reserved(), 0);
  EXPECT_EQ(Top(status).requests(), 1);
  EXPECT_EQ(Top(status).unreported(), 0);

  ASSERT_EQ(server_->request_count(), 1u);
  const RecordedRequest sent = server_->requests()[0];
  auto body = ParseJson(sent.body(), "request");
  ASSERT_TRUE(body.ok());
  EXPECT_TRUE(Member(*body, "stream")->bool_value());
  EXPECT_EQ(StringMember(*body, "model"), "scripted-model");
  EXPECT_EQ(SentMaxTokens(0), 1000);
  if (kind() == ServerKind::kOpenAi) {
    EXPECT_TRUE(Member(*ObjectMember(*body, "stream_options"), "include_usage")
                    ->bool_value());
    EXPECT_EQ(sent.headers().count("authorization"), 0u);  // no key: none
  } else {
    EXPECT_EQ(sent.headers().at("anthropic-version"), "2023-06-01");
    EXPECT_EQ(sent.headers().count("x-api-key"), 0u);
  }
}

TEST_P(ProviderTest, ToolCallIsAssembledFromItsDeltas) {
  StartBudget(100000);
  ProviderScript script;
  ScriptedReply* reply = script.add_replies();
  *reply = Answer("Let me look.", 200, 30);
  ScriptedToolCall* call = reply->add_tool_calls();
  call->set_id("call_7");
  call->set_name("bash");
  call->set_arguments_json(R"({"command": "ls -la \"src\"", "timeout": 30})");
  call->set_argument_pieces(7);
  ScriptedToolCall* second = reply->add_tool_calls();
  second->set_id("call_8");
  second->set_name("read_file");
  second->set_arguments_json(R"({"path": "README.md"})");
  second->set_argument_pieces(3);
  StartServer(script);

  ModelRequest request = Ask("List the files.");
  ToolDefinition* tool = request.add_tools();
  tool->set_name("bash");
  tool->set_description("Runs a command.");
  tool->set_parameters_json(
      R"({"type": "object", "properties": {"command": {"type": "string"}}})");
  CancelFlag cancel;
  auto response = Client()->Send(request, meter_.get(), {}, &cancel);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->text(), "Let me look.");
  EXPECT_EQ(response->stop_reason(), "tool_use");
  ASSERT_EQ(response->tool_calls_size(), 2);
  EXPECT_EQ(response->tool_calls(0).id(), "call_7");
  EXPECT_EQ(response->tool_calls(0).name(), "bash");
  EXPECT_EQ(response->tool_calls(0).arguments_json(),
            R"({"command": "ls -la \"src\"", "timeout": 30})");
  EXPECT_EQ(response->tool_calls(1).id(), "call_8");
  EXPECT_EQ(response->tool_calls(1).arguments_json(),
            R"({"path": "README.md"})");

  // The tool went out in the provider's own shape.
  auto body = ParseJson(server_->requests()[0].body(), "request");
  ASSERT_TRUE(body.ok());
  const Value& sent_tool = ListMember(*body, "tools")->values(0);
  if (kind() == ServerKind::kOpenAi) {
    EXPECT_EQ(StringMember(*ObjectMember(sent_tool, "function"), "name"),
              "bash");
  } else {
    EXPECT_EQ(StringMember(sent_tool, "name"), "bash");
    EXPECT_NE(ObjectMember(sent_tool, "input_schema"), nullptr);
  }
}

// A stream without a (complete, valid) usage keeps the whole reservation.
TEST_P(ProviderTest, MissingPartialOrInvalidUsageChargesTheWholeReservation) {
  for (const auto mode :
       {ScriptedReply::NONE, ScriptedReply::PARTIAL, ScriptedReply::INVALID}) {
    SCOPED_TRACE(ScriptedReply::UsageMode_Name(mode));
    TearDown();
    StartBudget(100000);
    ProviderScript script;
    ScriptedReply* reply = script.add_replies();
    *reply = Answer("No usage here.", 50, 5);
    reply->set_usage(mode);
    StartServer(script);
    CancelFlag cancel;
    auto response = Client()->Send(Ask("Hi."), meter_.get(), {}, &cancel);
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(response->text(), "No usage here.");
    EXPECT_FALSE(response->usage_reported());
    const auto status = BudgetStatus();
    // The reservation: the request's input estimate + max_tokens 1000.
    EXPECT_GT(response->charged_tokens(), 1000);
    EXPECT_EQ(status.spent(), response->charged_tokens());
    EXPECT_EQ(Top(status).unreported(), response->charged_tokens());
  }
}

TEST_P(ProviderTest, ErrorAfterHttp200IsRetriedWithANewReservation) {
  StartBudget(100000);
  ProviderScript script;
  ScriptedReply* broken = script.add_replies();
  *broken = Answer("Half an ans", 80, 3);
  broken->set_fault(ScriptedReply::ERROR_EVENT);
  broken->set_error_type("overloaded_error");
  broken->set_error_message("Overloaded");
  *script.add_replies() = Answer("The whole answer.", 80, 4);
  StartServer(script);
  std::vector<RetryNotice> notices;
  StreamCallbacks callbacks;
  callbacks.on_retry = [&](const RetryNotice& notice) {
    notices.push_back(notice);
  };
  CancelFlag cancel;
  auto response = Client()->Send(Ask("Hi."), meter_.get(), callbacks, &cancel);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->text(), "The whole answer.");
  EXPECT_EQ(response->attempts(), 2u);
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_EQ(notices[0].next_attempt, 2);
  EXPECT_TRUE(absl::StrContains(notices[0].reason, "after HTTP 200"))
      << notices[0].reason;
  EXPECT_TRUE(absl::StrContains(notices[0].reason, "Overloaded"));
  ASSERT_EQ(sleeps_.size(), 1u);
  EXPECT_EQ(sleeps_[0], absl::Seconds(1));  // the first backoff
  EXPECT_EQ(server_->request_count(), 2u);

  const auto status = BudgetStatus();
  EXPECT_EQ(Top(status).requests(), 2);  // each attempt reserved
  // The failed attempt had no complete usage: its reservation stays spent.
  const int64_t first_reservation = Top(status).unreported();
  EXPECT_GT(first_reservation, 1000);
  EXPECT_EQ(status.spent(), first_reservation + 84);
  EXPECT_EQ(response->charged_tokens(), first_reservation + 84);
}

TEST_P(ProviderTest, RateLimitThenSuccessHonoursRetryAfter) {
  StartBudget(100000);
  ProviderScript script;
  ScriptedReply* limited = script.add_replies();
  limited->set_http_status(429);
  limited->set_retry_after("7");
  limited->set_error_message("Rate limit reached");
  *script.add_replies() = Answer("Now it works.", 60, 4);
  StartServer(script);
  CancelFlag cancel;
  auto response = Client()->Send(Ask("Hi."), meter_.get(), {}, &cancel);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->text(), "Now it works.");
  EXPECT_EQ(response->attempts(), 2u);
  ASSERT_EQ(sleeps_.size(), 1u);
  EXPECT_EQ(sleeps_[0], absl::Seconds(7));
  const auto status = BudgetStatus();
  EXPECT_EQ(Top(status).requests(), 2);
  EXPECT_EQ(server_->request_count(), 2u);
}

TEST_P(ProviderTest, OverloadedAndDroppedStreamsAreRetriedUntilTheyGiveUp) {
  StartBudget(1000000);
  ProviderScript script;
  ScriptedReply* overloaded = script.add_replies();
  overloaded->set_http_status(kind() == ServerKind::kAnthropic ? 529 : 503);
  overloaded->set_error_type("overloaded_error");
  ScriptedReply* dropped = script.add_replies();
  *dropped = Answer("cut off here", 10, 1);
  dropped->set_fault(ScriptedReply::DROP);
  *script.add_replies() = *overloaded;
  *script.add_replies() = *overloaded;
  StartServer(script);
  CancelFlag cancel;
  auto response = Client()->Send(Ask("Hi."), meter_.get(), {}, &cancel);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(response.status().message(), "gave up after 4"))
      << response.status();
  EXPECT_EQ(server_->request_count(), 4u);
  // 1 s, 2 s, 4 s between the four attempts.
  EXPECT_EQ(sleeps_,
            (std::vector<absl::Duration>{absl::Seconds(1), absl::Seconds(2),
                                         absl::Seconds(4)}));
  const auto status = BudgetStatus();
  EXPECT_EQ(Top(status).requests(), 4);
  EXPECT_EQ(status.reserved(), 0);
  EXPECT_EQ(status.spent(), Top(status).unreported());
}

TEST_P(ProviderTest, ABadRequestIsNotRetried) {
  StartBudget(100000);
  ProviderScript script;
  ScriptedReply* bad = script.add_replies();
  bad->set_http_status(400);
  bad->set_error_type("invalid_request_error");
  bad->set_error_message("max_tokens: too large");
  StartServer(script);
  CancelFlag cancel;
  auto response = Client()->Send(Ask("Hi."), meter_.get(), {}, &cancel);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(response.status().message(),
                                "HTTP 400: invalid_request_error: max_tokens"))
      << response.status();
  EXPECT_EQ(server_->request_count(), 1u);
  EXPECT_TRUE(sleeps_.empty());
}

TEST_P(ProviderTest, CancelFromTheTextCallbackStopsTheStreamInFlight) {
  StartHeldStream();
  CancelFlag cancel;
  StreamCallbacks callbacks;
  std::string seen;
  callbacks.on_text = [&](absl::string_view text) {
    seen.append(text.data(), text.size());
    cancel.Cancel();  // as Ctrl-C would
  };
  auto response = Client()->Send(Ask("Hi."), meter_.get(), callbacks, &cancel);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), absl::StatusCode::kCancelled);
  EXPECT_TRUE(absl::StrContains(response.status().message(), "stays spent"))
      << response.status();
  EXPECT_FALSE(seen.empty());
  // The connection was closed: the server saw the hang-up.
  EXPECT_TRUE(server_->WaitForHangUp(absl::Seconds(30)));
  const auto status = BudgetStatus();
  EXPECT_EQ(status.reserved(), 0);
  EXPECT_GT(status.spent(), 1000);  // the whole reservation
  EXPECT_EQ(Top(status).unreported(), status.spent());
  EXPECT_TRUE(sleeps_.empty());
}

TEST_P(ProviderTest, CancelFromAnotherThreadStopsASilentStream) {
  StartHeldStream();
  CancelFlag cancel;
  absl::Notification first_text;
  StreamCallbacks callbacks;
  callbacks.on_text = [&](absl::string_view) {
    if (!first_text.HasBeenNotified()) first_text.Notify();
  };
  // The server is silent after the first delta; the canceller runs only
  // once that delta arrived, so the stream is in flight.
  std::thread canceller([&] {
    first_text.WaitForNotification();
    cancel.Cancel();
  });
  auto response = Client()->Send(Ask("Hi."), meter_.get(), callbacks, &cancel);
  canceller.join();
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), absl::StatusCode::kCancelled);
  EXPECT_TRUE(server_->WaitForHangUp(absl::Seconds(30)));
  EXPECT_EQ(BudgetStatus().reserved(), 0);
}

TEST_P(ProviderTest, ABudgetTooSmallSendsNoRequest) {
  StartBudget(100);
  ProviderScript script;
  *script.add_replies() = Answer("never sent", 10, 1);
  StartServer(script);
  CancelFlag cancel;
  auto response = Client()->Send(Ask("Hi."), meter_.get(), {}, &cancel);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StartsWith(response.status().message(), "token_budget"))
      << response.status();
  EXPECT_TRUE(absl::StrContains(response.status().message(), "token budget"));
  EXPECT_TRUE(
      absl::StrContains(response.status().message(), "100 tokens left"));
  EXPECT_EQ(server_->request_count(), 0u);
  EXPECT_EQ(BudgetStatus().spent(), 0);

  // The negative control: the same request with a budget that fits is sent.
  TearDown();
  StartBudget(100000);
  StartServer(script);
  response = Client()->Send(Ask("Hi."), meter_.get(), {}, &cancel);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(server_->request_count(), 1u);
}

TEST_P(ProviderTest, MaxTokensIsClampedToWhatIsLeft) {
  // 5000 input (the caller's estimate) + 4096 output would not fit in 6200;
  // the request goes out with max_tokens 1200 and reserves exactly 6200.
  StartBudget(6200);
  ProviderScript script;
  ScriptedReply* reply = script.add_replies();
  *reply = Answer("short", 10, 1);
  reply->set_usage(ScriptedReply::NONE);
  StartServer(script);
  ModelRequest request = Ask("Hi.");
  request.set_input_tokens_hint(5000);
  CancelFlag cancel;
  auto response = Client(4096)->Send(request, meter_.get(), {}, &cancel);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->max_tokens(), 1200u);
  EXPECT_EQ(SentMaxTokens(0), 1200);
  EXPECT_EQ(response->charged_tokens(), 6200);  // unreported: all of it
  EXPECT_EQ(BudgetStatus().left(), 0);

  // Now nothing is left: under min_output_tokens (100) fits, so no request.
  auto refused = Client(4096)->Send(request, meter_.get(), {}, &cancel);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::StartsWith(refused.status().message(), "token_budget"));
  EXPECT_EQ(server_->request_count(), 1u);
}

TEST_P(ProviderTest, ARetryTheBudgetRefusesEndsWithTokenBudget) {
  // Room for one attempt only: the 429 is retried, the retry's reservation
  // is refused, and no second request goes out.
  StartBudget(5000 + 1000 + 50);
  ProviderScript script;
  ScriptedReply* limited = script.add_replies();
  limited->set_http_status(429);
  *script.add_replies() = Answer("never sent", 10, 1);
  StartServer(script);
  ModelRequest request = Ask("Hi.");
  request.set_input_tokens_hint(5000);
  CancelFlag cancel;
  auto response = Client()->Send(request, meter_.get(), {}, &cancel);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StartsWith(response.status().message(), "token_budget"))
      << response.status();
  EXPECT_EQ(server_->request_count(), 1u);
  EXPECT_EQ(BudgetStatus().spent(), 6000);
}

TEST_P(ProviderTest, TheKeyIsSentButNeverInAnErrorOrTheJournal) {
  StartBudget(100000);
  ProviderScript script;
  // A server that echoes the key, as some do in their error messages.
  ScriptedReply* echo = script.add_replies();
  echo->set_http_status(503);
  echo->set_error_message(absl::StrCat("busy; your key ", kKey));
  ScriptedReply* denied = script.add_replies();
  denied->set_http_status(401);
  denied->set_error_type("authentication_error");
  denied->set_error_message(absl::StrCat("Incorrect API key provided: ", kKey));
  StartServer(script);
  std::vector<std::string> notices;
  StreamCallbacks callbacks;
  callbacks.on_retry = [&](const RetryNotice& notice) {
    notices.push_back(notice.reason);
  };
  CancelFlag cancel;
  auto response =
      Client(1000, kKey)->Send(Ask("Hi."), meter_.get(), callbacks, &cancel);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), absl::StatusCode::kUnauthenticated);
  const std::string message(response.status().message());
  EXPECT_FALSE(absl::StrContains(message, kKey)) << message;
  EXPECT_TRUE(
      absl::StrContains(message, "Incorrect API key provided: [redacted]"))
      << message;
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_FALSE(absl::StrContains(notices[0], kKey)) << notices[0];
  EXPECT_TRUE(absl::StrContains(notices[0], "[redacted]"));

  // Negative control: the key did go to the server, and the server's answer
  // did hold it, so the checks above can fail.
  const RecordedRequest sent = server_->requests().at(0);
  if (kind() == ServerKind::kOpenAi) {
    EXPECT_EQ(sent.headers().at("authorization"),
              absl::StrCat("Bearer ", kKey));
  } else {
    EXPECT_EQ(sent.headers().at("x-api-key"), kKey);
  }
  EXPECT_FALSE(absl::StrContains(sent.body(), kKey));
  EXPECT_TRUE(
      absl::StrContains(testing::Render(kind(), *denied).pieces[0], kKey));

  // Nor in the budget journal.
  auto journal = ReadFileToString(journal_path_);
  ASSERT_TRUE(journal.ok()) << journal.status();
  EXPECT_FALSE(journal->empty());
  EXPECT_FALSE(absl::StrContains(*journal, kKey));
}

INSTANTIATE_TEST_SUITE_P(BothWireFormats, ProviderTest,
                         ::testing::Values(ServerKind::kOpenAi,
                                           ServerKind::kAnthropic),
                         [](const auto& info) {
                           return std::string(testing::KindName(info.param));
                         });

}  // namespace
}  // namespace provider
}  // namespace garuda
