// ModelClient's checks, retry delays and a request to a port where nothing
// listens (network errors), with a meter that only records. The streamed
// cases run against the scripted servers in tests/providers.
#include "lib/provider/client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace garuda {
namespace provider {
namespace {

class RecordingMeter : public RequestMeter {
 public:
  struct Record {
    ReserveAsk ask;
    bool settled = false;
    bool usage_reported = false;
  };
  class Held : public Reservation {
   public:
    Held(Record* record, int64_t tokens) : record_(record), tokens_(tokens) {}
    int64_t tokens() const override { return tokens_; }
    absl::StatusOr<int64_t> Settle(const TokenUsage&,
                                   bool usage_reported) override {
      record_->settled = true;
      record_->usage_reported = usage_reported;
      return tokens_;
    }

   private:
    Record* record_;
    int64_t tokens_;
  };

  absl::StatusOr<Grant> Reserve(const ReserveAsk& ask) override {
    records.push_back(std::make_unique<Record>(Record{ask}));
    Grant grant;
    grant.reservation = std::make_unique<Held>(
        records.back().get(), ask.input_tokens + ask.output_limit);
    grant.output_limit = ask.output_limit;
    return grant;
  }

  std::vector<std::unique_ptr<Record>> records;
};

// A loopback port with nothing listening: connections are refused.
int ClosedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t length = sizeof(address);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

ClientOptions Options(std::string provider, std::string base_url) {
  ClientOptions options;
  options.provider = std::move(provider);
  options.model = "m";
  options.base_url = std::move(base_url);
  return options;
}

ModelRequest Hello() {
  ModelRequest request;
  ChatMessage* message = request.add_messages();
  message->set_role("user");
  message->set_text("hello");
  return request;
}

TEST(ModelClientTest, NetworkErrorsAreRetriedEachWithItsOwnReservation) {
  ClientOptions options =
      Options("openai", absl::StrCat("http://127.0.0.1:", ClosedPort(), "/v1"));
  options.retry.max_attempts = 3;
  std::vector<absl::Duration> sleeps;
  options.sleep = [&](absl::Duration delay, const CancelFlag*) {
    sleeps.push_back(delay);
  };
  auto client = ModelClient::Create(options);
  ASSERT_TRUE(client.ok()) << client.status();
  RecordingMeter meter;
  CancelFlag cancel;
  ModelRequest request = Hello();
  request.set_purpose("compaction");
  auto response = (*client)->Send(request, &meter, {}, &cancel);
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(absl::StrContains(response.status().message(), "network error"))
      << response.status();
  ASSERT_EQ(meter.records.size(), 3u);
  EXPECT_EQ(meter.records[0]->ask.purpose, "compaction");
  EXPECT_EQ(meter.records[1]->ask.purpose, "retry");
  EXPECT_EQ(meter.records[1]->ask.request_id, "request-1#2");
  for (const auto& record : meter.records) {
    EXPECT_TRUE(record->settled);
    EXPECT_FALSE(record->usage_reported);
  }
  EXPECT_EQ(sleeps.size(), 2u);
}

TEST(ModelClientTest, ACancelledWaitEndsTheRequest) {
  ClientOptions options =
      Options("anthropic", absl::StrCat("http://127.0.0.1:", ClosedPort()));
  CancelFlag cancel;
  options.sleep = [&](absl::Duration, const CancelFlag* flag) {
    EXPECT_EQ(flag, &cancel);
    cancel.Cancel();  // Ctrl-C during the backoff
  };
  auto client = ModelClient::Create(options);
  ASSERT_TRUE(client.ok());
  RecordingMeter meter;
  auto response = (*client)->Send(Hello(), &meter, {}, &cancel);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(meter.records.size(), 1u);  // no second reservation
}

TEST(ModelClientTest, NoMeterNoRequest) {
  auto client = ModelClient::Create(Options("openai", "http://127.0.0.1:1/v1"));
  ASSERT_TRUE(client.ok());
  auto response = (*client)->Send(Hello(), nullptr, {}, nullptr);
  EXPECT_EQ(response.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(ModelClientTest, CreateChecksTheOptions) {
  EXPECT_FALSE(ModelClient::Create(Options("gemini", "")).ok());
  ClientOptions no_model = Options("openai", "");
  no_model.model.clear();
  EXPECT_FALSE(ModelClient::Create(no_model).ok());
  auto file = ModelClient::Create(Options("openai", "file:///etc/passwd"));
  ASSERT_FALSE(file.ok());
  EXPECT_TRUE(absl::StrContains(file.status().message(), "model.baseUrl"));

  // A key over plain http leaves this machine only over https.
  ClientOptions remote = Options("openai", "http://models.example.com/v1");
  remote.api_key = *ApiKey::FromString("sk-1", "test");
  auto refused = ModelClient::Create(remote);
  ASSERT_FALSE(refused.ok());
  EXPECT_FALSE(absl::StrContains(refused.status().message(), "sk-1"));
  ClientOptions local = Options("openai", "http://localhost:8080/v1");
  local.api_key = *ApiKey::FromString("sk-1", "test");
  EXPECT_TRUE(ModelClient::Create(local).ok());
  remote.api_key = ApiKey();
  EXPECT_TRUE(ModelClient::Create(remote).ok());

  auto defaults = ModelClient::Create(Options("anthropic", ""));
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ((*defaults)->Describe(),
            "anthropic m at https://api.anthropic.com");
}

TEST(RetryDelayTest, ServerAskedDelayOrExponentialBackoff) {
  RetryPolicy policy;
  const absl::Time now = absl::FromUnixSeconds(1445412480);
  EXPECT_EQ(RetryDelay(policy, 1, "", "", now), absl::Seconds(1));
  EXPECT_EQ(RetryDelay(policy, 3, "", "", now), absl::Seconds(4));
  EXPECT_EQ(RetryDelay(policy, 30, "", "", now), absl::Seconds(30));
  EXPECT_EQ(RetryDelay(policy, 1, "7", "", now), absl::Seconds(7));
  EXPECT_EQ(RetryDelay(policy, 1, "7", "250", now), absl::Milliseconds(250));
  EXPECT_EQ(RetryDelay(policy, 1, "100000", "", now), absl::Seconds(120));
  // Wed, 21 Oct 2015 07:28:00 GMT is 1445412480 + 0.
  EXPECT_EQ(RetryDelay(policy, 1, "Wed, 21 Oct 2015 07:28:30 GMT", "", now),
            absl::Seconds(30));
  EXPECT_EQ(RetryDelay(policy, 1, "garbage", "", now), absl::Seconds(1));
}

TEST(UrlForMessagesTest, DropsUserInfoAndQuery) {
  EXPECT_EQ(UrlForMessages("https://user:pw@host:1/v1?key=x#f"),
            "https://host:1/v1");
  EXPECT_EQ(UrlForMessages("http://host/a@b"), "http://host/a@b");
}

TEST(SleepUnlessCancelledTest, ACancelledFlagEndsTheWait) {
  CancelFlag cancel;
  cancel.Cancel();
  const absl::Time start = absl::Now();
  SleepUnlessCancelled(absl::Hours(1), &cancel);
  EXPECT_LT(absl::Now() - start, absl::Hours(1));
}

}  // namespace
}  // namespace provider
}  // namespace garuda
